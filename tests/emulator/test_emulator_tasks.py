"""Batch export tasks: progress, result zip, hold/fail controls, validation, legacy mode."""

from __future__ import annotations

import io
import time
import zipfile

import pytest
import requests

from mddframes.emulator import serve
from mddframes.emulator._fallback import tiny_dataset
from mddframes.emulator.tasks import safe_id, zip_entry_name

# runs once, on the newest pandas: checks the service's wire, not pandas (tests/pandas_ends.py)
pytestmark = pytest.mark.pandas_free

TABLE_ELEMENTS = [f"dwh-{n:04d}" for n in range(2, 8)]


@pytest.fixture(scope="module")
def server():
    with serve(dataset=tiny_dataset, export_seconds_per_element=0.05) as emu:
        yield emu


@pytest.fixture
def api(server):
    server.reset()
    session = requests.Session()
    session.headers["Authorization"] = f"Bearer {server.token()}"
    yield session
    session.close()


def start(server, api, ids=TABLE_ELEMENTS, object_type="ddl") -> requests.Response:
    return api.post(
        server.api_url + "/api/structure/export",
        json={"structureIds": list(ids), "objectTypeId": object_type},
        timeout=10,
    )


def status(server, api, task_id) -> dict:
    response = api.get(f"{server.api_url}/api/structure/export/{task_id}", timeout=10)
    assert response.status_code == 200, response.text
    return response.json()


def result(server, api, task_id) -> requests.Response:
    return api.get(f"{server.api_url}/api/structure/export/{task_id}/result", timeout=10)


def wait_until_settled(server, api, task_id, timeout=10.0) -> list[dict]:
    seen = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        seen.append(status(server, api, task_id))
        if seen[-1]["status"] != "RUNNING":
            return seen
        time.sleep(0.02)
    raise AssertionError(f"task {task_id} still running after {timeout} s: {seen[-1]}")


def test_task_progress_grows_and_result_is_409_then_a_zip(server, api):
    response = start(server, api)
    assert response.status_code == 202
    task_id = response.json()["taskId"]
    early = result(server, api, task_id)
    assert early.status_code == 409
    assert "still running" in early.json()["message"]
    seen = wait_until_settled(server, api, task_id)
    done = [s["done"] for s in seen]
    assert done == sorted(done)
    assert any(s["status"] == "RUNNING" and 0 <= s["done"] < 6 for s in seen)
    final = seen[-1]
    assert (final["status"], final["total"], final["done"]) == ("FINISHED", 6, 6)
    assert set(final) == {"taskId", "status", "total", "done", "message"}
    answer = result(server, api, task_id)
    assert answer.status_code == 200
    assert answer.headers["content-type"] == "application/zip"
    with zipfile.ZipFile(io.BytesIO(answer.content)) as archive:
        names = archive.namelist()
        assert names == [f"{sid}__table_{sid[-1]}.sql" for sid in TABLE_ELEMENTS]
        single = api.post(f"{server.api_url}/api/structure/dwh-0002/export/ddl", timeout=10).text
        assert archive.read(names[0]).decode() == single


def test_zip_names_are_unique_for_awkward_ids(server, api):
    awkward = ["tbl/with/slash", "tbl", "slash", "..", "100%", "name with space", "Zürich-Ω"]
    task_id = start(server, api, awkward).json()["taskId"]
    assert wait_until_settled(server, api, task_id)[-1]["status"] == "FINISHED"
    with zipfile.ZipFile(io.BytesIO(result(server, api, task_id).content)) as archive:
        names = archive.namelist()
    assert len(set(names)) == len(awkward)
    assert all("/" not in n and "\\" not in n and not n.startswith(".") for n in names)
    assert names[1] == "tbl__tbl.sql"


def test_safe_id_rule():
    assert safe_id("dwh-0001") == "dwh-0001"
    assert safe_id("a/b") != safe_id("a_b")
    assert safe_id("..").startswith("__-")
    assert zip_entry_name("x", "a/b.sql") == "x__a_b.sql"


def test_hold_for_polls_keeps_a_finished_task_running(server, api):
    server.hold_next_task(polls=3)
    task_id = start(server, api, TABLE_ELEMENTS[:1]).json()["taskId"]
    time.sleep(0.3)  # the one element is long done
    held = [status(server, api, task_id) for _ in range(2)]
    assert [s["status"] for s in held] == ["RUNNING"] * 2
    assert held[-1]["done"] == 1
    assert result(server, api, task_id).status_code == 409  # asking for the result uses no poll
    assert status(server, api, task_id)["status"] == "RUNNING"
    assert status(server, api, task_id)["status"] == "FINISHED"
    assert result(server, api, task_id).status_code == 200


def test_hold_for_seconds(server, api):
    server.hold_next_task(seconds=0.6)
    began = time.monotonic()
    task_id = start(server, api, TABLE_ELEMENTS[:1]).json()["taskId"]
    seen = wait_until_settled(server, api, task_id)
    assert seen[-1]["status"] == "FINISHED"
    assert time.monotonic() - began >= 0.6


def test_hold_a_running_task_by_id(server, api):
    task_id = start(server, api, TABLE_ELEMENTS[:1]).json()["taskId"]
    server.hold_task(task_id, polls=2)
    assert [status(server, api, task_id)["status"] for _ in range(2)] == ["RUNNING", "RUNNING"]
    assert wait_until_settled(server, api, task_id)[-1]["status"] == "FINISHED"


def test_fail_next_task_fails_half_way_with_the_message(server, api):
    server.fail_next_task("disk full (injected)")
    task_id = start(server, api).json()["taskId"]
    final = wait_until_settled(server, api, task_id)[-1]
    assert final["status"] == "FAILED"
    assert final["message"] == "disk full (injected)"
    assert final["done"] == 3
    answer = result(server, api, task_id)
    assert answer.status_code == 409
    assert "disk full" in answer.json()["message"]
    # only the next task fails
    other = start(server, api, TABLE_ELEMENTS[:1]).json()["taskId"]
    assert wait_until_settled(server, api, other)[-1]["status"] == "FINISHED"


def test_fail_a_held_task_by_id(server, api):
    server.hold_next_task(polls=100)
    task_id = start(server, api, TABLE_ELEMENTS[:1]).json()["taskId"]
    server.fail_task(task_id, "stopped by an operator")
    final = status(server, api, task_id)
    assert (final["status"], final["message"]) == ("FAILED", "stopped by an operator")


@pytest.mark.parametrize(
    ("body", "code", "words"),
    [
        ({"structureIds": ["dwh-0002"], "objectTypeId": "nope"}, 404, "nope"),
        ({"structureIds": ["dwh-0002", "ghost"], "objectTypeId": "ddl"}, 404, "ghost"),
        ({"structureIds": ["dwh-0001"], "objectTypeId": "ddl"}, 400, "FOLDER"),
        ({"structureIds": [], "objectTypeId": "ddl"}, 400, "structureIds"),
        ({"structureIds": "dwh-0002", "objectTypeId": "ddl"}, 400, "structureIds"),
        ({"structureIds": ["dwh-0002"]}, 400, "objectTypeId"),
        (["dwh-0002"], 400, "JSON object"),
    ],
)
def test_refused_starts_create_no_task(server, api, body, code, words):
    before = start(server, api, TABLE_ELEMENTS[:1]).json()["taskId"]
    response = api.post(server.api_url + "/api/structure/export", json=body, timeout=10)
    assert response.status_code == code, response.text
    assert words in response.json()["message"]
    after = start(server, api, TABLE_ELEMENTS[:1]).json()["taskId"]
    assert int(after.split("-")[1]) == int(before.split("-")[1]) + 1


def test_unknown_task_is_404(server, api):
    assert (
        api.get(f"{server.api_url}/api/structure/export/task-999999", timeout=10).status_code == 404
    )
    assert result(server, api, "task-999999").status_code == 404


def test_legacy_mode_has_no_batch_export(server, api):
    server.set_legacy(True)
    response = start(server, api)
    assert response.status_code == 404
    assert response.json()["status"] == 404
    assert (
        api.post(f"{server.api_url}/api/structure/dwh-0002/export/ddl", timeout=10).status_code
        == 200
    )
    server.reset()  # back to the starting setting
    assert start(server, api).status_code == 202


@pytest.mark.emulator
def test_legacy_from_the_start():
    with serve(dataset=tiny_dataset, legacy=True) as emu:
        headers = {"Authorization": f"Bearer {emu.token()}"}
        body = {"structureIds": ["dwh-0002"], "objectTypeId": "ddl"}
        response = requests.post(
            emu.api_url + "/api/structure/export", json=body, headers=headers, timeout=10
        )
        assert response.status_code == 404
