"""``read_table`` of a 35 MB table: wall time against the bare floor, and peak memory.

1. Wall time of ``client.read_table`` against what a user writes without mddframes:
   ``requests.get`` + ``json.loads`` + ``pd.DataFrame(payload["data"])``, paired and
   interleaved in the same run (goal: at most 1.5x the floor; the floor has no
   dtypes, no column order, no write-back context and holds the whole parsed
   document, which ``read_table`` never does).
2. Peak memory (tracemalloc) of ``read_table`` against the size of the payload's JSON
   text (goal: at most 3x). The emulator runs in a child process, so only the
   client's memory counts; the floor's own peak is printed as an info line.
"""

from __future__ import annotations

import json

import pandas as pd

from benchmarks.common import (
    Result,
    at_most,
    floor_session,
    median_at_most,
    paired_times,
    peak_memory,
    remote_emulator,
)
from mddframes import Client
from mddframes.emulator.scale import big_table

ROWS, COLUMNS = 130_000, 12  # about 35 MB of JSON
REPEAT = 5


def run() -> list[Result]:
    """Both measures, each against its floor measured in the same run."""
    with remote_emulator(100) as emu, Client.from_emulator(emu) as client:
        table_id = client.read_tree("SCALE")["table_id"].dropna().iloc[0]
        client.api.put_table(table_id, big_table(table_id, ROWS, COLUMNS))
        url = f"{emu.api_url}/api/table/{table_id}"
        session = floor_session(emu)

        def floor() -> pd.DataFrame:
            response = session.get(url, timeout=120)
            response.raise_for_status()
            return pd.DataFrame(json.loads(response.content)["data"])

        def candidate() -> pd.DataFrame:
            return client.read_table(table_id)

        size = float(len(session.get(url, timeout=120).content))
        rows = len(floor())
        if len(candidate()) != rows:
            raise RuntimeError("read_table and the floor disagree on the number of rows")
        base, cand = paired_times(floor, candidate, repeat=REPEAT)
        floor_peak = peak_memory(floor)
        peak = peak_memory(candidate)
        client.contexts.forget("table", table_id)
        session.close()
    mb = 1e6
    return [
        median_at_most(
            f"read_table {size / mb:.0f} MB table vs get+json+DataFrame", base, cand, 1.5
        ),  # fmt: skip
        at_most(
            f"read_table peak memory, {size / mb:.0f} MB payload",
            size / mb,
            peak / mb,
            3.0,
            unit="MB",
        ),  # fmt: skip
        Result(
            "  floor's peak memory (get + json.loads + DataFrame)",
            size / mb,
            floor_peak / mb,
            "MB",
            "(info)",
            floor_peak / size,
            True,
        ),  # fmt: skip
    ]
