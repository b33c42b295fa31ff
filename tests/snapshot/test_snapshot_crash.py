"""A snapshot killed at a random moment (SIGKILL, in a child process) leaves either a
complete snapshot or nothing that looks like one, and the next run completes it."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from mddframes import read_snapshot
from mddframes.snapshot.layout import FRAME_FILES, partial_folder

REPOSITORY = Path(__file__).resolve().parents[2]
KILLS = 5

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL is POSIX"),
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
        assert pq.read_metadata(folder / entry["file"]).num_rows == entry["rows"]
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
        # the run's first part is the interpreter starting: most kills land after it
        time.sleep(chance.uniform(0.3 * duration, 1.05 * duration))
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
