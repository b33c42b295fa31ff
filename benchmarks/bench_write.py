"""``write_table`` of a one-cell edit on a 35 MB table: peak memory and wall time.

1. Peak traced memory (tracemalloc) of ``client.write_table`` against the size of the
   table's JSON (goal: at most 4x; the limit is about 2x, the old and the new
   document). The frame was read before the measure, as a user's frame would be.
2. Wall time of the same write against the bare floor of the same run: ``requests``
   GET + PUT + GET of the same document as bytes, no parsing (goal: at most 2x).
   Each write edits a different cell, so every measured call fetches, backs up,
   sends and reads back (no call is ever skipped as unchanged).

The emulator runs in a child process (:func:`benchmarks.common.remote_emulator`).
"""

from __future__ import annotations

import tempfile

import requests

from benchmarks.common import (
    Result,
    at_most,
    median_at_most,
    paired_times,
    peak_memory,
    remote_emulator,
)
from mddframes import Client
from mddframes.emulator.scale import big_table

ROWS, COLUMNS = 130_000, 12  # about 35 MB of JSON, as the read benchmark
REPEAT = 3


def run() -> list[Result]:
    """Both measures, each against its floor measured in the same run."""
    with (
        remote_emulator(100) as emu,
        Client.from_emulator(emu) as client,
        tempfile.TemporaryDirectory() as backups,
    ):
        table_id = client.read_tree("SCALE")["table_id"].dropna().iloc[0]
        client.api.put_table(table_id, big_table(table_id, ROWS, COLUMNS))
        url = f"{emu.api_url}/api/table/{table_id}"
        session = requests.Session()
        session.headers["Authorization"] = f"Bearer {emu.token()}"
        session.headers["Content-Type"] = "application/json"
        frame = client.read_table(table_id)
        edits = iter(range(1, 1_000_000))

        def floor() -> None:
            document = session.get(url, timeout=120)
            document.raise_for_status()
            session.put(url, data=document.content, timeout=120).raise_for_status()
            session.get(url, timeout=120).raise_for_status()

        def candidate() -> None:
            frame.at[0, "name"] = f"edited {next(edits)}"
            result = client.write_table(table_id, frame, backup_dir=backups)
            if result.status != "written":
                raise RuntimeError(f"write_table did not write: {result.status}")

        size = float(len(session.get(url, timeout=120).content))
        candidate()  # warm: the first write also proves the setup
        base, cand = paired_times(floor, candidate, repeat=REPEAT)
        peak = peak_memory(candidate)
        session.close()
    mb = 1e6
    return [
        at_most(
            f"write_table one-cell edit peak memory, {size / mb:.0f} MB table",
            size / mb,
            peak / mb,
            4.0,
            unit="MB",
        ),  # fmt: skip
        median_at_most(
            f"write_table one-cell edit {size / mb:.0f} MB vs GET+PUT+GET", base, cand, 2.0
        ),  # fmt: skip
    ]
