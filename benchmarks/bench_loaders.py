"""Loader benchmarks (goals of issues 12 and 46).

1. ``read_tree`` of 100,000 elements against the bare floor: ``requests.get`` +
   ``json.loads`` + ``pd.DataFrame(list)`` with the same kind of token, no depth, path
   or dtypes (goal: at most 0.8x the floor, issue 46; it was 1.0x: no slower while
   doing more).
2. ``read_tables`` of 200 tables with 20 ms injected latency (8 workers, no progress
   bar) against the sequential loop a user writes: ``requests.get`` + ``json.loads`` +
   ``pd.DataFrame(payload["data"])`` per table (goal: at least 7x faster), and against
   the fetch-only ceiling of the same run: ``client.api.get_table`` on the same 8
   workers with no frames built (goal: at least 95% of its speed).

Each figure is the median of paired, interleaved runs, printed with its min and max.
The emulator runs in a child process (:func:`benchmarks.common.remote_emulator`), as a real service is
remote: in the benchmark's own process its request handling would compete with the
client for the GIL and measure the emulator rather than the client.
"""

from __future__ import annotations

import json
import logging

import pandas as pd

from benchmarks.common import (
    Result,
    floor_session,
    median_at_most,
    median_speedup,
    paired_times,
    remote_emulator,
)
from mddframes import Client
from mddframes.bulk import run_bulk

log = logging.getLogger(__name__)

TREE_ELEMENTS = 100_000
TABLES_ELEMENTS = 4_100  # the scale data has a table for about 1 element in 20: 200+ tables
N_TABLES = 200
LATENCY = 0.020
WORKERS = 8
SYSTEM = "SCALE"
TREE_REPEAT = 7
TABLES_REPEAT = 3


def bench_tree() -> Result:
    """``read_tree`` of 100,000 elements vs requests + json.loads + DataFrame."""
    with remote_emulator(TREE_ELEMENTS) as emu, Client.from_emulator(emu) as client:
        url = f"{emu.api_url}/api/system/{SYSTEM}/tree"
        session = floor_session(emu)

        def floor() -> pd.DataFrame:
            response = session.get(url, timeout=120)
            response.raise_for_status()
            return pd.DataFrame(json.loads(response.content))

        def candidate() -> pd.DataFrame:
            return client.read_tree(SYSTEM)

        rows = len(floor())
        frame = candidate()
        if len(frame) != rows or rows != TREE_ELEMENTS:
            raise RuntimeError(f"tree sizes differ: floor {rows}, read_tree {len(frame)}")
        base, cand = paired_times(floor, candidate, repeat=TREE_REPEAT)
        session.close()
    return median_at_most(
        f"read_tree {TREE_ELEMENTS:,} elements vs get+json+DataFrame", base, cand, 0.8
    )


def bench_tables() -> list[Result]:
    """``read_tables`` of 200 tables at 20 ms latency vs the user's loop and vs the ceiling."""
    with (
        remote_emulator(TABLES_ELEMENTS) as emu,
        Client.from_emulator(emu, max_workers=WORKERS) as client,
    ):
        ids = client.read_tree(SYSTEM)["table_id"].dropna().tolist()[:N_TABLES]
        if len(ids) < N_TABLES:
            log.warning("only %d tables in the scale data (wanted %d)", len(ids), N_TABLES)
        client.read_tables(ids[:5], progress=False)  # warm the pool and the token
        session = floor_session(emu)
        emu.inject_faults(latency=LATENCY, operations=["getTable"])
        try:

            def user_loop() -> list[pd.DataFrame]:  # what a user writes without mddframes
                frames = []
                for table_id in ids:
                    response = session.get(f"{emu.api_url}/api/table/{table_id}", timeout=60)
                    response.raise_for_status()
                    frames.append(pd.DataFrame(json.loads(response.content)["data"]))
                return frames

            def concurrent() -> pd.DataFrame:
                return client.read_tables(ids, max_workers=WORKERS, progress=False)

            def fetch_only() -> None:  # the same concurrency, no frames: the ceiling
                run_bulk(client.api.get_table, ids, max_workers=WORKERS, progress=False)

            long = concurrent()
            if long["table_id"].nunique() != len(ids):
                raise RuntimeError("read_tables did not return every table")
            # each repeat times the three in turn: one ratio to each baseline per repeat
            base, cand, ceiling = [], [], []
            for _ in range(TABLES_REPEAT):
                b, c = paired_times(user_loop, concurrent, repeat=1)
                (f,), _ = paired_times(fetch_only, lambda: None, repeat=1)
                base += b
                cand += c
                ceiling.append(f)
        finally:
            emu.clear_faults()
            session.close()
    name = f"read_tables {len(ids)} tables @{LATENCY * 1000:.0f} ms, {WORKERS} workers"
    return [
        median_speedup(f"{name} vs user loop", base, cand, 7),
        median_speedup(
            f"  vs fetch-only ceiling ({WORKERS} workers, no frames)",
            ceiling,
            cand,
            0.95,
            goal=">= 0.95x of it",
        ),  # fmt: skip
    ]


def run() -> list[Result]:
    """Both loader benchmarks (the tables one needs mddframes.frames.table)."""
    results = [bench_tree()]
    try:
        import mddframes.frames.table  # noqa: F401
    except ImportError:
        log.warning("mddframes.frames.table is not there yet: read_tables benchmark skipped")
    else:
        results.extend(bench_tables())
    return results
