"""Awkward ids reach their own resource; secrets and tokens never show."""

from __future__ import annotations

import logging
import traceback

import pytest

from mddframes import Client
from mddframes.emulator.sample import LAB_AWKWARD_IDS, LAB_PIECE_IDS
from mddframes.errors import AuthError, MddError, NotFoundError

LAB = "LAB"
ALL_LAB_IDS = LAB_AWKWARD_IDS + LAB_PIECE_IDS


@pytest.mark.parametrize("resource_id", ALL_LAB_IDS)
def test_awkward_id_reaches_its_own_element_table_mapping_and_raw_data(client, resource_id):
    assert client.api.get_structure(resource_id)["id"] == resource_id
    table = client.api.get_table(resource_id)
    assert table["id"] == resource_id and table["data"][0]["id"] == resource_id
    assert client.api.get_mapping(resource_id)["id"] == resource_id
    assert client.api.get_raw_data(resource_id)["element"]["id"] == resource_id


@pytest.mark.parametrize(
    "missing_id", ["no/such", "../tbl", "tbl/..", "%2E%2E", "tbl%2F", "Zürich ", "a?b", "a#b"]
)
def test_near_miss_ids_are_not_found_never_another_resource(client, missing_id):
    with pytest.raises(NotFoundError):
        client.api.get_table(missing_id)
    with pytest.raises(NotFoundError):
        client.api.get_structure(missing_id)


def test_put_on_an_awkward_id_changes_only_that_table(client):
    before = {rid: client.api.get_table(rid) for rid in ALL_LAB_IDS}
    target = "tbl/with/slash"
    changed = dict(before[target])
    changed["data"] = [{"id": target, "label": "rewritten"}]
    client.api.put_table(target, changed)
    assert client.api.get_table(target)["data"] == changed["data"]
    for rid in ALL_LAB_IDS:
        if rid != target:
            assert client.api.get_table(rid) == before[rid], rid


def test_awkward_package_name_is_one_segment(client):
    packages = {p["name"]: p for p in client.api.list_deployment_packages(LAB)}
    assert {"sandbox/Zürich 1", "sandbox"} <= set(packages)
    client.api.add_to_deployment_package(LAB, "sandbox/Zürich 1", ["a+b"])
    after = {p["name"]: p for p in client.api.list_deployment_packages(LAB)}
    assert "a+b" in after["sandbox/Zürich 1"]["structureIds"]
    assert after["sandbox"]["structureIds"] == packages["sandbox"]["structureIds"]


def test_dot_segment_ids_are_sent_as_they_are(client, emu):
    # requests would collapse "/structure/../raw-data"; the session pins the URL.
    emu.reset_counters()
    assert client.api.get_raw_data("..")["element"]["id"] == ".."
    assert client.api.get_structure(".")["id"] == "."
    assert emu.counters().get("getRawData") == 1


def secret_texts(emu, client):
    return [emu.client_secret, client.http.tokens.token().reveal()]


def test_secret_and_tokens_are_absent_from_debug_logs(emu, caplog):
    caplog.set_level(logging.DEBUG)
    emu.set_token_ttl(2)
    with Client.from_emulator(emu) as client:
        client.api.get_tree(LAB)
        client.api.get_table("100%")
        first_token = client.http.tokens.token().reveal()
        emu.revoke_tokens()
        client.api.get_table("a+b")  # 401, renewed, repeated
        with pytest.raises(NotFoundError):
            client.api.get_table("nope")
        assert client.http.unauthorized_repeats == 1
        texts = [*secret_texts(emu, client), first_token]
    logged = "\n".join(record.getMessage() for record in caplog.records)
    assert "GET" in logged and "getTable" in logged and " ms " in logged  # DEBUG lines exist
    for text in texts:
        assert text not in logged


def test_secret_is_absent_from_reprs_and_error_texts(emu):
    with Client.from_emulator(emu) as client:
        client.api.get_object_types()
        texts = secret_texts(emu, client)
        shown = [
            repr(client),
            str(client),
            repr(client.settings),
            repr(client.http),
            repr(client.http.tokens),
            repr(client.settings.client_secret),
        ]
        try:
            client.api.get_table("missing")
        except MddError as exc:
            shown.append(str(exc))
            shown.append(repr(exc))
    for text in texts:
        for item in shown:
            assert text not in item


def test_refused_credentials_leave_no_secret_in_the_traceback_locals(emu):
    wrong = "wrong-secret-3f9a-visible-if-leaked"
    with Client.from_emulator(emu, client_secret=wrong) as client:
        with pytest.raises(AuthError) as caught:
            client.api.get_tree(LAB)
    error = caught.value
    # The library's frames only: this test's own frame holds the secret on purpose.
    library_frames = traceback.extract_tb(error.__traceback__.tb_next)
    assert library_frames, "expected frames below the test"
    rendered = "".join(
        traceback.TracebackException(
            type(error), error, error.__traceback__.tb_next, capture_locals=True
        ).format()
    )
    assert "client_secret" not in str(caught.value)
    assert wrong not in rendered and emu.client_secret not in rendered
    assert "form = Secret('********')" in rendered  # the locals were really rendered


def test_insecure_http_to_another_host_is_refused(emu):
    from mddframes import ConfigurationError, connect

    with pytest.raises(ConfigurationError, match="allow_insecure_http"):
        connect("acme", base_url="http://{tenant}.example.com", client_id="x", client_secret="y")


def test_non_ascii_export_file_name_survives(client):
    name, text = client.api.external_export_structure("Zürich", "markdown-doc")
    assert name.startswith("Zürich") and name.endswith(".md") and text
