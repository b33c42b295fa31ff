"""The emulator's 17 operations over loopback HTTP with plain ``requests``: success and
main error cases, Spring error bodies, raw JSON fidelity, and "a rejected request
changes nothing"."""

from __future__ import annotations

import json
from urllib.parse import quote

import pytest
import requests

from mddframes.emulator import serve
from mddframes.emulator._fallback import tiny_dataset

# runs once, on the newest pandas: checks the service's wire, not pandas (tests/pandas_ends.py)
pytestmark = pytest.mark.pandas_free

SPRING_KEYS = {"timestamp", "status", "error", "message", "path"}


@pytest.fixture(scope="module")
def server():
    with serve(dataset=tiny_dataset, export_seconds_per_element=0) as emu:
        yield emu


@pytest.fixture
def api(server):
    """A session with a bearer token on the freshly reset tiny emulator; ``api.url(...)``."""
    server.reset()
    session = requests.Session()
    session.headers["Authorization"] = f"Bearer {server.token()}"
    session.url = lambda *parts: (
        server.api_url
        + "/api/"
        + "/".join(  # type: ignore[attr-defined]
            map(segment, parts)
        )
    )
    yield session
    session.close()


def segment(value: str) -> str:
    """One path segment; "." and ".." are sent as %2E, since HTTP libraries collapse them."""
    return value.replace(".", "%2E") if value in (".", "..") else quote(value, safe="")


def assert_spring_error(response: requests.Response, status: int, *words: str) -> dict:
    assert response.status_code == status, response.text
    body = response.json()
    assert SPRING_KEYS <= set(body)
    assert body["status"] == status
    for word in words:
        assert word in body["message"], body["message"]
    return body


def test_tree_is_flat_with_ids_and_owned_table_and_mapping_ids(api):
    tree = api.get(api.url("system", "DWH", "tree")).json()
    assert [e["id"] for e in tree][:3] == ["dwh-0001", "dwh-0002", "dwh-0003"]
    root = tree[0]
    assert set(root) == {"id", "name", "type", "parentId", "systemName", "version", "deployed"}
    assert root["parentId"] is None
    assert tree[1]["tableId"] == "tbl-0001"
    assert tree[2]["mappingId"] == "map-0001"
    assert all(e["systemName"] == "DWH" for e in tree)


def test_tree_of_unknown_system_is_404_with_spring_body(api):
    body = assert_spring_error(api.get(api.url("system", "NOPE", "tree")), 404, "NOPE")
    assert body["error"] == "Not Found"
    assert body["path"].endswith("/api/system/NOPE/tree")


def test_structure_and_its_404(api):
    element = api.get(api.url("structure", "dwh-0002")).json()
    assert element["id"] == "dwh-0002"
    assert element["tableId"] == "tbl-0001"
    assert {"version", "modifiedAt", "deploymentId", "attributes"} <= set(element)
    assert_spring_error(api.get(api.url("structure", "missing")), 404, "missing")


def test_raw_data_carries_path_children_table_and_mappings(api):
    raw = api.get(api.url("structure", "dwh-0003", "raw-data")).json()
    assert raw["element"]["id"] == "dwh-0003"
    assert raw["path"] == ["Sources", "table_3"]
    assert raw["table"]["columns"][0]["name"] == "id"
    assert "data" not in raw["table"]
    assert [m["id"] for m in raw["mappings"]] == ["map-0001"]
    folder = api.get(api.url("structure", "dwh-0001", "raw-data")).json()
    assert [c["id"] for c in folder["children"]][:2] == ["dwh-0002", "dwh-0003"]
    assert_spring_error(api.get(api.url("structure", "missing", "raw-data")), 404)


def test_object_types_never_show_templates(api):
    types = api.get(api.url("object-type")).json()
    assert [t["id"] for t in types] == ["ddl"]
    assert "template" not in types[0]
    assert types[0]["elementTypes"] == ["SOURCE_TABLE", "STAGE_TABLE"]


def test_table_keeps_big_integers_absent_keys_and_nulls(api):
    response = api.get(api.url("table", "tbl-0001"))
    assert response.headers["content-type"].startswith("application/json")
    assert '"id":9007199254740993' in response.text
    table = json.loads(response.text)
    assert table["data"][0]["id"] == 2**53 + 1
    assert table["data"][1] == {"id": 2, "name": None}
    assert table["data"][2] == {"id": 3}
    assert_spring_error(api.get(api.url("table", "missing")), 404, "missing")


def test_table_update_stores_exactly_what_was_sent_and_bumps_the_owner(api):
    before = api.get(api.url("structure", "dwh-0002")).json()["version"]
    sent = (
        '{"zeta":1,"id":"tbl-0001","metadata":{"columns":[]},'
        '"data":[{"b":12345678901234567890,"a":"12.50","n":null,"x":{"y":[1,2]},"t":"Zürich"}]}'
    )
    response = api.put(
        api.url("table", "tbl-0001"),
        data=sent.encode(),
        headers={"Content-Type": "application/json"},
    )
    assert response.status_code == 200, response.text
    assert api.get(api.url("table", "tbl-0001")).text == sent
    after = api.get(api.url("structure", "dwh-0002")).json()
    assert after["version"] == before + 1


@pytest.mark.parametrize(
    ("body", "words"),
    [
        ("[1, 2]", ["JSON object"]),
        ('{"metadata": {}}', ["data"]),
        ('{"data": []}', ["metadata"]),
        ('{"metadata": {}, "data": {"a": 1}}', ["data", "list"]),
        ('{"metadata": {}, "data": [{"a": 1}, 7]}', ["data[1]"]),
        ('{"metadata": {"columns": {}}, "data": []}', ["metadata.columns"]),
        ('{"metadata": {}, "data": [{"a": NaN}]}', ["NaN"]),
        ('{"metadata": {}, "data": [', ["not valid JSON"]),
        ("", ["empty"]),
    ],
)
def test_bad_table_update_is_400_naming_the_problem_and_changes_nothing(api, body, words):
    url = api.url("table", "tbl-0001")
    before = api.get(url).text
    version = api.get(api.url("structure", "dwh-0002")).json()["version"]
    response = api.put(url, data=body.encode(), headers={"Content-Type": "application/json"})
    assert_spring_error(response, 400, *words)
    assert api.get(url).text == before
    assert api.get(api.url("structure", "dwh-0002")).json()["version"] == version


def test_table_update_with_wrong_content_type_is_415_and_unknown_table_404(api):
    url = api.url("table", "tbl-0001")
    before = api.get(url).text
    response = api.put(url, data=before.encode(), headers={"Content-Type": "text/plain"})
    assert_spring_error(response, 415, "text/plain")
    assert api.get(url).text == before
    assert_spring_error(
        api.put(api.url("table", "missing"), json={"metadata": {}, "data": []}), 404
    )


def test_mapping_read_write_and_errors(api):
    url = api.url("mapping", "map-0001")
    mapping = api.get(url).json()
    assert mapping["sourceId"] == "dwh-0002"
    mapping["columnMappings"].append({"source": "name", "target": "name", "extra": [1]})
    assert api.put(url, json=mapping).status_code == 200
    assert api.get(url).json() == mapping
    assert_spring_error(api.put(url, json={"name": "x"}), 400, "columnMappings")
    assert_spring_error(api.put(url, json={"columnMappings": [1]}), 400, "columnMappings[0]")
    assert api.get(url).json() == mapping
    assert_spring_error(api.get(api.url("mapping", "missing")), 404)


@pytest.mark.parametrize("awkward", ["tbl/with/slash", "..", "100%", "name with space", "Zürich-Ω"])
def test_awkward_ids_reach_their_own_resource(api, awkward):
    table = api.get(api.url("table", awkward)).json()
    assert table["id"] == awkward
    assert table["data"][0]["name"] == awkward
    assert api.get(api.url("structure", awkward)).json()["id"] == awkward


def test_a_slash_id_is_not_confused_with_its_pieces(api):
    assert api.get(api.url("table", "tbl")).json()["id"] == "tbl"
    raw = api.get(api.url("table", "tbl/with/slash")).json()
    assert raw["id"] == "tbl/with/slash"
    # unquoted, the path has more segments and matches no route
    unquoted = api.get(api.url("table") + "/tbl/with/slash")
    assert unquoted.status_code == 404


def test_packages_list_only_open_ones_and_add_ignores_duplicates(api):
    listed = api.get(api.url("system", "DWH", "deployment-package")).json()
    assert [p["name"] for p in listed] == ["release-1"]
    assert listed[0]["status"] == "OPEN"
    url = api.url("system", "DWH", "deployment-package", "release-1", "structure")
    response = api.post(url, json=["dwh-0003", "dwh-0002", "dwh-0003"])
    assert response.status_code == 200, response.text
    assert response.json()["structureIds"] == ["dwh-0002", "dwh-0003"]
    again = api.get(api.url("system", "DWH", "deployment-package")).json()
    assert again[0]["structureIds"] == ["dwh-0002", "dwh-0003"]


def test_package_errors_and_no_partial_add(api, server):
    base = ("system", "DWH", "deployment-package")
    open_url = api.url(*base, "release-1", "structure")
    assert_spring_error(api.post(open_url, json={"ids": ["dwh-0002"]}), 400, "list")
    assert_spring_error(api.post(open_url, json=["dwh-0002", 5]), 400, "position 1")
    assert_spring_error(api.post(open_url, json=["dwh-0004", "nope"]), 404, "nope")
    assert api.get(api.url(*base)).json()[0]["structureIds"] == ["dwh-0002"]
    assert_spring_error(api.post(api.url(*base, "missing", "structure"), json=["dwh-0002"]), 404)
    assert_spring_error(api.get(api.url("system", "NOPE", "deployment-package")), 404)
    closed = api.post(api.url(*base, "release-0", "structure"), json=["dwh-0002"])
    assert_spring_error(closed, 409, "CLOSED")
    server.close_package("DWH", "release-1")
    assert api.get(api.url(*base)).json() == []
    assert_spring_error(api.post(open_url, json=["dwh-0004"]), 409)


def test_create_child_answers_201_and_the_child_is_in_the_tree(api):
    response = api.post(
        api.url("structure", "dwh-0001", "children", "VIEW"),
        json={"name": "v_customer", "schema": "mart", "attributes": {"owner": "ann"}},
    )
    assert response.status_code == 201, response.text
    child = response.json()
    assert child["type"] == "VIEW"
    assert child["parentId"] == "dwh-0001"
    assert child["attributes"] == {"owner": "ann", "schema": "mart"}
    tree = api.get(api.url("system", "DWH", "tree")).json()
    assert tree[-1]["id"] == child["id"]
    assert api.get(api.url("structure", child["id"])).json() == child


def test_create_child_errors_change_nothing(api):
    count = len(api.get(api.url("system", "DWH", "tree")).json())
    assert_spring_error(
        api.post(api.url("structure", "nope", "children", "VIEW"), json={"name": "x"}), 404
    )
    assert_spring_error(
        api.post(api.url("structure", "dwh-0001", "children", "VIEW"), json={"x": 1}), 400, "name"
    )
    assert_spring_error(
        api.post(api.url("structure", "dwh-0001", "children", "VIEW"), json=["x"]), 400
    )
    response = api.post(
        api.url("structure", "dwh-0001", "children", "VIEW"),
        data="name=x",
        headers={"Content-Type": "application/x-www-form-urlencoded"},
    )
    assert_spring_error(response, 415)
    assert len(api.get(api.url("system", "DWH", "tree")).json()) == count


def test_single_export_is_text_with_a_file_name(api):
    response = api.post(api.url("structure", "dwh-0002", "export", "ddl"))
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("text/plain")
    assert 'filename="table_2.sql"' in response.headers["content-disposition"]
    assert response.text.startswith("CREATE TABLE table_2 (")
    assert "id BIGINT" in response.text


def test_single_export_errors(api):
    assert_spring_error(api.post(api.url("structure", "dwh-0002", "export", "nope")), 404, "nope")
    assert_spring_error(api.post(api.url("structure", "nope", "export", "ddl")), 404, "nope")
    assert_spring_error(api.post(api.url("structure", "dwh-0001", "export", "ddl")), 400, "FOLDER")


def test_single_export_of_non_ascii_name_has_an_rfc5987_file_name(api):
    response = api.post(api.url("structure", "Zürich-Ω", "export", "ddl"))
    assert response.status_code == 200
    assert "filename*=UTF-8''" in response.headers["content-disposition"]


def test_deploy_marks_the_element(api):
    response = api.post(api.url("structure", "dwh-0002", "deploy", "dep-7"))
    assert response.status_code == 200
    assert response.json()["deployed"] is True
    assert api.get(api.url("structure", "dwh-0002")).json()["deploymentId"] == "dep-7"
    tree = api.get(api.url("system", "DWH", "tree")).json()
    assert tree[1]["deployed"] is True
    assert_spring_error(api.post(api.url("structure", "nope", "deploy", "dep-7")), 404)


def test_confirm_deployment_from_an_admin_made_info_file(api, server):
    info = server.make_deployment_info(["dwh-0002", "dwh-0003"], deployment_id="dep-9")
    assert info["systemName"] == "DWH"
    assert info["structures"] == [
        {"id": "dwh-0002", "version": 1},
        {"id": "dwh-0003", "version": 1},
    ]
    files = {"file": ("deployment-info.json", json.dumps(info).encode(), "application/json")}
    response = api.post(api.url("structure", "deployed"), files=files)
    assert response.status_code == 200, response.text
    for sid in ("dwh-0002", "dwh-0003"):
        element = api.get(api.url("structure", sid)).json()
        assert (element["deployed"], element["deploymentId"]) == (True, "dep-9")


def test_confirm_deployment_errors_change_nothing(api, server):
    url = api.url("structure", "deployed")
    info = server.make_deployment_info(["dwh-0004"])
    assert_spring_error(api.post(url, json=info), 415, "multipart")
    assert_spring_error(api.post(url, files={"other": ("x.json", b"{}")}), 400, "file")
    assert_spring_error(api.post(url, files={"file": ("x.json", b"{nope")}), 400, "not valid JSON")
    assert_spring_error(
        api.post(url, files={"file": ("x.json", b'{"structures": []}')}), 400, "deploymentId"
    )
    bad = {**info, "structures": info["structures"] + [{"id": "ghost"}]}
    assert_spring_error(
        api.post(url, files={"file": ("x.json", json.dumps(bad).encode())}), 404, "ghost"
    )
    assert api.get(api.url("structure", "dwh-0004")).json()["deployed"] is False


def test_openapi_document_lists_every_operation_id_and_swagger_page_works_offline(server):
    spec = requests.get(server.api_url + "/v3/api-docs", timeout=10).json()
    ids = {op["operationId"] for item in spec["paths"].values() for op in item.values()}
    expected = {
        "getToken", "getTree", "getStructure", "getRawData", "getObjectTypes", "getTable",
        "tableUpdate", "getMapping", "mappingUpdate", "listDeploymentPackages",
        "addToDeploymentPackage", "createChildStructure", "externalExportStructure",
        "structureMassExportAsync", "structureMassExportAsyncStatus",
        "structureMassExportAsyncResult", "deployStructure", "confirmStructureDeployment",
    }  # fmt: skip
    assert ids == expected
    page = requests.get(server.api_url + "/swagger-ui/index.html", timeout=10)
    assert page.status_code == 200
    assert "text/html" in page.headers["content-type"]
    assert "/v3/api-docs" in page.text
    # the page is the real Swagger UI; tests/emulator/test_emulator_contract.py checks its assets
    assert '"deepLinking": true' in page.text


def test_unknown_route_is_a_spring_404(api):
    assert_spring_error(api.get(api.url("nothing-here")), 404, "No endpoint")


def test_touch_table_changes_a_value_behind_the_clients_back(api, server):
    before = api.get(api.url("table", "tbl-0001")).json()
    change = server.touch_table("tbl-0001")
    after = api.get(api.url("table", "tbl-0001")).json()
    assert after != before
    assert after["data"][change["row"]][change["column"]] == change["new"]


def test_counters_count_each_request_per_operation(api, server):
    server.reset_counters()
    api.put(api.url("table", "tbl-0002"), json={"metadata": {}, "data": []})
    api.get(api.url("table", "tbl-0002"))
    api.get(api.url("table", "tbl-0002"))
    counts = server.counters()
    assert counts["tableUpdate"] == 1
    assert counts["getTable"] == 2
    assert "getTree" not in counts


def test_reset_restores_the_starting_data(api, server):
    api.put(api.url("table", "tbl-0002"), json={"metadata": {}, "data": []})
    server.reset()
    assert api.get(api.url("table", "tbl-0002")).json()["data"] != []
