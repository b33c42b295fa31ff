"""The emulator's ``etag`` dialect with plain ``requests``: ETags on tables and mappings,
``If-Match`` honoured by their updates (412 with nothing written, ``*``, no header), and
no ETag in any other dialect (row 29 of docs/wire-format.md)."""

from __future__ import annotations

import re

import pytest
import requests

from mddframes.emulator import serve

# runs once, on the newest pandas: checks the service's wire, not pandas (tests/pandas_ends.py)
pytestmark = pytest.mark.pandas_free

TABLE = "tbl-0001"
MAPPING = "map-0001"
STRONG = re.compile(r'^"[0-9a-f]{64}"$')


@pytest.fixture(scope="module")
def etag_emulator():
    with serve(dialect="etag") as emu:
        yield emu


@pytest.fixture
def api(etag_emulator):
    """A session with a bearer token on the freshly reset etag emulator; ``api.url(...)``."""
    etag_emulator.reset()
    session = requests.Session()
    session.headers["Authorization"] = f"Bearer {etag_emulator.token()}"
    session.url = lambda kind, object_id: f"{etag_emulator.api_url}/api/{kind}/{object_id}"  # type: ignore[attr-defined]
    yield session
    session.close()


KINDS = [("table", TABLE), ("mapping", MAPPING)]


def _edited(document: dict, kind: str) -> dict:
    if kind == "table":
        return {**document, "name": document["name"] + " (edited)"}
    return {**document, "description": "edited"}


@pytest.mark.parametrize(("kind", "object_id"), KINDS)
def test_a_read_carries_a_strong_etag_that_changes_with_the_object(api, kind, object_id):
    first = api.get(api.url(kind, object_id))
    assert first.status_code == 200 and STRONG.match(first.headers["ETag"]), first.headers
    assert api.get(api.url(kind, object_id)).headers["ETag"] == first.headers["ETag"]
    put = api.put(api.url(kind, object_id), json=_edited(first.json(), kind))
    assert put.status_code == 200
    after = api.get(api.url(kind, object_id))
    assert after.headers["ETag"] != first.headers["ETag"]
    assert put.headers["ETag"] == after.headers["ETag"]  # the PUT answers the new ETag


@pytest.mark.parametrize(("kind", "object_id"), KINDS)
def test_a_stale_if_match_is_412_and_nothing_is_written(api, etag_emulator, kind, object_id):
    read = api.get(api.url(kind, object_id))
    stale = read.headers["ETag"]
    assert api.put(api.url(kind, object_id), json=_edited(read.json(), kind)).status_code == 200
    current = api.get(api.url(kind, object_id))
    tree = api.get(api.url("system", "DWH") + "/tree").json()
    owner = next(e["id"] for e in tree if e.get(f"{kind}Id") == object_id)
    version = api.get(api.url("structure", owner)).json()["version"]
    etag_emulator.reset_counters()
    refused = api.put(api.url(kind, object_id), json=read.json(), headers={"If-Match": stale})
    assert refused.status_code == 412
    body = refused.json()
    assert {"timestamp", "status", "error", "message", "path"} <= set(body)
    assert (body["status"], body["error"]) == (412, "Precondition Failed")
    assert f"{kind} {object_id!r}" in body["message"] and "nothing was written" in body["message"]
    assert "ETag" not in refused.headers
    now = api.get(api.url(kind, object_id))
    assert now.content == current.content and now.headers["ETag"] == current.headers["ETag"]
    assert etag_emulator.counters()[f"{kind}Update"] == 1  # the refusal was the route's
    assert api.get(api.url("structure", owner)).json()["version"] == version


@pytest.mark.parametrize(("kind", "object_id"), KINDS)
@pytest.mark.parametrize("header", ["{current}", '"other", {current}', "*", None])
def test_the_current_etag_a_list_holding_it_star_and_no_header_write(api, kind, object_id, header):
    read = api.get(api.url(kind, object_id))
    headers = {} if header is None else {"If-Match": header.format(current=read.headers["ETag"])}
    edited = _edited(read.json(), kind)
    put = api.put(api.url(kind, object_id), json=edited, headers=headers)
    assert put.status_code == 200, put.text
    assert api.get(api.url(kind, object_id)).json() == edited


def test_a_weak_or_malformed_if_match_never_matches(api):
    read = api.get(api.url("table", TABLE))
    for header in (f"W/{read.headers['ETag']}", read.headers["ETag"].strip('"'), ""):
        refused = api.put(api.url("table", TABLE), json=read.json(), headers={"If-Match": header})
        assert refused.status_code == 412, header
    assert api.get(api.url("table", TABLE)).headers["ETag"] == read.headers["ETag"]


def test_star_on_a_missing_object_is_404(api):
    read = api.get(api.url("table", TABLE)).json()
    missing = api.put(api.url("table", "no-such-table"), json=read, headers={"If-Match": "*"})
    assert missing.status_code == 404


def test_other_dialects_send_no_etag_and_ignore_if_match(emulator):
    emulator.reset()
    with requests.Session() as s:
        s.headers["Authorization"] = f"Bearer {emulator.token()}"
        for kind, object_id in KINDS:
            read = s.get(f"{emulator.api_url}/api/{kind}/{object_id}")
            assert read.status_code == 200 and "ETag" not in read.headers
            put = s.put(f"{emulator.api_url}/api/{kind}/{object_id}", json=read.json(),
                        headers={"If-Match": '"not-a-version"'})  # fmt: skip
            assert put.status_code == 200 and "ETag" not in put.headers
