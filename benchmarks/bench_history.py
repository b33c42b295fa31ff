"""A year of daily versions in a history store (issue 47).

The ``SCALE`` system at 20,000 elements (structures left out: one request per element
would dwarf the rest); each day about 1% of its tables get one cell edited through
``write_table``, then a version is added (``snapshot(history=...)``). Measured:

1. storage: the store's bytes against one snapshot folder of the same system plus the
   objects the later versions stored (goal: at most 1.5x);
2. ``cell_history`` of one edited cell over every version, and ``as_of(latest)`` of one
   table, each against 1 s (goal: at most 1.0x, min/median/max of 5);
3. ``read_changes_by_version`` over every version: peak memory (tracemalloc) against
   the peak of reading one version's changes (goal: at most 2x: bounded, not growing
   with the number of versions).

``MDD_BENCH_HISTORY_DAYS`` sets the number of days (default 365: about an hour and a
half on 2 shared cores, almost all of it the daily snapshots).
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from benchmarks.common import Result, at_most, peak_memory, remote_emulator
from mddframes import Client, read_history

SYSTEM = "SCALE"
ELEMENTS = 20_000
DAYS = int(os.environ.get("MDD_BENCH_HISTORY_DAYS", "365"))
CHANGED_SHARE = 0.01
REPEAT = 5


def _bytes(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def _edit(client: Client, table_id: str, day: int) -> str | None:
    """One cell of the table's first row set to a new text; the column, or None."""
    frame = client.read_table(table_id)
    columns = [c for c in frame.columns if frame[c].dtype == "string"]
    if not columns or frame.empty:
        return None
    frame.loc[frame.index[0], columns[-1]] = f"day {day}"
    client.write_table(table_id, frame)
    return str(columns[-1])


def _times(fn: Callable[[], object]) -> list[float]:
    out = []
    for _ in range(REPEAT):
        started = time.perf_counter()
        fn()
        out.append(time.perf_counter() - started)
    return out


def _timed(name: str, times: list[float], limit_s: float) -> Result:
    median = statistics.median(times)
    return Result(name, limit_s, median, "s", f"<= {limit_s:g} s", median / limit_s,
                  median <= limit_s, min(times) / limit_s, max(times) / limit_s, len(times))  # fmt: skip


def run() -> list[Result]:
    with tempfile.TemporaryDirectory() as scratch, remote_emulator(ELEMENTS) as emu, \
            Client.from_emulator(emu) as client:  # fmt: skip
        root = Path(scratch)
        store = root / "history"
        table_ids = client.read_tree(SYSTEM)["table_id"].dropna().tolist()
        per_day = max(1, round(len(table_ids) * CHANGED_SHARE))
        one = client.snapshot(SYSTEM, root / "one", progress=False, structures=False)
        snapshot_bytes = _bytes(one.path)
        watched: tuple[str, str] | None = None
        started = time.perf_counter()
        for day in range(DAYS):
            if day:
                for n in range(per_day):
                    table_id = table_ids[(day * per_day + n) % len(table_ids)]
                    column = _edit(client, table_id, day)
                    if column is not None and watched is None:
                        watched = (table_id, column)
            client.snapshot(SYSTEM, history=store, progress=False, structures=False)
        build_s = time.perf_counter() - started
        history = read_history(store)
        first_files = {e["file"] for e in history.as_of(1).manifest["objects"]}
        later = {p for p in (store / "objects").rglob("*.parquet")
                 if p.relative_to(store).as_posix() not in first_files}  # fmt: skip
        changed_bytes = sum(p.stat().st_size for p in later)
        print(f"{DAYS} versions of {len(table_ids)} tables ({per_day} edited a day) built in "
              f"{build_s:.0f} s; one snapshot {snapshot_bytes / 1e6:.1f} MB, the store "
              f"{_bytes(store) / 1e6:.1f} MB, of it the later versions' objects "
              f"{changed_bytes / 1e6:.1f} MB", file=sys.stderr)  # fmt: skip
        parts = {part.relative_to(store).as_posix(): _bytes(part)
                 for part in [store / "log", *(store / "frames").iterdir(),
                              *(store / "objects").iterdir()]}  # fmt: skip
        print("the store by folder: " + ", ".join(f"{k} {v / 1e6:.2f} MB" for k, v in parts.items())
              + f"; a version added in {build_s / DAYS:.1f} s on average", file=sys.stderr)  # fmt: skip
        results = [
            at_most(f"store bytes vs one snapshot + changed objects ({DAYS} versions)",
                    (snapshot_bytes + changed_bytes) / 1e6, _bytes(store) / 1e6, 1.5, "MB"),
        ]  # fmt: skip
        if watched is not None:
            table_id, column = watched
            key = history.row_identity(table_id)
            row_key = (
                0
                if key[0] == "position"
                else history.as_of(1).read_table(table_id)[key[1][0]].iloc[0]
            )
            results.append(_timed(f"cell_history over {DAYS} versions",
                                  _times(lambda: history.cell_history(table_id, row_key, column)), 1.0))  # fmt: skip
            results.append(_timed("as_of(latest).read_table",
                                  _times(lambda: history.as_of(DAYS).read_table(table_id)), 1.0))  # fmt: skip
        one_version = peak_memory(lambda: list(history.read_changes_by_version(DAYS - 1, DAYS)))
        every = peak_memory(lambda: sum(1 for _ in history.read_changes_by_version()))
        results.append(at_most(f"read_changes_by_version peak, {DAYS} versions vs 1",
                               one_version / 1e6, every / 1e6, 2.0, "MB"))  # fmt: skip
        return results
