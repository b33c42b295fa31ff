"""Backups are written atomically (temp file, fsync, then the final name) and a disk
failure is a BackupError naming where, with nothing sent and no partial file left."""

from __future__ import annotations

import errno
import os

import pytest

from mddframes.errors import BackupError, MddError
from mddframes.writing import backup_folder, load_backup, save_backup


@pytest.fixture
def edit(client):
    """A table id and its frame with one real change."""
    table_id = client.read_tree("DWH")["table_id"].dropna().iloc[0]
    frame = client.read_table(table_id)
    frame.loc[0, "notes"] = "edited"
    return table_id, frame


def files_under(folder):
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file())


def test_a_backup_dir_that_is_a_file_is_a_backup_error_naming_it_and_nothing_is_sent(
    client, emu, edit, tmp_path
):
    table_id, frame = edit
    blocker = tmp_path / "backups"
    blocker.write_text("not a folder", encoding="utf-8")
    emu.reset_counters()

    with pytest.raises(BackupError) as info:
        client.write_table(table_id, frame, backup_dir=blocker)

    assert isinstance(info.value, MddError) and isinstance(info.value.__cause__, OSError)
    assert str(blocker) in str(info.value) and repr(table_id) in str(info.value)
    assert "nothing was sent" in str(info.value)
    assert emu.counters().get("tableUpdate", 0) == 0
    assert blocker.read_text(encoding="utf-8") == "not a folder"
    assert files_under(tmp_path) == ["backups"]


def test_a_full_disk_while_writing_leaves_no_partial_backup(client, edit, tmp_path, monkeypatch):
    table_id, frame = edit

    def disk_full(fd):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "fsync", disk_full)
    with pytest.raises(BackupError, match=os.strerror(errno.ENOSPC)):
        client.write_table(table_id, frame, backup_dir=tmp_path)
    monkeypatch.undo()

    folder = backup_folder(client.api, "table", table_id, tmp_path)
    assert folder.is_dir() and files_under(folder) == []  # no temp, no truncated backup
    assert client.api.get_table(table_id)["data"][0].get("notes") != "edited"
    written = client.write_table(table_id, frame, backup_dir=tmp_path)  # the same edit, now
    assert written.verified and files_under(folder) == [written.backup.name]


def test_saved_backups_are_whole_files_with_distinct_names_and_no_temp_left(client, tmp_path):
    payload = {"data": [{"a": 1, "text": "é"}], "metadata": {}}
    paths = [save_backup(client.api, "table", "t-1", payload, backup_dir=tmp_path)
             for _ in range(5)]  # fmt: skip

    assert len(set(paths)) == 5 and all(p.suffix == ".json" for p in paths)
    assert files_under(paths[0].parent) == sorted(p.name for p in paths)
    assert [load_backup(p)["payload"] for p in paths] == [payload] * 5


def test_without_hard_links_the_backup_is_renamed_into_place(client, tmp_path, monkeypatch):
    def no_links(src, dst):
        raise PermissionError(errno.EPERM, "hard links not supported", str(dst))

    monkeypatch.setattr(os, "link", no_links)
    payload = {"data": [{"a": 2}]}
    first = save_backup(client.api, "mapping", "m-1", payload, backup_dir=tmp_path)
    second = save_backup(client.api, "mapping", "m-1", payload, backup_dir=tmp_path)

    assert first != second
    assert files_under(first.parent) == sorted([first.name, second.name])
    assert load_backup(second)["payload"] == payload
