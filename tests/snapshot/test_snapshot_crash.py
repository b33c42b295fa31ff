"""A snapshot killed at a random moment (SIGKILL, in a child process) leaves either a
complete snapshot or nothing that looks like one, and the next run completes it."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq
import pytest

from mddframes import read_snapshot
from mddframes.snapshot.bundles import JOURNAL
from mddframes.snapshot.layout import FORMAT_VERSION, FRAME_FILES, partial_folder

REPOSITORY = Path(__file__).resolve().parents[2]
KILLS = 8

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL is POSIX"),
    pytest.mark.pandas_once,
]


def _environment(emu, home: Path) -> dict[str, str]:
    return {
        **os.environ,
        "PYTHONPATH": str(REPOSITORY),
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / "config"),
        "MDD_TENANT": emu.tenant,
        "MDD_BASE_URL": emu.base_url,
        "MDD_REALM": emu.realm,
        "MDD_API_PREFIX": emu.api_prefix,
        "MDD_CLIENT_ID": emu.client_id,
        "MDD_CLIENT_SECRET": emu.client_secret,
    }


def _start(env: dict[str, str], folder: Path) -> subprocess.Popen[bytes]:
    command = [sys.executable, "-m", "mddframes", "snapshot", "DWH", str(folder), "--quiet"]
    return subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def _assert_complete(folder: Path) -> None:
    """Every file the manifest names is there and readable, with the rows it says."""
    snap = read_snapshot(folder)
    assert snap.failures.empty
    for entry in snap.manifest["files"].values():
        assert pq.read_metadata(folder / entry["file"]).num_rows == entry["rows"]
    for entry in snap.manifest["objects"]:
        metadata = pq.read_metadata(folder / entry["file"])
        assert metadata.row_group(entry["row_group"]).num_rows >= entry["offset"] + entry["rows"]
    tree = snap.read_tree()
    assert snap.manifest["files"].keys() == FRAME_FILES.keys()
    expected = {*tree["table_id"].dropna(), *tree["mapping_id"].dropna()}
    assert {o["id"] for o in snap.manifest["objects"]} == expected


def test_a_killed_snapshot_is_complete_or_absent_and_a_rerun_completes_it(emu, tmp_path):
    env = _environment(emu, tmp_path)
    started = time.monotonic()
    whole = _start(env, tmp_path / "whole")
    assert whole.wait(timeout=120) == 0, whole.stderr.read() if whole.stderr else ""
    duration = time.monotonic() - started
    _assert_complete(tmp_path / "whole")

    seed = random.randrange(1_000_000)
    chance = random.Random(seed)
    interrupted = 0
    for attempt in range(KILLS):
        folder = tmp_path / f"killed-{attempt}"
        child = _start(env, folder)
        # the run's first part is the interpreter starting: most kills land after it (a
        # later run is faster than the first, warm: the window ends before its end)
        time.sleep(chance.uniform(0.2 * duration, 0.95 * duration))
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=60)
        if folder.exists():  # it finished before the kill: then it is whole
            _assert_complete(folder)
            assert not partial_folder(folder).exists()
            continue
        interrupted += 1
        # no snapshot that looks complete: at most the hidden partial folder, no manifest
        assert not (folder / "manifest.json").exists()
        rerun = _start(env, folder)
        assert rerun.wait(timeout=120) == 0, (seed, rerun.stderr.read() if rerun.stderr else "")
        _assert_complete(folder)
        assert not partial_folder(folder).exists()
    # a kill within the time one run takes lands mid-way at least once (seed in the message)
    assert interrupted >= 1, f"no kill interrupted a snapshot (seed {seed})"


#: A child whose snapshot writes one object per file, slowly, so a kill lands mid-way.
_SLOW_CHILD = """
import sys, time
from mddframes.cli import main
from mddframes.snapshot import bundles, writer
bundles.OBJECTS_PER_FILE = 1
writer.OBJECTS_PER_CHUNK = 1
add = bundles.BundleWriter.add
def slow_add(self, *args):
    time.sleep(0.05)
    add(self, *args)
bundles.BundleWriter.add = slow_add
sys.exit(main(["snapshot", "DWH", sys.argv[1], "--quiet"]))
"""


def _journaled(folder: Path) -> list[dict]:
    path = partial_folder(folder) / JOURNAL
    if not path.exists():
        return []
    lines = []
    for text in path.read_text(encoding="utf-8").splitlines()[1:]:
        try:
            lines.append(json.loads(text))
        except ValueError:  # being written
            break
    return lines


def test_a_rerun_keeps_the_files_the_killed_run_journaled_and_reads_only_the_rest(
    emu, client, tmp_path
):
    folder = tmp_path / "resumed"
    child = subprocess.Popen([sys.executable, "-c", _SLOW_CHILD, str(folder)],
                             env=_environment(emu, tmp_path), stderr=subprocess.PIPE)  # fmt: skip
    deadline = time.monotonic() + 120
    while len(_journaled(folder)) < 4 and time.monotonic() < deadline and child.poll() is None:
        time.sleep(0.01)
    child.send_signal(signal.SIGKILL)
    child.wait(timeout=60)
    assert not folder.exists(), "the slowed child finished before the kill"
    lines = _journaled(folder)
    assert len(lines) >= 4
    partial = partial_folder(folder)
    # a kept file changed since (a torn write the journal cannot vouch for) is written again
    tampered = partial / lines[0]["file"]
    tampered.write_bytes(tampered.read_bytes()[:-1] + b"!")
    kept = {line["file"]: os.stat(partial / line["file"]) for line in lines[1:]}
    (partial / "tables" / "part-99999.parquet").write_bytes(b"PAR1")  # not journaled

    client.snapshot("DWH", folder, progress=False)

    _assert_complete(folder)
    snap = read_snapshot(folder)
    for relative, before in kept.items():  # the very same files: not read nor written again
        after = os.stat(folder / relative)
        assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)
    assert not (folder / "tables" / "part-99999.parquet").exists()
    assert not (folder / JOURNAL).exists()
    reused = {o["id"] for line in lines[1:] for o in line["objects"]}
    assert snap.manifest["resumed"] == len(reused)
    rewritten = {o["id"] for o in lines[0]["objects"]}
    for entry in snap.manifest["objects"]:
        if entry["id"] in reused:
            assert entry["file"] in kept
        if entry["id"] in rewritten:
            assert entry["file"] != lines[0]["file"]
    for entry in snap.manifest["objects"]:
        read = client.read_table if entry["kind"] == "table" else client.read_mapping
        own = snap.read_table if entry["kind"] == "table" else snap.read_mapping
        pd.testing.assert_frame_equal(own(entry["id"]), read(entry["id"]))


def test_a_partial_folder_of_another_system_is_started_over(client, tmp_path):
    folder = tmp_path / "other"
    client.snapshot("LAB", tmp_path / "lab", progress=False, structures=False)
    partial = partial_folder(folder)
    partial.mkdir()
    (partial / "tables").mkdir()
    # LAB's files and a journal saying so: not reused for a snapshot of DWH
    lab = tmp_path / "lab"
    for path in (lab / "tables").glob("*.parquet"):
        (partial / "tables" / path.name).write_bytes(path.read_bytes())
    header = {"format": "mddframes-snapshot", "version": FORMAT_VERSION, "service": client.base_url,
              "tenant": client.api.tenant, "system": "LAB"}  # fmt: skip
    (partial / JOURNAL).write_text(json.dumps({"header": header}) + "\n")

    client.snapshot("DWH", folder, progress=False, structures=False)

    snap = read_snapshot(folder)
    tree = snap.read_tree()
    assert {o["id"] for o in snap.manifest["objects"]} == {
        *tree["table_id"].dropna(),
        *tree["mapping_id"].dropna(),
    }
    assert len(list((folder / "tables").glob("*.parquet"))) == len(
        {o["file"] for o in snap.manifest["objects"] if o["kind"] == "table"}
    )
