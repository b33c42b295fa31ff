"""Recording a session (issue 37): its cost in time and memory, side by side with recording off.

1. ``read_tables`` of 200 tables (8 workers), recorded into a HAR file vs not recorded,
   against a service that answers ``getTable`` in 20 ms (the latency the rate-limit
   benchmark takes for a service): a session's time, goal at most 1.10x. And the same
   with no latency at all, where nothing hides the recorder's CPU (every call's body is
   teed, scrubbed and written under the GIL the reads need): the worst case, kept as a
   guard at most 1.50x (no goal of the issue's; the closing note of issue 37 says why).
2. ``read_table`` of a 31 MB table, recorded vs not; goal at most 1.10x. The recorded run
   includes writing the file (the ``with`` block's end).
3. Peak memory (tracemalloc) of the recorded 31 MB read against the unrecorded one; goal
   at most 1.2x (the recorder streams the body to disk, it never holds it).

The emulator runs in a child process (only the client's time and memory count); each
pair of runs is interleaved (nine pairs, fifteen for the 31 MB read), and the ratio is
the median with min and max.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

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

TABLES_ELEMENTS = 4_100  # about one table per 20 elements: 200+ tables
N_TABLES = 200
LATENCY = 0.020  # a service's answer time (as bench_ratelimit's no-limit case)
WORKERS = 8
ROWS, COLUMNS = 115_000, 12  # about 31 MB of JSON
REPEAT = 9  # pairs: one read varies by 20 % on these shared cores, a median of 5 by ~8 %
BIG_REPEAT = 15  # the 31 MB read's pairs: one pair's ratio spans 0.7-1.5 here


def bench_tables(folder: Path, latency: float, limit: float) -> list[Result]:
    with (
        remote_emulator(TABLES_ELEMENTS) as emu,
        Client.from_emulator(emu, max_workers=WORKERS) as client,
    ):
        ids = client.read_tree("SCALE")["table_id"].dropna().tolist()[:N_TABLES]
        client.read_tables(ids[:5], progress=False)  # warm the pool and the token
        if latency:
            emu.inject_faults(latency=latency, operations=["getTable"])

        def plain() -> object:
            return client.read_tables(ids, max_workers=WORKERS, progress=False)

        def recorded() -> object:
            with client.recording(folder / "tables.har"):
                return client.read_tables(ids, max_workers=WORKERS, progress=False)

        base, cand = paired_times(plain, recorded, repeat=REPEAT)
        size = (folder / "tables.har").stat().st_size / 1e6
    answered = f"getTable in {latency * 1000:g} ms" if latency else "no latency (worst case)"
    name = f"read_tables {len(ids)} tables, {answered}, recorded ({size:.0f} MB HAR) vs not"
    return [median_at_most(name, base, cand, limit)]


def bench_big_table(folder: Path) -> list[Result]:
    with remote_emulator(100) as emu, Client.from_emulator(emu) as client:
        table_id = client.read_tree("SCALE")["table_id"].dropna().iloc[0]
        client.api.put_table(table_id, big_table(table_id, ROWS, COLUMNS))

        def plain() -> object:
            return client.read_table(table_id)

        def recorded() -> object:
            with client.recording(folder / "big.har"):
                return client.read_table(table_id)

        plain()
        base, cand = paired_times(plain, recorded, repeat=BIG_REPEAT)
        size = (folder / "big.har").stat().st_size / 1e6
        plain_peak = peak_memory(plain)
        recorded_peak = peak_memory(recorded)
        client.contexts.forget("table", table_id)
    return [
        median_at_most(f"read_table {size:.0f} MB recorded vs not", base, cand, 1.10),
        at_most(
            f"  peak memory of the recorded {size:.0f} MB read vs not",
            plain_peak / 1e6,
            recorded_peak / 1e6,
            1.2,
            unit="MB",
        ),
    ]


def run() -> list[Result]:
    """Both sessions, each against recording off in the same run."""
    with tempfile.TemporaryDirectory(prefix="mdd-bench-recording-") as folder:
        return [
            *bench_tables(Path(folder), LATENCY, 1.10),
            *bench_tables(Path(folder), 0.0, 1.50),
            *bench_big_table(Path(folder)),
        ]
