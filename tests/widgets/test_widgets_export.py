"""ExportPanel against the emulator: run() and clicks, batch and single, failures, re-attach."""

from __future__ import annotations

import zipfile

import pytest
from widget_helpers import displayed, output_text, stderr_text

from mddframes import Client, ExportArchive
from mddframes.errors import ExportFailedError, ExportTimeoutError, InvalidArgumentError
from mddframes.widgets import BusyError, ExportPanel, covering_object_types

FAST = 0.02


@pytest.fixture
def hubs(client):
    tree = client.read_tree("DWH")
    return tree.loc[tree["type"] == "HUB", "id"].tolist()


@pytest.fixture
def panel(client, tmp_path):
    panel = ExportPanel(client, "DWH", dest=tmp_path / "exports", poll_interval=FAST)
    panel.picker.type_filter.value = "HUB"
    panel.picker.select_shown()
    panel.object_type.value = "sql-ddl"
    return panel


def zip_names(path) -> list[str]:
    with zipfile.ZipFile(path) as zf:
        return zf.namelist()


def test_object_types_offered_are_those_serving_every_selected_type(client):
    panel = ExportPanel(client, "DWH")
    everything = set(panel.object_types["id"])
    assert {value for _, value in panel.object_type.options} == everything  # nothing selected
    folder = panel.picker.tree.loc[panel.picker.tree["type"] == "FOLDER", "id"].iloc[0]
    panel.picker.select([folder])
    assert [v for _, v in panel.object_type.options] == ["markdown-doc"]
    view = panel.picker.tree.loc[panel.picker.tree["type"] == "VIEW", "id"].iloc[0]
    panel.picker.select([folder, view])
    expected = covering_object_types(panel.object_types, {"FOLDER", "VIEW"})["id"].tolist()
    assert [v for _, v in panel.object_type.options] == expected == ["markdown-doc"]
    source = panel.picker.tree.loc[panel.picker.tree["type"] == "SOURCE_TABLE", "id"].iloc[0]
    panel.picker.select([folder, view, source])
    assert [v for _, v in panel.object_type.options] == ["markdown-doc"]
    assert panel.object_type.value == "markdown-doc"


def test_no_covering_object_type_disables_export_and_says_why(client):
    panel = ExportPanel(client, "DWH")
    panel.object_types = panel.object_types[panel.object_types["id"] != "markdown-doc"]
    folder = panel.picker.tree.loc[panel.picker.tree["type"] == "FOLDER", "id"].iloc[0]
    panel.picker.select([folder])
    assert panel.object_type.options == () and panel.object_type.value is None
    assert panel.button.disabled
    assert "FOLDER" in panel.coverage.value
    with pytest.raises(InvalidArgumentError, match="no object type"):
        panel.run()


def test_batch_run_returns_the_zip_with_one_file_per_hub(panel, hubs, tmp_path):
    archive = panel.run()
    assert isinstance(archive, ExportArchive) and archive.task_id
    assert archive.path.parent == tmp_path / "exports"
    names = zip_names(archive.path)
    assert len(names) == len(hubs) == 18
    assert panel.progress.value == panel.progress.max == len(hubs)
    assert panel.progress.bar_style == "success"
    text = output_text(panel.output)
    assert str(archive.path) in text and f"{len(hubs)} file(s)" in text
    bundles = displayed(panel.output)
    assert len(bundles) == 2  # the files frame, then the first script highlighted
    assert names[0].rsplit("/", 1)[-1] in bundles[0]["text/plain"]
    preview = bundles[1]["text/html"]
    assert names[0] in preview and "CREATE" in preview and 'class="highlight"' in preview


def test_export_button_runs_in_a_thread_and_re_enables(panel, hubs):
    assert not panel.button.disabled
    panel.button.click()
    archive = panel.wait(30)
    assert isinstance(archive, ExportArchive)
    assert len(zip_names(archive.path)) == len(hubs)
    assert panel.last_error is None and not panel.busy
    assert not panel.button.disabled


def test_single_mode_writes_one_file_per_hub(panel, hubs, tmp_path):
    panel.mode.value = "single"
    files = panel.run()
    assert files["id"].tolist() == panel.picker.selected and files["ok"].all()
    written = sorted(p.name for p in (tmp_path / "exports").iterdir())
    assert written == sorted(files["file_name"])
    assert panel.progress.value == len(hubs)
    assert files["file_name"].iloc[0] in displayed(panel.output)[1]["text/html"]


def test_empty_selection_is_refused_in_words(client, tmp_path):
    panel = ExportPanel(client, "DWH", dest=tmp_path)
    assert panel.button.disabled
    with pytest.raises(InvalidArgumentError, match="no elements are selected"):
        panel.run()
    assert "no elements are selected" in stderr_text(panel.output)
    assert list(tmp_path.iterdir()) == []


def test_failing_task_shows_the_service_message_and_what_to_do(panel, emu):
    emu.fail_next_task("disk full (injected)")
    panel.button.click()
    assert panel.wait(30) is None
    assert isinstance(panel.last_error, ExportFailedError)
    message = stderr_text(panel.output)
    assert "disk full (injected)" in message and "What to do:" in message
    assert "Traceback" not in message
    assert panel.progress.bar_style == "danger"
    assert not panel.button.disabled


def test_time_out_offers_re_attach_which_finishes_the_same_task(panel, emu, hubs):
    panel.timeout = 0.3
    emu.hold_next_task(seconds=1.5)
    with pytest.raises(ExportTimeoutError) as caught:
        panel.run()
    task_id = caught.value.task_id
    assert panel.pending_task_id == task_id
    assert panel.reattach_button.layout.display is None  # shown
    assert task_id in stderr_text(panel.output) and "Re-attach" in stderr_text(panel.output)
    panel.timeout = None
    panel.reattach_button.click()
    archive = panel.wait(30)
    assert panel.last_error is None, stderr_text(panel.output)
    assert isinstance(archive, ExportArchive) and archive.task_id == task_id
    assert len(zip_names(archive.path)) == len(hubs)
    assert panel.pending_task_id is None and panel.reattach_button.layout.display == "none"


def test_re_attach_without_a_timed_out_task_is_refused(panel):
    with pytest.raises(InvalidArgumentError, match="no export task timed out"):
        panel.reattach()


def test_legacy_service_falls_back_with_the_warning_in_the_output(panel, emu, hubs):
    emu.set_legacy(True)
    try:
        archive = panel.run()
    finally:
        emu.set_legacy(False)
    assert archive.task_id is None
    assert len(zip_names(archive.path)) == len(hubs)
    assert "LegacyExportWarning" in stderr_text(panel.output)
    assert "single exports (fallback)" in output_text(panel.output)
    assert panel.progress.value == len(hubs)


def test_token_expiring_every_2_s_during_a_batch_export(emu, hubs, tmp_path):
    emu.set_token_ttl(2)
    with Client.from_emulator(emu) as client:
        panel = ExportPanel(client, "DWH", dest=tmp_path, poll_interval=0.2)
        panel.picker.select(hubs)
        panel.object_type.value = "sql-ddl"
        emu.hold_next_task(seconds=4.5)
        archive = panel.run()
    assert len(zip_names(archive.path)) == len(hubs)
    assert panel.last_error is None and stderr_text(panel.output) == ""


def test_a_second_run_while_busy_is_refused(panel, emu):
    emu.hold_next_task(seconds=1.0)
    panel.button.click()
    with pytest.raises(BusyError, match="still busy"):
        panel.run()
    assert isinstance(panel.wait(30), ExportArchive)
