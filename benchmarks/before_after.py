"""A change measured the only fair way: the code before and after it, in the same run.

``python -m benchmarks.before_after REV [--rounds N]`` checks ``REV`` out into a
temporary git worktree, then reads the benchmark tables (the 31 MB table of
``bench_big_table`` and the string-heavy table of ``bench_arrow``) in child processes,
round after round: the floor (``requests`` + ``json.loads`` + ``DataFrame``), the code at
``REV``, the working tree's code. Each child reads its table once warm, then three
times, and reports the middle time and its peak RSS growth. It prints, per table and
dtype backend, min/median/max of before/floor, after/floor and before/after.

Each child runs with its code tree as both ``PYTHONPATH`` and working directory, and
says which ``mddframes`` it imported: ``python -c`` puts the working directory first on
``sys.path``, so a child started from this checkout with only ``PYTHONPATH`` pointing
elsewhere measures this checkout twice (how a before/after of issue 46 once compared a
route with itself).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from benchmarks.bench_arrow import text_table
from benchmarks.common import floor_session, load_average, remote_emulator
from mddframes import Client
from mddframes.emulator.scale import big_table

ROWS, COLUMNS = 130_000, 12  # bench_big_table's table

_CHILD = r"""
import gc, json, os, sys, time
import pandas as pd, requests
import mddframes
from mddframes import Client
from mddframes.emulator.server import EmulatorHandle
from mddframes.emulator.state import EmulatorConfig
config = EmulatorConfig(elements=0)
config.client_secret = os.environ["BENCH_EMULATOR_SECRET"]
handle = EmulatorHandle(os.environ["BENCH_BASE_URL"], config)
table_id, backend, what = sys.argv[1:4]
client = Client.from_emulator(handle)
kwargs = {} if backend == "numpy_nullable" else {"dtype_backend": backend}
def floor():
    session = requests.Session()
    session.headers["Authorization"] = f"Bearer {handle.token()}"
    answer = session.get(f"{handle.api_url}/api/table/{table_id}", timeout=120)
    answer.raise_for_status()
    return pd.DataFrame(json.loads(answer.content)["data"])
read = floor if what == "floor" else (lambda: client.read_table(table_id, **kwargs))
start_rss = int(open("/proc/self/statm").read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
read(); gc.collect()
times = []
for _ in range(3):
    began = time.perf_counter(); read(); times.append(time.perf_counter() - began); gc.collect()
# VmHWM, not ru_maxrss: ru_maxrss survives execve, so a child would report its parent's
high = [line for line in open("/proc/self/status") if line.startswith("VmHWM:")][0]
peak = int(high.split()[1]) * 1024 - start_rss
print(json.dumps({"seconds": sorted(times)[1], "peak": peak, "code": mddframes.__file__}))
"""


def _child(
    code: Path, table_id: str, backend: str, what: str, env: dict[str, str]
) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, "-c", _CHILD, table_id, backend, what],
        env={**env, "PYTHONPATH": str(code)}, cwd=code,
        stdout=subprocess.PIPE, text=True, check=True,
    )  # fmt: skip
    result: dict[str, Any] = json.loads(done.stdout.splitlines()[-1])
    if not result["code"].startswith(str(code)):  # the wrong tree measured: say so
        raise RuntimeError(f"a child meant to run {code} imported {result['code']}")
    return result


def _ratios(times: list[float], floors: list[float]) -> str:
    return _spread([t / f for t, f in zip(times, floors, strict=True)]) + "x"


def _spread(values: list[float]) -> str:
    return f"{min(values):.2f}/{statistics.median(values):.2f}/{max(values):.2f}"


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.before_after")
    parser.add_argument("rev", help="the code before (a git revision)")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--backends", default="numpy_nullable,pyarrow")
    args = parser.parse_args(argv)
    after = Path(__file__).resolve().parent.parent
    print(load_average())
    with tempfile.TemporaryDirectory() as folder:
        before = Path(folder) / "before"
        subprocess.run(["git", "-C", str(after), "worktree", "add", "--detach", "-q",
                        str(before), args.rev], check=True)  # fmt: skip
        try:
            _measure(before, after, args.rounds, args.backends.split(","))
        finally:
            subprocess.run(["git", "-C", str(after), "worktree", "remove", "--force",
                            str(before)], check=True)  # fmt: skip
    print(load_average())
    return 0


def _measure(before: Path, after: Path, rounds: int, backends: list[str]) -> None:
    with remote_emulator(100) as emu, Client.from_emulator(emu) as client:
        ids = client.read_tree("SCALE")["table_id"].dropna().tolist()
        tables = {"benchmark 31 MB": big_table(ids[0], ROWS, COLUMNS),
                  "string-heavy 35 MB": text_table(ids[1])}  # fmt: skip
        env = {**os.environ, "BENCH_BASE_URL": emu.base_url,
               "BENCH_EMULATOR_SECRET": emu.client_secret}  # fmt: skip
        print(
            "table, backend: floor s | before/floor | after/floor | before/after |"
            " peak RSS growth / payload, before -> after (min/median/max)"
        )
        for (label, table), table_id in zip(tables.items(), ids, strict=False):
            client.api.put_table(table_id, table)
            answer = floor_session(emu).get(f"{emu.api_url}/api/table/{table_id}", timeout=120)
            size = len(answer.content)  # the payload, as the wire carries it
            for backend in backends:
                runs: dict[str, list[dict[str, Any]]] = {"floor": [], "before": [], "after": []}
                for _ in range(rounds):  # interleaved: load from elsewhere hits all alike
                    runs["floor"].append(_child(after, table_id, backend, "floor", env))
                    runs["before"].append(_child(before, table_id, backend, "read", env))
                    runs["after"].append(_child(after, table_id, backend, "read", env))
                seconds = {k: [r["seconds"] for r in v] for k, v in runs.items()}
                speed = [b / a for b, a in zip(seconds["before"], seconds["after"], strict=True)]
                peaks = " -> ".join(
                    _spread([r["peak"] / size for r in runs[k]]) + "x" for k in ("before", "after")
                )
                floor = seconds["floor"]
                print(f"{label}, {backend}: {statistics.median(floor):.2f} s | "
                      f"{_ratios(seconds['before'], floor)} | {_ratios(seconds['after'], floor)} | "
                      f"{_spread(speed)} | {peaks}", flush=True)  # fmt: skip


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
