"""Hostile but plausible input: every case is a 4xx with a readable body, changes nothing,
and the emulator keeps answering (issue 13). Limits: docs/wire-format.md ("Limits")."""

from __future__ import annotations

import io
import json
import zipfile

import pytest
import requests

from mddframes.emulator import limits, serve
from mddframes.emulator._fallback import tiny_dataset

# runs once, on the newest pandas: checks the service's wire, not pandas (tests/pandas_ends.py)
pytestmark = pytest.mark.pandas_free

SPRING_KEYS = {"timestamp", "status", "error", "message", "path"}
NON_ASCII_SECRET = "geheim-ü-秘密"


@pytest.fixture(scope="module")
def server():
    with serve(
        dataset=tiny_dataset, client_secret=NON_ASCII_SECRET, export_seconds_per_element=0
    ) as emu:
        yield emu


@pytest.fixture
def api(server):
    """A session with a token on the freshly reset emulator; ``api.u(path)`` is absolute."""
    server.reset()
    session = requests.Session()
    session.headers["Authorization"] = f"Bearer {server.token()}"
    session.u = lambda path: f"{server.api_url}/api/{path}"  # type: ignore[attr-defined]
    yield session
    session.close()


def spring(response: requests.Response, status: int, *words: str) -> dict:
    assert response.status_code == status, response.text
    body = response.json()
    assert SPRING_KEYS <= set(body) and body["status"] == status
    for word in words:
        assert word in body["message"], body["message"]
    return body


def snapshot(api) -> dict:
    """Everything a write could change: tables, mapping, tree, packages, next task number."""
    started = api.post(
        api.u("structure/export"), json={"structureIds": ["dwh-0002"], "objectTypeId": "ddl"}
    )
    return {
        "table": api.get(api.u("table/tbl-0001")).text,
        "mapping": api.get(api.u("mapping/map-0001")).text,
        "tree": api.get(api.u("system/DWH/tree")).text,
        "packages": api.get(api.u("system/DWH/deployment-package")).text,
        "task": int(started.json()["taskId"].split("-")[1]),
    }


def assert_unchanged(api, before: dict) -> None:
    after = snapshot(api)
    assert after["task"] == before["task"] + 1  # no task started in between
    assert {k: v for k, v in after.items() if k != "task"} == {
        k: v for k, v in before.items() if k != "task"
    }


def nested(depth: int) -> str:
    """A JSON value of exactly ``depth`` levels of arrays."""
    return "[" * depth + "]" * depth


# (operation, method, path, body template with {v} where the hostile value goes)
JSON_OPERATIONS = [
    ("tableUpdate", "PUT", "table/tbl-0001", '{{"metadata": {{}}, "data": [{{"a": {v}}}]}}'),
    ("mappingUpdate", "PUT", "mapping/map-0001", '{{"columnMappings": [{{"x": {v}}}]}}'),
    ("addToDeploymentPackage", "POST", "system/DWH/deployment-package/release-1/structure",
     '["dwh-0003", {v}]'),
    ("structureMassExportAsync", "POST", "structure/export",
     '{{"structureIds": ["dwh-0002"], "objectTypeId": "ddl", "x": {v}}}'),
    ("createChildStructure", "POST", "structure/dwh-0001/children/VIEW",
     '{{"name": "v", "x": {v}}}'),
    ("confirmStructureDeployment", "POST", "structure/deployed",
     '{{"deploymentId": "d-1", "structures": [{{"id": "dwh-0002"}}], "x": {v}}}'),
]  # fmt: skip


def send(api, method: str, path: str, body: str) -> requests.Response:
    if path == "structure/deployed":
        return api.post(api.u(path), files={"file": ("info.json", body.encode("utf-8"))})
    return api.request(
        method, api.u(path), data=body.encode("utf-8"), headers={"Content-Type": "application/json"}
    )


@pytest.mark.parametrize(("operation", "method", "path", "template"), JSON_OPERATIONS)
@pytest.mark.parametrize(
    ("value", "words"),
    [
        (nested(1000), ["nested deeper than 100"]),
        (nested(100_000), ["nested deeper than 100"]),
        (nested(limits.MAX_DEPTH), ["nested deeper than 100"]),  # the root adds levels
        ("1e400", ["out of the range of a double"]),
        ("-1E400", ["out of the range of a double"]),
        ('"\\ud800"', ["lone UTF-16 surrogate"]),
        ('"a\\udfffb"', ["lone UTF-16 surrogate"]),
        ("NaN", ["NaN"]),
        ("1" * 5000, ["not valid JSON"]),  # beyond Python's 4,300-digit int limit
    ],
    ids=[
        "depth-1000",
        "depth-100000",
        "depth-101+",
        "1e400",
        "-1E400",
        "ud800",
        "udfff",
        "NaN",
        "5000-digits",
    ],  # fmt: skip
)
def test_hostile_json_is_400_stores_nothing_and_the_emulator_keeps_answering(
    api, operation, method, path, template, value, words
):
    before = snapshot(api)
    response = send(api, method, path, template.format(v=value))
    spring(response, 400, *words)
    assert_unchanged(api, before)


def test_nesting_up_to_the_limit_is_stored_and_served_back(api):
    # root object, "data" list, row object: 3 levels, so 97 more reach the limit exactly
    body = '{"metadata": {}, "data": [{"a": ' + nested(limits.MAX_DEPTH - 3) + "}]}"
    response = send(api, "PUT", "table/tbl-0001", body)
    assert response.status_code == 200, response.text
    assert api.get(api.u("table/tbl-0001")).json() == json.loads(body)
    too_deep = '{"metadata": {}, "data": [{"a": ' + nested(limits.MAX_DEPTH - 2) + "}]}"
    spring(send(api, "PUT", "table/tbl-0001", too_deep), 400, "nested deeper than 100")


def test_brackets_inside_strings_do_not_count_as_nesting(api):
    text = "[[[{{" * 50 + '\\"' + "]]" * 70 + "\\\\"
    body = json.dumps({"metadata": {}, "data": [{"a": text, "b": ["[", "{"]}]})
    response = send(api, "PUT", "table/tbl-0001", body)
    assert response.status_code == 200, response.text
    assert (
        api.get(api.u("table/tbl-0001")).json()["data"][0]["a"] == json.loads(body)["data"][0]["a"]
    )


def test_surrogate_pairs_and_tiny_numbers_are_fine(api):
    body = '{"metadata": {}, "data": [{"emoji": "\\ud83d\\ude00", "tiny": 1e-400, "neg": -0.0}]}'
    response = send(api, "PUT", "table/tbl-0001", body)
    assert response.status_code == 200, response.text
    row = api.get(api.u("table/tbl-0001")).json()["data"][0]
    assert row == {"emoji": "😀", "tiny": 0.0, "neg": -0.0}


def test_numbers_are_stored_as_doubles_and_integers_exactly(api):
    # docs/wire-format.md "Numbers": decimals re-serialised as Jackson's default does
    body = (
        '{"metadata": {}, "data": [{"a": 1.50, "b": 1E2, "c": 12345678901234567890123, "d": 0.1}]}'
    )
    assert send(api, "PUT", "table/tbl-0001", body).status_code == 200
    stored = api.get(api.u("table/tbl-0001")).text
    assert (
        stored == '{"metadata":{},"data":[{"a":1.5,"b":100.0,"c":12345678901234567890123,"d":0.1}]}'
    )


def test_a_body_over_the_size_limit_is_413_and_stores_nothing(api, monkeypatch):
    before = snapshot(api)
    monkeypatch.setattr(limits, "MAX_BODY_BYTES", 1000)
    big = json.dumps({"metadata": {}, "data": [{"a": "x" * 2000}]})
    spring(send(api, "PUT", "table/tbl-0001", big), 413, "larger than 1000 bytes")
    # the deployment info file comes as multipart: its declared length is checked too
    spring(send(api, "POST", "structure/deployed", big), 413, "larger than 1000 bytes")

    def chunks():
        yield big.encode()  # no Content-Length: the limit holds while reading

    response = api.put(
        api.u("table/tbl-0001"), data=chunks(), headers={"Content-Type": "application/json"}
    )
    spring(response, 413)
    monkeypatch.undo()
    assert_unchanged(api, before)


# ---------------------------------------------------------------------- token endpoint


def test_a_wrong_non_ascii_secret_is_401_not_500(server):
    for secret in ("wrong-ü", "geheim-ü-秘", NON_ASCII_SECRET + "\u0301"):
        response = requests.post(
            server.token_url,
            data={"grant_type": "client_credentials", "client_id": server.client_id,
                  "client_secret": secret},
            timeout=10,
        )  # fmt: skip
        assert response.status_code == 401, response.text
        assert response.json()["error"] == "unauthorized_client"


def test_a_configured_non_ascii_secret_issues_tokens_by_form_and_by_basic(server):
    assert server.client_secret == NON_ASCII_SECRET
    token = server.token()  # form fields
    assert requests.get(
        server.api_url + "/api/object-type",
        headers={"Authorization": f"Bearer {token}"},
        timeout=10,
    ).ok
    basic = requests.post(
        server.token_url,
        data={"grant_type": "client_credentials"},
        auth=(server.client_id, NON_ASCII_SECRET.encode("utf-8")),  # percent-free UTF-8 Basic
        timeout=10,
    )
    assert basic.status_code == 200, basic.text


def test_a_realm_that_is_not_utf8_does_not_exist(server):
    response = requests.post(
        server.base_url + "/auth/realms/%FF/protocol/openid-connect/token",
        data={"grant_type": "client_credentials"},
        timeout=10,
    )
    assert response.status_code == 404
    assert response.json() == {"error": "Realm does not exist"}


# ---------------------------------------------------------------------- paths


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("GET", "table/%FF"),
        ("GET", "table/%C3%28"),
        ("PUT", "table/%FF"),
        ("GET", "structure/%ED%A0%80"),  # an encoded surrogate is not UTF-8 either
        ("GET", "system/%FF/tree"),
        ("GET", "structure/export/%FE"),
        ("POST", "structure/%FF/deploy/d-1"),
        ("POST", "structure/dwh-0002/deploy/%FF"),
    ],
)
def test_a_path_segment_that_is_not_utf8_is_400_naming_it(api, method, path):
    before = snapshot(api)
    body = spring(
        api.request(method, api.u(path), json={"metadata": {}, "data": []}),
        400,
        "percent-encoded UTF-8",
    )
    assert body["path"].endswith(path)
    assert_unchanged(api, before)


@pytest.mark.parametrize(
    "path", ["table/tbl-0001/", "object-type/", "system/DWH/tree/", "structure/export/"]
)
def test_a_trailing_slash_is_a_404_not_a_redirect(api, path):
    response = api.get(api.u(path), allow_redirects=False)
    spring(response, 404, "No endpoint")
    assert "location" not in response.headers


# ---------------------------------------------------------------------- batch export


def test_a_batch_export_lists_a_repeated_id_once(api, server):
    ids = ["dwh-0002", "dwh-0004", "dwh-0002", "dwh-0004", "dwh-0002"]
    started = api.post(api.u("structure/export"), json={"structureIds": ids, "objectTypeId": "ddl"})
    assert started.status_code == 202, started.text
    task_id = started.json()["taskId"]
    for _ in range(200):
        status = api.get(api.u(f"structure/export/{task_id}")).json()
        if status["status"] != "RUNNING":
            break
    assert (status["status"], status["total"], status["done"]) == ("FINISHED", 2, 2)
    archive = zipfile.ZipFile(
        io.BytesIO(api.get(api.u(f"structure/export/{task_id}/result")).content)
    )
    names = archive.namelist()
    assert len(names) == len(set(names)) == 2
    assert [n.split("__")[0] for n in names] == ["dwh-0002", "dwh-0004"]
