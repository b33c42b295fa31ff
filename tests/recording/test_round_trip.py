"""Round trips over every built-in dialect: record a session against the dialect, replay
the recording as an emulator, and the same session passes against the replay; the
profile learned from the recording names exactly the dialect's difference; a redacted
recording replays too. The recordings are made here, in tmp_path, never committed."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from mddframes import Client, run_doctor
from mddframes.emulator import serve
from mddframes.emulator.recordings import Recording, learn

# a mechanism, checked once, on the newest pandas (tests/pandas_ends.py)
pytestmark = pytest.mark.pandas_once

DIALECTS = ["default", "spring-page", "snake-case", "nested-tree", "unprefixed",
            "literal-realm", "etag"]  # fmt: skip
TABLE_OWNER = "dwh-0005"
EXPORTED = ["dwh-0005", "dwh-0006"]
EMPTY_PACKAGE = "hotfix-2024.07.1"


def _members(path: Path) -> dict[str, bytes]:
    with zipfile.ZipFile(path) as zf:
        return {name: zf.read(name) for name in zf.namelist()}


def session(
    client: Client, folder: Path, *, owner: str | None = None, system: str = "DWH"
) -> dict[str, Any]:
    """Loaders, a table and a mapping write, a single and a batch export, a package
    addition, doctor: what each gave."""
    folder.mkdir(parents=True, exist_ok=True)
    tree = client.read_tree(system)
    tables = tree.loc[tree["table_id"].notna()]
    owner = owner or str(tables["id"].iloc[0])
    table_id = str(tree.set_index("id").loc[owner, "table_id"])
    mapping_id = str(tree["mapping_id"].dropna().iloc[0])
    found: dict[str, Any] = {
        "tree": tree.sort_values("id", kind="stable").reset_index(drop=True),
        "structure": client.read_structure(owner),
        "object_types": client.read_object_types(),
        "packages": client.read_packages(system),
        "table": client.read_table(table_id),
        "mapping": client.read_mapping(mapping_id),
    }
    frame = found["table"].copy()
    column = next(
        c for c in frame.columns if frame[c].dtype == object or str(frame[c].dtype) == "string"
    )
    frame.loc[0, column] = "edited in a round trip"
    written = client.write_table(table_id, frame, backup_dir=folder / "backups")
    mapping = found["mapping"].copy()
    mapping.loc[1, "transformation"] = "UPPER(src.first_name)"
    mapped = client.write_mapping(mapping_id, mapping, backup_dir=folder / "backups")
    found["writes"] = (written.verified, len(written.diff.changed), mapped.verified)
    found["table after"] = client.read_table(table_id)
    exported = [owner, *[str(i) for i in tables["id"].iloc[1:2]]]
    script = client.export_script(owner, "sql-ddl")
    found["script"] = (script.file_name, script.text)
    archive = client.export_batch(exported, "sql-ddl", folder / "batch.zip")
    found["archive"] = _members(archive.path)
    packages = found["packages"]
    empty = str(packages.loc[packages["n_structures"] == 0, "name"].iloc[0])
    added = client.add_to_package(system, empty, exported)
    found["added"] = (bool(added["ok"].all()), bool(added["already_in_package"].any()))
    report = run_doctor(client.api, system=system)
    found["doctor"] = dict(report[["check", "result"]].values)
    return found


def _same(got: dict[str, Any], want: dict[str, Any]) -> None:
    assert got.keys() == want.keys()
    for kind, value in want.items():
        if isinstance(value, pd.DataFrame):
            pd.testing.assert_frame_equal(got[kind], value, obj=kind)
        elif isinstance(value, pd.Series):
            pd.testing.assert_series_equal(got[kind], value, obj=kind)
        else:
            assert got[kind] == value, kind


@pytest.fixture(scope="module", params=DIALECTS)
def recorded(request, tmp_path_factory):
    """A recording of the session against one dialect, and what the session gave."""
    folder = tmp_path_factory.mktemp(request.param)
    path = folder / f"{request.param}.har"
    with serve(dialect=request.param) as emu, Client.from_emulator(emu) as client:
        emu.hold_next_task(polls=2)  # the batch export stays RUNNING for two polls
        with client.recording(path):
            found = session(client, folder / "live", owner=TABLE_OWNER)
    return request.param, path, found


def test_the_session_passes_against_the_replay(recorded, tmp_path):
    dialect, path, want = recorded
    assert want["writes"] == (True, 1, True) and want["added"] == (True, False)
    with serve(replay=path) as emu, Client.from_emulator(emu) as client:
        assert emu.dialect == dialect
        got = session(client, tmp_path, owner=TABLE_OWNER)
    _same(got, want)


def test_the_learned_profile_names_exactly_the_dialects_difference(recorded):
    dialect, path, _ = recorded
    learned = learn(Recording.read(path))
    assert list(learned.differences) == ([] if dialect == "default" else [dialect])
    assert learned.dialect == dialect
    assert learned.uncovered == []


def test_polling_progresses_as_recorded(recorded, tmp_path):
    _, path, _ = recorded
    statuses = [
        json.loads(c.body)["status"]
        for c in Recording.read(path).of("structureMassExportAsyncStatus")
    ]
    assert statuses[:2] == ["RUNNING", "RUNNING"] and statuses[-1] == "FINISHED"
    with serve(replay=path) as emu, Client.from_emulator(emu) as client:
        task = client.start_export(EXPORTED, "sql-ddl")
        seen = [client.api.structure_mass_export_async_status(task.task_id)["status"]
                for _ in range(2)]  # fmt: skip
        assert seen == ["RUNNING", "RUNNING"]
        assert task.wait(timeout=30).finished


def test_a_request_the_recording_cannot_answer_is_a_404_naming_it(recorded):
    _, path, _ = recorded
    with serve(replay=path) as emu, Client.from_emulator(emu) as client:
        with pytest.raises(Exception) as caught:
            client.read_table("tbl-never-recorded")
    assert f"not in the recording {path.name}" in str(caught.value)


@pytest.mark.emulator
@pytest.mark.parametrize("dialect", DIALECTS)
def test_a_redacted_recording_replays_too(dialect, tmp_path):
    path = tmp_path / "redacted.har"
    with serve(dialect=dialect) as emu, Client.from_emulator(emu) as client:
        with client.recording(path, redact_values=True):
            live = session(client, tmp_path / "live")
    # the emulator's OpenAPI document shows sample data as its examples: not the tenant's
    entries = json.loads(path.read_text("utf-8"))["log"]["entries"]
    text = json.dumps([e for e in entries if e["_operation"] != "openApiDocument"])
    for value in ("crm_customer", "Customers", "DWH", "dwh-0005", "tbl-0001"):
        assert value not in text, value
    recording = Recording.read(path)
    assert recording.redacted
    system = next(recording.of("getTree")).params["name"]
    with serve(replay=path) as emu, Client.from_emulator(emu) as client:
        assert emu.dialect == dialect
        got = session(client, tmp_path / "replayed", system=system)
    assert got["writes"] == (True, 1, True) and got["added"] == (True, False)
    assert got["doctor"] == live["doctor"]
    assert got["tree"].shape == live["tree"].shape
    assert got["table"].shape == live["table"].shape
    assert sorted(got["archive"]) != sorted(live["archive"])  # names redacted too
    assert len(got["archive"]) == len(live["archive"])
