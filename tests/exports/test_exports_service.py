"""Exports against the emulator: single scripts, batch tasks, time-outs, legacy fallback."""

from __future__ import annotations

import zipfile

import pytest

from mddframes import Client, ExportArchive, ExportTask, LegacyExportWarning, Script
from mddframes.archive import archive_entry_name
from mddframes.emulator.state import sample_dataset
from mddframes.errors import ExportFailedError, ExportTimeoutError, NotFoundError

FAST = {"poll_interval": 0.02, "max_poll_interval": 0.05, "progress": False}


@pytest.fixture(scope="module")
def sample():
    return sample_dataset()


@pytest.fixture
def targets(client, sample):
    """An object type and a few element ids it applies to (from the served sample)."""
    types = [t for t in client.api.get_object_types() if isinstance(t, dict)]
    best = max(types, key=lambda t: len(t.get("elementTypes") or []))
    allowed = set(best.get("elementTypes") or [])
    ids = [e["id"] for e in sample.elements if not allowed or e["type"] in allowed][:5]
    assert len(ids) >= 2, "the sample needs at least two exportable elements"
    return str(best["id"]), ids


def test_export_script_is_a_script_of_the_element(client, targets):
    object_type, ids = targets
    script = client.export_script(ids[0], object_type)
    assert isinstance(script, Script)
    assert script.structure_id == ids[0] and script.object_type_id == object_type
    name, text = client.api.external_export_structure(ids[0], object_type)
    assert (script.file_name, script.text) == (name, text)
    assert script.text.strip()
    assert script.file_name in script._repr_html_()


def test_export_scripts_writes_files_and_reports_the_bad_id(client, targets, tmp_path):
    object_type, ids = targets
    with pytest.warns(UserWarning, match="no-such-element"):
        result = client.export_scripts(
            [*ids, "no-such-element", ids[0]], object_type, tmp_path / "out", progress=False
        )
    assert result["id"].tolist() == [*ids, "no-such-element"]  # duplicate sent once
    bad = result.set_index("id").loc["no-such-element"]
    assert not bad["ok"] and "404" in bad["error"] and "no-such-element" in bad["error"]
    good = result[result["ok"]]
    assert len(good) == len(ids)
    for structure_id, path in zip(good["id"], good["path"], strict=True):
        _, text = client.api.external_export_structure(structure_id, object_type)
        with open(path, encoding="utf-8", newline="") as fh:
            assert fh.read() == text


def test_export_scripts_without_dest_keeps_the_text(client, targets):
    object_type, ids = targets
    result = client.export_scripts(ids[:2], object_type, progress=False)
    assert result["ok"].all()
    assert result["text"].iloc[0] == client.api.external_export_structure(ids[0], object_type)[1]
    assert (result["size"] == result["text"].str.len()).all()


def test_batch_export_zip_holds_one_file_per_element(client, targets, tmp_path):
    object_type, ids = targets
    archive = client.export_batch(ids, object_type, tmp_path / "batch.zip", **FAST)
    assert isinstance(archive, ExportArchive) and archive.path.is_file()
    files = archive.list_files()
    assert sorted(files["structure_id"]) == sorted(ids)
    with zipfile.ZipFile(archive.path) as zf:
        for structure_id in ids:
            name, text = client.api.external_export_structure(structure_id, object_type)
            assert zf.read(archive_entry_name(structure_id, name)).decode("utf-8") == text
    written = archive.extract(tmp_path / "extracted")
    assert len(written) == len(ids)


def test_task_held_running_is_polled_until_it_finishes(client, emu, targets, tmp_path):
    object_type, ids = targets
    emu.hold_next_task(polls=4)
    emu.reset_counters()
    task = client.start_export(ids, object_type)
    status = task.wait(**FAST)
    assert status.finished and status["status"] == "FINISHED"
    assert status.done == status.total == len(ids)
    assert task.polls == 5  # four held polls show RUNNING, the fifth FINISHED
    assert emu.counters()["structureMassExportAsyncStatus"] == task.polls
    assert sorted(task.list_files()["structure_id"]) == sorted(ids)


def test_failing_task_raises_with_the_service_message(client, emu, targets):
    object_type, ids = targets
    emu.fail_next_task(message="template exploded on purpose")
    task = client.start_export(ids, object_type)
    with pytest.raises(ExportFailedError, match="template exploded on purpose") as info:
        task.wait(**FAST)
    assert info.value.task_id == task.task_id


def test_time_out_hands_back_the_task_id_and_re_attach_finishes(client, emu, targets, tmp_path):
    object_type, ids = targets
    emu.hold_next_task(seconds=30)
    task = client.start_export(ids, object_type)
    with pytest.raises(ExportTimeoutError) as info:
        task.wait(timeout=0.3, poll_interval=0.02, max_poll_interval=0.05, progress=True)
    assert info.value.task_id == task.task_id
    assert f"client.export_task({task.task_id!r})" in str(info.value)

    emu.hold_task(task.task_id, polls=0, seconds=0)  # let it finish
    again = client.export_task(info.value.task_id)
    assert isinstance(again, ExportTask)
    assert again.wait(**FAST).finished
    archive = again.download(tmp_path)
    assert archive.path.name == f"export-{task.task_id}.zip"
    assert len(archive.list_files()) == len(ids)


def test_a_token_expiring_during_a_long_wait_is_renewed(emu, targets):
    object_type, ids = targets
    emu.set_token_ttl(1)
    with Client.from_emulator(emu) as short_lived:
        emu.hold_next_task(seconds=3.5)
        emu.reset_counters()
        task = short_lived.start_export(ids, object_type)
        status = task.wait(poll_interval=0.2, max_poll_interval=0.4, progress=False)
        assert status.finished
        assert emu.counters().get("getToken", 0) >= 2  # renewed at least once on the way


def test_legacy_service_falls_back_to_single_exports_with_the_same_layout(
    client, emu, targets, tmp_path
):
    object_type, ids = targets
    batch = client.export_batch(ids, object_type, tmp_path / "batch.zip", **FAST)
    emu.set_legacy(True)
    try:
        with pytest.raises(NotFoundError):
            client.api.structure_mass_export_async(
                ids, object_type
            )  # the service really has no batch export
        emu.reset_counters()
        with pytest.warns(LegacyExportWarning, match="no batch export"):
            legacy = client.export_batch(ids, object_type, tmp_path / "legacy.zip", **FAST)
        assert emu.counters()["externalExportStructure"] == len(ids)
    finally:
        emu.set_legacy(False)
    with zipfile.ZipFile(batch.path) as a, zipfile.ZipFile(legacy.path) as b:
        assert sorted(a.namelist()) == sorted(b.namelist())
        for name in a.namelist():
            assert a.read(name) == b.read(name)
    assert legacy.list_files()["structure_id"].tolist() == ids


def test_legacy_fallback_with_a_bad_id_fails_and_leaves_no_zip(client, emu, targets, tmp_path):
    object_type, ids = targets
    emu.set_legacy(True)
    try:
        with pytest.warns(LegacyExportWarning), pytest.raises(ExportFailedError) as info:
            client.export_batch([*ids, "no-such-element"], object_type, tmp_path / "x.zip", **FAST)
    finally:
        emu.set_legacy(False)
    assert "no-such-element" in str(info.value) and info.value.task_id == "legacy"
    assert list(tmp_path.iterdir()) == []


def test_downloaded_archive_with_an_escaping_entry_is_refused(client, targets, tmp_path):
    """A real download, then tampered with: extraction refuses and writes nothing."""
    from mddframes.errors import UnsafeArchiveError

    object_type, ids = targets
    archive = client.export_batch(ids, object_type, tmp_path / "batch.zip", **FAST)
    with zipfile.ZipFile(archive.path, "a") as zf:
        zf.writestr("../escaped.sql", "DROP TABLE everything;")
    with pytest.raises(UnsafeArchiveError, match=r"'\.\./escaped\.sql'"):
        archive.extract(tmp_path / "out")
    assert not (tmp_path / "escaped.sql").exists()
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())


def test_awkward_ids_get_the_same_entry_names_from_batch_and_legacy(
    client, emu, sample, targets, tmp_path
):
    """Ids with '/', '%', '..', spaces and non-ASCII: the mirrored naming rule must
    give the legacy zip exactly the names the service's batch zip has."""
    object_type, _ = targets
    allowed = {t["id"]: set(t.get("elementTypes") or []) for t in client.api.get_object_types()}[
        object_type
    ]
    awkward = [
        e["id"]
        for e in sample.elements
        if e["systemName"] == "LAB" and (not allowed or e["type"] in allowed)
    ]
    assert any("/" in i for i in awkward) and ".." in awkward
    batch = client.export_batch(awkward, object_type, tmp_path / "batch.zip", **FAST)
    emu.set_legacy(True)
    try:
        with pytest.warns(LegacyExportWarning):
            legacy = client.export_batch(awkward, object_type, tmp_path / "legacy.zip", **FAST)
    finally:
        emu.set_legacy(False)
    with zipfile.ZipFile(batch.path) as a, zipfile.ZipFile(legacy.path) as b:
        assert sorted(a.namelist()) == sorted(b.namelist())
        assert all("/" not in n and not n.startswith(".") for n in a.namelist())
    assert sorted(batch.list_files()["structure_id"]) == sorted(awkward)
    written = batch.extract(tmp_path / "out")
    assert len(written) == len(awkward)


def test_export_batch_reports_progress_up_to_the_total(client, emu, targets, tmp_path):
    object_type, ids = targets
    seen: list[tuple[int, int | None]] = []
    emu.hold_next_task(polls=3)
    client.export_batch(ids, object_type, tmp_path / "a.zip",
                        on_progress=lambda d, t: seen.append((d, t)), **FAST)  # fmt: skip
    assert seen and seen[-1] == (len(ids), len(ids))
    assert [d for d, _ in seen] == sorted(d for d, _ in seen)


def test_legacy_fallback_reports_progress_per_element(client, emu, targets, tmp_path):
    object_type, ids = targets
    seen: list[tuple[int, int | None]] = []
    emu.set_legacy(True)
    try:
        with pytest.warns(LegacyExportWarning):
            client.export_batch(ids, object_type, tmp_path / "b.zip",
                                on_progress=lambda d, t: seen.append((d, t)), **FAST)  # fmt: skip
    finally:
        emu.set_legacy(False)
    assert seen == [(n, len(ids)) for n in range(1, len(ids) + 1)]
