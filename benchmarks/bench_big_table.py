"""``read_table`` of a 35 MB table: wall time against the bare floor, and peak memory.

1. Wall time of ``client.read_table`` against what a user writes without mddframes:
   ``requests.get`` + ``json.loads`` + ``pd.DataFrame(payload["data"])``, paired and
   interleaved in the same run (goal: at most 0.75x the floor, issue 46; the floor has no
   dtypes, no column order, no write-back context and holds the whole parsed
   document, which ``read_table`` never does).
2. Peak memory of ``read_table`` against the size of the payload's JSON text (goal: at
   most 2x, issue 46): the peak RSS growth of a child process doing the one read
   (:func:`benchmarks.common.rss_growth`; tracemalloc does not see Arrow's buffers,
   which the read is built from). The emulator runs in a process of its own, so only
   the client's memory counts; the floor's own peak is printed as an info line.
"""

from __future__ import annotations

import json
from dataclasses import replace

import pandas as pd

from benchmarks.common import (
    Result,
    floor_session,
    median_at_most,
    memory_result,
    paired_times,
    remote_emulator,
    rss_growth,
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
        floor_peaks = rss_growth(emu, table_id, "floor", "numpy_nullable")
        peaks = rss_growth(emu, table_id, "read", "numpy_nullable")
        client.contexts.forget("table", table_id)
        session.close()
    mb = 1e6
    return [
        median_at_most(
            f"read_table {size / mb:.0f} MB table vs get+json+DataFrame", base, cand, 0.75
        ),  # fmt: skip
        memory_result(
            f"read_table peak RSS growth / payload, {size / mb:.0f} MB", size, peaks, 2.0
        ),  # fmt: skip
        replace(
            memory_result("  floor's (get + json.loads + DataFrame)", size, floor_peaks, 0),
            goal="(info)",
            ok=True,
        ),  # fmt: skip
    ]
