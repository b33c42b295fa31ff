"""Every raw operation of the Client against the emulator, and the errors they translate."""

from __future__ import annotations

import json
import time
import zipfile

import pytest

from mddframes import Client
from mddframes.errors import (
    AuthError,
    BadRequestError,
    ConflictError,
    InvalidArgumentError,
    MddError,
    NotFoundError,
    PackageClosedError,
    ResponseFormatError,
)
from mddframes.http.endpoints import endpoint
from mddframes.http.session import decode_json

SYSTEM = "DWH"


@pytest.fixture
def tree(client):
    return client.api.get_tree(SYSTEM)


def first(entries, **conditions):
    for entry in entries:
        if all(
            key in entry if value is ... else entry.get(key) == value
            for key, value in conditions.items()
        ):
            return entry
    raise AssertionError(f"no tree entry with {conditions}")


def exportable(client, tree):
    """An object type and the ids of elements it applies to."""
    object_type = client.api.get_object_types()[0]
    ids = [e["id"] for e in tree if e["type"] in object_type["elementTypes"]]
    assert ids, "the sample has no element for the first object type"
    return object_type, ids


def wait_finished(client, task_id, limit=200):
    for _ in range(limit):
        status = client.api.structure_mass_export_async_status(task_id)
        if status["status"] != "RUNNING":
            return status
        time.sleep(0.05)
    raise AssertionError(f"task {task_id} still running after {limit} polls")


def test_get_tree_is_the_flat_element_list(client, tree):
    assert isinstance(tree, list) and len(tree) > 10
    ids = [entry["id"] for entry in tree]
    assert len(ids) == len(set(ids))
    roots = [entry for entry in tree if entry["parentId"] is None]
    assert roots and all(entry["systemName"] == SYSTEM for entry in tree)
    assert {entry["parentId"] for entry in tree} - {None} <= set(ids)


def test_get_structure_returns_that_element(client, tree):
    for entry in tree[:5]:
        element = client.api.get_structure(entry["id"])
        assert (element["id"], element["name"], element["type"]) == (
            entry["id"],
            entry["name"],
            entry["type"],
        )
        assert "attributes" in element


def test_get_raw_data_is_about_that_element(client, tree):
    owner = first(tree, tableId=...)
    raw = client.api.get_raw_data(owner["id"])
    assert raw["element"]["id"] == owner["id"]


def test_get_object_types(client):
    object_types = client.api.get_object_types()
    assert isinstance(object_types, list) and object_types
    assert all({"id", "name", "fileExtension", "elementTypes"} <= set(t) for t in object_types)


def test_get_table_and_put_table_round_trip(client, emu, tree):
    table_id = first(tree, tableId=...)["tableId"]
    table = client.api.get_table(table_id)
    assert table["id"] == table_id and isinstance(table["data"], list)
    table["data"].append({key: None for key in table["data"][0]} if table["data"] else {})
    table["metadata"]["description"] = "changed by test_client_operations"
    emu.reset_counters()
    client.api.put_table(table_id, table)
    assert client.api.get_table(table_id) == table
    assert emu.counters()["tableUpdate"] == 1


def test_get_mapping_and_put_mapping_round_trip(client, emu, tree):
    mapping_id = first(tree, mappingId=...)["mappingId"]
    mapping = client.api.get_mapping(mapping_id)
    assert mapping["id"] == mapping_id and isinstance(mapping["columnMappings"], list)
    mapping["description"] = "Zoë's mapping ✓"
    mapping["columnMappings"] = mapping["columnMappings"][:1]
    client.api.put_mapping(mapping_id, mapping)
    assert client.api.get_mapping(mapping_id) == mapping


def test_list_packages_lists_only_open_ones(client, emu):
    packages = client.api.list_deployment_packages(SYSTEM)
    assert packages and all(p["status"] == "OPEN" for p in packages)
    emu.close_package(SYSTEM, packages[0]["name"])
    names = {p["name"] for p in client.api.list_deployment_packages(SYSTEM)}
    assert packages[0]["name"] not in names


def test_post_package_structures_adds_to_that_package_once(client, emu, tree):
    package = client.api.list_deployment_packages(SYSTEM)[0]
    new_ids = [e["id"] for e in tree if e["id"] not in package["structureIds"]][:2]
    emu.reset_counters()
    client.api.add_to_deployment_package(SYSTEM, package["name"], new_ids)
    after = {p["name"]: p for p in client.api.list_deployment_packages(SYSTEM)}[package["name"]]
    assert set(new_ids) <= set(after["structureIds"])
    assert emu.counters()["addToDeploymentPackage"] == 1


def test_adding_to_a_closed_package_raises_package_closed(client, emu, tree):
    package = client.api.list_deployment_packages(SYSTEM)[0]["name"]
    emu.close_package(SYSTEM, package)
    with pytest.raises(PackageClosedError) as caught:
        client.api.add_to_deployment_package(SYSTEM, package, [tree[0]["id"]])
    assert isinstance(caught.value, ConflictError) and caught.value.status == 409


def test_post_child_creates_one_element_under_its_parent(client, emu, tree):
    parent = first(tree, type="FOLDER")
    emu.reset_counters()
    created = client.api.create_child_structure(
        parent["id"], "VIEW", {"name": "v_new_child", "owner": "tests"}
    )
    assert created["parentId"] == parent["id"] and created["name"] == "v_new_child"
    assert client.api.get_structure(created["id"])["type"] == "VIEW"
    after = client.api.get_tree(SYSTEM)
    assert len(after) == len(tree) + 1
    assert emu.counters()["createChildStructure"] == 1


def test_export_structure_returns_file_name_and_text(client, tree):
    object_type, ids = exportable(client, tree)
    name, text = client.api.external_export_structure(ids[0], object_type["id"])
    assert name.endswith("." + object_type["fileExtension"]) and "/" not in name
    assert isinstance(text, str) and text.strip()


def test_batch_export_start_status_and_streamed_result(client, tree, tmp_path):
    object_type, ids = exportable(client, tree)
    ids = ids[:3]
    started = client.api.structure_mass_export_async(ids, object_type["id"])
    task_id = started["taskId"]
    status = wait_finished(client, task_id)
    assert status["status"] == "FINISHED" and status["taskId"] == task_id
    target = tmp_path / "out" / "result.zip"
    assert client.api.structure_mass_export_async_result(task_id, target) == target
    with zipfile.ZipFile(target) as archive:
        assert len(archive.namelist()) == len(ids)
        assert archive.testzip() is None
    assert [p.name for p in target.parent.iterdir()] == ["result.zip"]  # no temp file left


def test_result_of_a_running_task_is_a_conflict_and_leaves_no_file(client, emu, tree, tmp_path):
    object_type, ids = exportable(client, tree)
    emu.hold_next_task(polls=100)
    task_id = client.api.structure_mass_export_async(ids[:2], object_type["id"])["taskId"]
    target = tmp_path / "result.zip"
    with pytest.raises(ConflictError) as caught:
        client.api.structure_mass_export_async_result(task_id, target)
    assert caught.value.operation == "structureMassExportAsyncResult"
    assert list(tmp_path.iterdir()) == []


def test_deploy_structure_marks_the_element(client, tree):
    element = first(tree, deployed=False)
    client.api.deploy_structure(element["id"], "deploy-test-1")
    after = client.api.get_structure(element["id"])
    assert after["deployed"] is True and after["deploymentId"] == "deploy-test-1"


@pytest.mark.parametrize("form", ["dict", "bytes", "path"])
def test_confirm_deployment_accepts_dict_bytes_or_path(client, emu, tree, tmp_path, form):
    ids = [e["id"] for e in tree if not e["deployed"]][:2]
    info = emu.make_deployment_info(ids)
    if form == "bytes":
        argument = json.dumps(info).encode()
    elif form == "path":
        argument = tmp_path / "deployment-info.json"
        argument.write_text(json.dumps(info), encoding="utf-8")
    else:
        argument = info
    client.api.confirm_structure_deployment(argument)
    for structure_id in ids:
        element = client.api.get_structure(structure_id)
        assert element["deployed"] is True and element["deploymentId"] == info["deploymentId"]


def test_confirm_deployment_refuses_what_is_not_a_deployment_file(client, tmp_path):
    with pytest.raises(InvalidArgumentError, match="does not exist"):
        client.api.confirm_structure_deployment(tmp_path / "missing.json")
    with pytest.raises(InvalidArgumentError, match="not valid JSON"):
        client.api.confirm_structure_deployment(b"{not json")
    with pytest.raises(InvalidArgumentError, match="path, a dict or bytes"):
        client.api.confirm_structure_deployment(42)


def test_not_found_names_operation_method_url_status_and_server_message(client):
    with pytest.raises(NotFoundError) as caught:
        client.api.get_table("no-such-table")
    error = caught.value
    assert (error.operation, error.method, error.status) == ("getTable", "GET", 404)
    assert error.url.endswith("/api/mdd-backend/api/table/no-such-table")
    assert "no-such-table" in error.server_message
    text = str(error)
    assert "getTable" in text and "GET" in text and "404" in text and error.url in text


def test_bad_request_carries_the_server_message(client, tree):
    with pytest.raises(BadRequestError) as caught:
        client.api.create_child_structure(tree[0]["id"], "VIEW", {"description": "no name"})
    assert caught.value.status == 400 and "name" in caught.value.server_message


def test_bad_arguments_are_refused_before_anything_is_sent(client, emu):
    emu.reset_counters()
    with pytest.raises(InvalidArgumentError, match="tableId"):
        client.api.get_table("")
    with pytest.raises(InvalidArgumentError, match="payload must be a dict"):
        client.api.put_table("tbl-0001", [1, 2])
    with pytest.raises(InvalidArgumentError, match="NaN"):
        client.api.put_table("tbl-0001", {"data": [{"x": float("nan")}]})
    with pytest.raises(InvalidArgumentError, match="ids is empty"):
        client.api.structure_mass_export_async([], "sql-ddl")
    with pytest.raises(InvalidArgumentError, match="must be a list of ids, not the single string"):
        client.api.add_to_deployment_package(SYSTEM, "p", "dwh-0001")
    assert sum(v for k, v in emu.counters().items() if k != "getToken") == 0


def test_a_text_answer_read_as_json_is_a_response_format_error(client, tree):
    object_type, ids = exportable(client, tree)
    entry = endpoint("externalExportStructure")
    response = client.http.call(entry.operation, {"id": ids[0], "objectTypeId": object_type["id"]})
    with pytest.raises(ResponseFormatError, match="not valid JSON") as caught:
        decode_json(entry, response.url, response)
    assert "text/plain" in str(caught.value)


def test_wrong_secret_is_an_auth_error_with_the_oauth_fields(emu):
    with Client.from_emulator(emu, client_secret="wrong-secret-xyz") as client:
        with pytest.raises(AuthError) as caught:
            client.api.get_object_types()
    error = caught.value
    assert error.operation == "getToken" and error.status == 401
    assert error.error == "unauthorized_client" and error.error_description
    assert "wrong-secret-xyz" not in str(error)


def test_unknown_client_is_invalid_client(emu):
    with Client.from_emulator(emu, client_id="nobody") as client:
        with pytest.raises(AuthError) as caught:
            client.api.get_tree(SYSTEM)
    assert caught.value.error == "invalid_client"


def test_closed_client_refuses_calls_and_context_manager_closes(emu):
    with Client.from_emulator(emu) as client:
        client.api.get_object_types()
    with pytest.raises(MddError, match="closed"):
        client.api.get_object_types()
