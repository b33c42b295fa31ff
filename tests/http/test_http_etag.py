"""The raw layer's ETags (row 29): reads expose the strong ETag, writes send ``If-Match``,
and a 412 is a ``ConcurrentModificationError`` naming the object, from the one
translation table; against the emulator's ``etag`` dialect, the default dialect and a
scripted server (a 412 after a repeated PUT)."""

from __future__ import annotations

import json

import pytest
from scripted_service import API, make_client

from mddframes import Client
from mddframes.emulator import serve
from mddframes.errors import (
    ConcurrentModificationError,
    InvalidArgumentError,
    ServiceError,
    WriteRefusedError,
)
from mddframes.http.etags import strong_etag

TABLE = "tbl-0001"
MAPPING = "map-0001"


@pytest.fixture(scope="module")
def etag_emulator():
    with serve(dialect="etag") as emu:
        yield emu


@pytest.fixture
def eclient(etag_emulator):
    etag_emulator.reset()
    with Client.from_emulator(etag_emulator) as c:
        yield c


def test_the_parsed_and_the_streamed_reads_expose_the_same_strong_etag(eclient):
    api = eclient.api
    table = api.get_table_with_etag(TABLE)
    assert table.document == api.get_table(TABLE)
    assert table.etag is not None and strong_etag(table.etag) == table.etag
    with api.get_table_stream(TABLE) as body:
        assert body.etag == table.etag and body.json() == table.document
    document, etag = api.get_mapping_with_etag(MAPPING)  # a tuple as well
    assert document == api.get_mapping(MAPPING) and etag is not None and etag != table.etag


@pytest.mark.parametrize("kind", ["table", "mapping"])
def test_a_write_with_the_read_etag_passes_and_a_stale_one_is_refused(eclient, kind):
    api = eclient.api
    object_id = TABLE if kind == "table" else MAPPING
    get = getattr(api, f"get_{kind}_with_etag")
    put = getattr(api, f"put_{kind}")
    read = get(object_id)
    edited = {**read.document, "name": read.document["name"] + " (ours)"}
    put(object_id, edited, if_match=read.etag)
    written = get(object_id)
    assert written.document == edited and written.etag != read.etag
    theirs = {**read.document, "name": "theirs"}
    with pytest.raises(ConcurrentModificationError) as caught:
        put(object_id, theirs, if_match=read.etag)  # the ETag before our write: stale
    error = caught.value
    assert isinstance(error, WriteRefusedError) and error.status == 412
    assert f"{kind} {object_id!r} changed on the service" in str(error)
    assert "Nothing was written" in str(error)
    assert error.operation == f"{kind}Update"
    assert get(object_id) == written  # unchanged, ETag included


def test_the_streamed_write_sends_if_match_too(eclient, etag_emulator):
    api = eclient.api
    read = api.get_table_with_etag(TABLE)
    etag_emulator.touch_table(TABLE)  # someone else's write
    with pytest.raises(ConcurrentModificationError, match=r"table 'tbl-0001' changed"):
        api.put_table(TABLE, read.document, answer=False, if_match=read.etag)
    assert "(changed)" in json.dumps(api.get_table(TABLE))  # theirs kept, ours not written


def test_star_writes_over_any_version(eclient, etag_emulator):
    api = eclient.api
    etag_emulator.touch_table(TABLE)
    document = api.get_table(TABLE)
    api.put_table(TABLE, {**document, "name": "star"}, if_match="*")
    assert api.get_table(TABLE)["name"] == "star"


@pytest.mark.parametrize("bad", ['W/"abc"', "abc", '"a" "b"', "", '"x"\r\nX-Evil: 1'])
def test_an_unusable_if_match_is_refused_before_sending(eclient, etag_emulator, bad):
    etag_emulator.reset_counters()
    with pytest.raises(InvalidArgumentError, match=r"put_table\(\): if_match must be"):
        eclient.api.put_table(TABLE, eclient.api.get_table(TABLE), if_match=bad)
    with pytest.raises(InvalidArgumentError, match=r"put_mapping\(\): if_match must be"):
        eclient.api.put_mapping(MAPPING, eclient.api.get_mapping(MAPPING), if_match=bad)
    counts = etag_emulator.counters()
    assert counts.get("tableUpdate", 0) == counts.get("mappingUpdate", 0) == 0
    assert counts["getTable"] == counts["getMapping"] == 1  # the counters do count


def test_without_etags_the_reads_say_none_and_if_match_is_ignored(client):
    api = client.api
    assert api.get_table_with_etag(TABLE).etag is None
    assert api.get_mapping_with_etag(MAPPING).etag is None
    with api.get_table_stream(TABLE) as body:
        assert body.etag is None
    document = api.get_table(TABLE)
    api.put_table(TABLE, document, if_match='"whatever"')  # a service that ignores it
    assert api.get_table(TABLE) == document


def test_strong_etag_keeps_only_one_strong_entity_tag():
    assert strong_etag('"0a1b"') == '"0a1b"' and strong_etag(' "x" ') == '"x"'
    assert strong_etag('""') == '""'
    for value in (None, 'W/"0a1b"', "0a1b", '"a", "b"', '"a"b"'):
        assert strong_etag(value) is None, value


def test_a_412_after_a_repeated_put_says_the_earlier_attempt_may_have_written(
    script,  # noqa: F811
):
    plan, url = script
    answers = iter([(502, {}, b""), (412, {"Content-Type": "application/json"},
                                     b'{"status":412,"message":"precondition"}')])  # fmt: skip
    plan.routes[f"{API}/table/t"] = lambda h: next(answers)
    with make_client(url) as c, pytest.raises(ConcurrentModificationError) as caught:
        c.api.put_table("t", {"metadata": {}, "data": []}, if_match='"v1"')
    message = str(caught.value)
    assert plan.hits[f"{API}/table/t"] == 2
    assert "table 't'" in message and "repeated 1 time(s)" in message
    assert "may have written it" in message and "Nothing was written" not in message


def test_a_412_of_another_operation_stays_a_service_error(script):  # noqa: F811
    plan, url = script
    plan.routes[f"{API}/object-type"] = lambda h: (412, {}, b"")
    with make_client(url) as c, pytest.raises(ServiceError) as caught:
        c.api.get_object_types()
    assert caught.value.status == 412
    assert not isinstance(caught.value, ConcurrentModificationError)
