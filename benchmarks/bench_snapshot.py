"""Bounded memory at any size (goals of issue 25).

1. ``iter_tables`` over 2,000 tables (chunks of 100): peak memory (tracemalloc: pandas
   only, no Arrow here) against the peak of reading one chunk alone, the highest of
   the 20 chunks' (goal: at most 1.2x, whatever the table count).
2. ``snapshot`` of the 100,000-element scale system (``structures=False``: one request
   per element would dwarf the rest) against reading the same objects into frames:
   ``read_tree`` + ``read_tables`` + ``read_mappings`` + ``read_object_types`` +
   ``read_packages`` (goal: at most 1.1x the time).
3. ``snapshot``'s peak RSS growth (Arrow's buffers are invisible to tracemalloc), in a
   fresh child process, against the tree (the RSS growth of ``read_tree`` alone, also
   in a fresh child) plus 3 x the payloads in flight (workers x the largest object's
   JSON size) (goal: at most 1.0x that budget). Both children load pyarrow before
   measuring: the library's code is not memory the job holds.

The 1,000,000-element tree (the issue's fourth goal) has a module of its own,
:mod:`benchmarks.bench_big_tree` (``python -m benchmarks big_tree``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from benchmarks.common import (
    Result,
    _spread,
    median_at_most,
    paired_times,
    peak_memory,
    remote_emulator,
)
from mddframes import Client
from mddframes.emulator.scale import scale_records

SYSTEM = "SCALE"
ITER_ELEMENTS = 40_000  # a table for about 1 element in 20: 2,000 tables
ITER_TABLES = 2_000
CHUNK = 100
ITER_REPEAT = 3
SNAPSHOT_ELEMENTS = 100_000
SNAPSHOT_REPEAT = 3
WORKERS = 8


def bench_iter_tables() -> Result:
    """Peak memory of iter_tables over 2,000 tables vs one chunk of them."""
    with remote_emulator(ITER_ELEMENTS) as emu, Client.from_emulator(emu) as client:
        ids = client.read_tree(SYSTEM)["table_id"].dropna().tolist()[:ITER_TABLES]
        if len(ids) != ITER_TABLES:
            raise RuntimeError(f"expected {ITER_TABLES} tables, the scale data has {len(ids)}")

        def consume(wanted: list[str]) -> None:
            for chunk in client.iter_tables(wanted, chunksize=CHUNK, progress=False):
                del chunk

        chunks = [ids[start : start + CHUNK] for start in range(0, len(ids), CHUNK)]
        base, cand = [], []
        for _ in range(ITER_REPEAT):
            # the floor: the chunk whose own peak is the highest (the tables differ in size,
            # so the first chunk alone would make any larger later chunk look like growth)
            base.append(max(peak_memory(lambda c=c: consume(c)) for c in chunks) / 1e6)
            cand.append(peak_memory(lambda: consume(ids)) / 1e6)
    ratios = [c / b for b, c in zip(base, cand, strict=True)]
    return _spread(f"iter_tables {ITER_TABLES:,} tables peak vs the largest chunk of {CHUNK}",
                   base, cand, ratios, "MB", "<= 1.2x", lambda r: r <= 1.2)  # fmt: skip


def bench_snapshot_time(emu: object) -> Result:
    """snapshot of the 100,000-element system vs reading the same objects into frames."""
    with Client.from_emulator(emu) as client, tempfile.TemporaryDirectory() as folder:
        runs = iter(range(1000))

        def floor() -> None:
            tree = client.read_tree(SYSTEM)
            client.read_tables(tree["table_id"].dropna(), progress=False)
            client.read_mappings(tree["mapping_id"].dropna(), progress=False)
            client.read_object_types()
            client.read_packages(SYSTEM)
            client.contexts._strong.clear()  # what the reads kept, let go as a snapshot does

        def candidate() -> None:
            client.snapshot(SYSTEM, Path(folder) / f"s{next(runs)}", progress=False,
                            structures=False)  # fmt: skip

        base, cand = paired_times(floor, candidate, repeat=SNAPSHOT_REPEAT)
    return median_at_most(
        f"snapshot {SNAPSHOT_ELEMENTS:,} elements vs read_* of the same objects", base, cand, 1.1
    )


#: A child that connects to the emulator, measures the RSS growth of one job, prints it.
_RSS_CHILD = """
import json, os, sys, tempfile
from pathlib import Path
from mddframes import Client
from mddframes.emulator.server import EmulatorHandle
from mddframes.emulator.state import EmulatorConfig
spec = json.loads(os.environ["BENCH_RSS_SPEC"])
config = EmulatorConfig(elements=spec["elements"])
config.client_secret = os.environ["BENCH_EMULATOR_SECRET"]
handle = EmulatorHandle(spec["base_url"], config)
client = Client.from_emulator(handle)
client.read_object_types()  # connected, token taken: not part of the job
import mddframes.snapshot.writer  # pyarrow's code loaded (~4.5 MB): not part of the job either

def status(key):
    for line in open("/proc/self/status"):
        if line.startswith(key):
            return int(line.split()[1]) * 1024

with tempfile.TemporaryDirectory() as folder:
    base = status("VmRSS:")
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")  # the peak (VmHWM) starts again from here
    if spec["job"] == "tree":
        client.read_tree(spec["system"])
    else:
        client.snapshot(spec["system"], Path(folder) / "s", progress=False,
                        max_workers=spec["workers"], structures=False)
    print(json.dumps({"growth": status("VmHWM:") - base}))
"""


def _rss_growth(emu: object, job: str, elements: int) -> float:
    """Peak RSS growth (bytes) of ``job`` ("tree" or "snapshot") in a fresh child."""
    spec = {"base_url": emu.base_url, "elements": elements, "job": job,  # type: ignore[attr-defined]
            "system": SYSTEM, "workers": WORKERS}  # fmt: skip
    env = {**os.environ, "BENCH_RSS_SPEC": json.dumps(spec),
           "BENCH_EMULATOR_SECRET": emu.client_secret}  # type: ignore[attr-defined]  # fmt: skip
    done = subprocess.run([sys.executable, "-c", _RSS_CHILD], env=env, capture_output=True,
                          text=True, check=True, timeout=1800)  # fmt: skip
    return float(json.loads(done.stdout.splitlines()[-1])["growth"])


def _largest_payload(elements: int) -> int:
    """The JSON size of the largest table or mapping of the scale data (deterministic)."""
    return max(
        len(json.dumps(record, separators=(",", ":")).encode())
        for kind, record in scale_records(elements)
        if kind in ("table", "mapping")
    )


def bench_snapshot_memory(emu: object) -> Result:
    """snapshot's peak RSS growth vs the tree + 3 x the payloads in flight."""
    in_flight = WORKERS * _largest_payload(SNAPSHOT_ELEMENTS)
    base, cand = [], []
    for _ in range(SNAPSHOT_REPEAT):
        tree = _rss_growth(emu, "tree", SNAPSHOT_ELEMENTS)
        base.append((tree + 3 * in_flight) / 1e6)
        cand.append(_rss_growth(emu, "snapshot", SNAPSHOT_ELEMENTS) / 1e6)
    ratios = [c / b for b, c in zip(base, cand, strict=True)]
    return _spread(f"snapshot {SNAPSHOT_ELEMENTS:,} peak RSS vs tree + 3 x in flight",
                   base, cand, ratios, "MB", "<= 1x", lambda r: r <= 1.0)  # fmt: skip


def run() -> list[Result]:
    results = [bench_iter_tables()]
    with remote_emulator(SNAPSHOT_ELEMENTS) as emu:
        results.append(bench_snapshot_time(emu))
        results.append(bench_snapshot_memory(emu))
    return results
