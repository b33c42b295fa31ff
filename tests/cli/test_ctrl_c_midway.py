"""Ctrl-C in the middle of a command's work: a real SIGINT to a ``mddframes`` process.

Each command runs as ``python -m mddframes`` against the real emulator, slowed by
injected latency; once its files exist (or, for the read-only search, once it has
read part of the system), it gets SIGINT. It must exit 130, and its message must name
what is on disk (and nothing that is not), with nothing half-written left where it
would pass for complete.
"""

from __future__ import annotations

import csv
import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from mddframes import Client
from mddframes.cli import EXIT_INTERRUPTED
from mddframes.emulator.state import sample_dataset
from mddframes.snapshot.layout import partial_folder
from mddframes.tables_as_code import pull_folder

pytestmark = [pytest.mark.slow, pytest.mark.emulator, pytest.mark.pandas_once]

WORKTREE = Path(__file__).resolve().parents[2]
#: The element types the sample's 'sql-ddl' object type applies to.
TABLE_TYPES = {"SOURCE_TABLE", "STAGE_TABLE", "HUB", "LINK", "SATELLITE", "REFERENCE_TABLE"}


@pytest.fixture
def env(emu, tmp_path):
    """The environment of the command: the emulator's MDD_* variables, no profile."""
    environment = {k: v for k, v in os.environ.items() if not k.startswith("MDD_")}
    environment.update(
        PYTHONPATH=str(WORKTREE), HOME=str(tmp_path), XDG_CONFIG_HOME=str(tmp_path / "config"),
        MDD_TENANT=emu.tenant, MDD_BASE_URL=emu.base_url, MDD_REALM=emu.realm,
        MDD_API_PREFIX=emu.api_prefix, MDD_CLIENT_ID=emu.client_id,
        MDD_CLIENT_SECRET=emu.client_secret, MDD_BACKUP_DIR=str(tmp_path / "backups"),
    )  # fmt: skip
    return environment


def interrupt(argv: list[str], env: dict[str, str], ready: Callable[[], bool]) -> tuple[int, str]:
    """Run ``mddframes argv``, send SIGINT once ``ready()``; its exit code and stderr."""
    process = subprocess.Popen(  # noqa: S603 - our own interpreter and module
        [sys.executable, "-m", "mddframes", *argv],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 30
        while not ready():
            if process.poll() is not None:
                raise AssertionError(f"it ended before the interruption: {process.stderr.read()}")
            assert time.monotonic() < deadline, "the command never got mid-way"
            time.sleep(0.02)
        process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=20)
        return process.returncode, err
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def said(err: str) -> str:
    """The interruption's message (what follows ``interrupted: ``), on one line."""
    assert "interrupted: " in err, err
    return " ".join(err[err.index("interrupted: ") :].split())


def paths_in(message: str, root: Path) -> list[Path]:
    """Every path under ``root`` the message names."""
    return [Path(p.rstrip(".;,:)'")) for p in re.findall(re.escape(str(root)) + r"\S*", message)]


def test_snapshot_names_its_partial_folder_and_the_files_finished(emu, env, tmp_path):
    emu.inject_faults(latency=0.05, operations=["getTable", "getMapping"])
    final = tmp_path / "snap"
    partial = partial_folder(final)

    def some_tables_closed() -> bool:
        journal = partial / "journal.jsonl"
        return journal.is_file() and journal.read_text("utf-8").count('"file"') >= 2

    code, err = interrupt(["snapshot", "DWH", str(final), "--max-workers", "2"], env,
                          some_tables_closed)  # fmt: skip
    assert code == EXIT_INTERRUPTED, err
    message = said(err)
    assert not final.exists()  # nothing passes for a finished snapshot
    assert not (partial / "manifest.json").exists()
    lines = [json.loads(line) for line in (partial / "journal.jsonl").read_text().splitlines()]
    files = [line for line in lines if "file" in line]
    objects = sum(len(line["objects"]) for line in files)
    assert f"{partial} keeps the {len(files)} file(s) finished so far ({objects} object(s))" in (
        message
    )
    for line in files:
        assert (partial / line["file"]).is_file()
    assert f"mddframes snapshot DWH {final}" in message
    for path in paths_in(message, tmp_path):
        assert path == final or path.exists(), f"{path} is named but does not exist"


def test_pull_leaves_only_whole_objects_and_says_so(emu, env, tmp_path):
    emu.inject_faults(latency=0.05, operations=["getTable", "getMapping"])
    folder = tmp_path / "dwh"

    def some_pulled() -> bool:
        return len(list((folder / "tables").glob("*.meta.json"))) >= 3

    code, err = interrupt(["pull", "DWH", str(folder)], env, some_pulled)
    assert code == EXIT_INTERRUPTED, err
    message = said(err)
    assert f"{folder} holds only the objects pulled so far" in message
    assert f"mddframes pull DWH {folder}" in message
    written = sorted((folder / "tables").iterdir())
    assert not [p for p in written if p.name.startswith(".tmp-")]  # no half-written file
    # every object file has its sidecar: each object was written whole
    csvs = {p.name.removesuffix(".csv") for p in written if p.suffix == ".csv"}
    sidecars = {p.name.removesuffix(".meta.json") for p in written if p.name.endswith(".meta.json")}
    assert csvs == sidecars and len(csvs) >= 3
    for path in paths_in(message, tmp_path):
        assert path.exists(), f"{path} is named but does not exist"


def _edit_first_rows(folder: Path) -> int:
    """Append a letter to one text cell of the first row of each object file it can."""
    edited = 0
    for path in sorted(folder.rglob("*.csv")):
        lines = path.read_text("utf-8").split("\n")
        if len(lines) < 3:
            continue
        for value in next(csv.reader([lines[1]]))[1:]:
            plain = value.replace(" ", "").isalpha() and value not in ("true", "false", "null")
            if plain and lines[1].count(f",{value},") == 1:
                lines[1] = lines[1].replace(f",{value},", f",{value}x,", 1)
                path.write_text("\n".join(lines), "utf-8")
                edited += 1
                break
    return edited


def test_apply_names_the_batch_it_left_and_the_batch_resumes(client, emu, env, tmp_path):
    folder = tmp_path / "dwh"
    # a part of the system (fewer reads to plan): the tables and mappings with a text cell
    ids = [f"tbl-{n:04d}" for n in (*range(1, 19), *range(109, 113))] + ["map-0094", "map-0095"]
    pull_folder(client.api, "DWH", folder, ids=ids, progress=False)
    assert _edit_first_rows(folder) >= 8
    backups = tmp_path / "bk"
    journals = backups / emu.tenant / "journal"
    emu.inject_faults(latency=0.15, operations=["tableUpdate", "mappingUpdate"])

    def some_written() -> bool:
        found = list(journals.glob("*.jsonl")) if journals.is_dir() else []
        return bool(found) and '"verified"' in found[0].read_text("utf-8")

    code, err = interrupt(["apply", str(folder), "--backup-dir", str(backups)],
                          {**env, "MDD_MAX_WORKERS": "1"}, some_written)  # fmt: skip
    emu.clear_faults()
    assert code == EXIT_INTERRUPTED, err
    message = said(err)
    (journal,) = journals.glob("*.jsonl")
    batch = journal.stem
    assert f"batch {batch} (" in message and f"journal {journal}" in message, message
    assert f"mddframes resume {batch} --backup-dir {backups}" in message
    assert f"mddframes roll-back {batch} --backup-dir {backups}" in message
    for path in paths_in(message, tmp_path):
        assert path.exists(), f"{path} is named but does not exist"
    # the batch named is the one to finish: resuming it writes the rest
    with Client.from_emulator(emu) as again:
        pending = again.pending_writes(backup_dir=backups)
        assert pending["batch"].tolist() == [batch]
        assert pending["state"].tolist() == ["interrupted"]
        resumed = again.resume(batch, backup_dir=backups, progress=False)
        assert resumed.attrs["finished"] is True, resumed
        assert set(resumed["action"]) == {"sent", "already"}  # some were written before


def test_search_stops_and_leaves_no_output_file(emu, env, tmp_path):
    emu.inject_faults(latency=0.05)
    out = tmp_path / "found.csv"

    def reading() -> bool:
        return sum(emu.counters().values()) >= 8

    emu.reset_counters()
    code, err = interrupt(["search", "DWH", "Afghanistan", "-o", str(out)], env, reading)
    assert code == EXIT_INTERRUPTED, err
    assert "search stopped" in said(err) and "nothing is left behind" in said(err)
    assert not out.exists()


def test_export_says_no_zip_was_written_and_leaves_none(emu, env, tmp_path):
    # a service without batch export: the scripts go one by one to a scratch folder
    emu.set_legacy(True)
    emu.inject_faults(latency=0.1, operations=["externalExportStructure"])
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    ids = tmp_path / "ids.txt"
    tables = [e["id"] for e in sample_dataset().elements if e["type"] in TABLE_TYPES]
    assert len(tables) >= 20
    ids.write_text("\n".join(tables) + "\n", "utf-8")
    dest = tmp_path / "out.zip"

    def scripts_on_disk() -> bool:
        return len(list(scratch.glob("mddframes-legacy-*/*.part"))) >= 3

    try:
        code, err = interrupt(
            ["export", "sql-ddl", "--ids-file", str(ids), "--dest", str(dest)],
            {**env, "TMPDIR": str(scratch), "MDD_MAX_WORKERS": "2"},
            scripts_on_disk,
        )
    finally:
        emu.set_legacy(False)
    assert code == EXIT_INTERRUPTED, err
    message = said(err)
    assert f"no zip was written to {dest}" in message
    assert not dest.exists() and not dest.with_name(dest.name + ".part").exists()
    assert list(scratch.iterdir()) == []  # the scratch copies went with it
