"""Speed devices side by side: each measure WITH a device and WITHOUT it (issue 32).

``python -m benchmarks.devices NAME [NAME ...]`` (names: see :data:`MEASURES`). Each
measure runs the two variants interleaved in the same process on the same data
(without, with, without, ...: load from other processes hits both alike), and prints
each variant's min/median/max seconds, the median of the per-pair ratio
without/with (the cost of removing the device) with its min and max, and the floor the
measure's goal is stated against where it has one.

The "without" variant is a switch of this module only (monkeypatching): the library
carries no switch. Only the devices kept have a switch here (docs/internals.md, "Speed
devices kept, with their figures"); the removed ones went with theirs.
"""

from __future__ import annotations

import contextlib
import gc
import itertools
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from typing import Any

import pandas as pd
import requests

from benchmarks.common import get_put_get, load_average, remote_emulator
from mddframes import Client
from mddframes.bulk import run_bulk
from mddframes.emulator.scale import big_table

_EDITS = itertools.count(1)  # every write edits to a new value, whatever frame
REPEAT = int(os.environ.get("BENCH_DEVICES_REPEAT", "5"))
ROWS, COLUMNS = 130_000, 12  # the read and write benchmarks' table (about 35 MB)
TREE_ELEMENTS = 100_000
TABLES_ELEMENTS = 4_100
N_TABLES, LATENCY, WORKERS = 200, 0.020, 8
SNAPSHOT_ELEMENTS = 100_000


# --- the switches: each sets its device off (False) or on (True) --------------------------


class _NoPause:
    """Stands for the ``gc`` module inside fastjson: ``gc_paused`` then pauses nothing."""

    @staticmethod
    def isenabled() -> bool:
        return False

    @staticmethod
    def disable() -> None:
        return None

    @staticmethod
    def enable() -> None:
        return None


def _switch_gc_paused() -> Callable[[bool], None]:
    from mddframes.codec import fastjson

    def switch(on: bool) -> None:
        fastjson.gc = gc if on else _NoPause  # type: ignore[assignment]

    return switch


def _switch_digit_scan() -> Callable[[bool], None]:
    import json as json_module

    from mddframes.codec import fastjson, splitter, streamed_overlay

    originals = (fastjson.loads, splitter.loads_strict_or_none,
                 streamed_overlay.loads_strict_or_none)  # fmt: skip

    def plain_loads(data: Any) -> Any:  # always the exact decoder: no scan to choose
        return fastjson.json_loads(data)

    def plain_strict(data: Any) -> Any:
        try:
            return json_module.loads(data, parse_constant=fastjson._refuse_constant)
        except (ValueError, UnicodeDecodeError, RecursionError):
            return None

    def switch(on: bool) -> None:
        loads, strict, strict2 = originals if on else (plain_loads, plain_strict, plain_strict)
        fastjson.loads = loads  # type: ignore[assignment]
        splitter.loads_strict_or_none = strict  # type: ignore[assignment]
        streamed_overlay.loads_strict_or_none = strict2  # type: ignore[assignment]

    return switch


def _switch_shared_text() -> Callable[[bool], None]:
    from mddframes.codec import arrow_rows

    shared_at_most = arrow_rows.SHARED_AT_MOST

    def switch(on: bool) -> None:  # off: no column repeats enough to be shared
        arrow_rows.SHARED_AT_MOST = shared_at_most if on else -1.0  # type: ignore[misc]

    return switch


# --- measuring --------------------------------------------------------------------------


def _timed(fn: Callable[[], object]) -> float:
    gc.collect()
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def _stats(values: list[float]) -> str:
    return f"{min(values):.3f}/{statistics.median(values):.3f}/{max(values):.3f}"


def interleaved(
    switch: Callable[[bool], None],
    measure: Callable[[], object],
    *,
    prepare: Callable[[], object] | None = None,
    floor: Callable[[], object] | None = None,
    repeat: int = REPEAT,
) -> dict[str, list[float]]:
    """``repeat`` rounds of: floor (if any), without, with; ``prepare`` runs untimed
    under the same variant right before each timed call."""
    times: dict[str, list[float]] = {"without": [], "with": [], "floor": []}
    try:
        for _ in range(repeat):
            _renew_tokens()
            if floor is not None:
                times["floor"].append(_timed(floor))
            for name, on in (("without", False), ("with", True)):
                switch(on)
                if prepare is not None:
                    prepare()
                times[name].append(_timed(measure))
    finally:
        switch(True)
    return times


def report(device: str, measure: str, times: dict[str, list[float]], goal: str = "") -> None:
    """One line: the times of both variants, the ratio without/with, the goal's floor."""
    ratios = [w / c for w, c in zip(times["without"], times["with"], strict=True)]
    line = (
        f"{device:<14} {measure:<44} with {_stats(times['with'])} s  "
        f"without {_stats(times['without'])} s  without/with "
        f"{statistics.median(ratios):.3f} ({min(ratios):.3f}-{max(ratios):.3f}, {len(ratios)})"
    )
    if times.get("floor"):
        for name in ("with", "without"):
            r = [c / f for f, c in zip(times["floor"], times[name], strict=True)]
            line += (f"  {name}/floor {statistics.median(r):.2f}x "
                     f"({min(r):.2f}-{max(r):.2f})")  # fmt: skip
        line += f" goal {goal}"
    print(line, flush=True)
    print(f"    {load_average()}", flush=True)


#: The floors' sessions, each with its emulator: their tokens are renewed (untimed) at
#: the start of each round, as a long run outlives one token.
_SESSIONS: list[tuple[requests.Session, Any]] = []


def _session(emu: Any) -> requests.Session:
    session = requests.Session()
    session.headers["Authorization"] = f"Bearer {emu.token()}"
    session.headers["Content-Type"] = "application/json"
    _SESSIONS.append((session, emu))
    return session


def _renew_tokens() -> None:
    for session, emu in _SESSIONS:
        with contextlib.suppress(Exception):  # an emulator already closed
            session.headers["Authorization"] = f"Bearer {emu.token()}"


@contextlib.contextmanager
def big_table_client() -> Iterator[tuple[Any, Client, str]]:
    with remote_emulator(100) as emu, Client.from_emulator(emu) as client:
        table_id = client.read_tree("SCALE")["table_id"].dropna().iloc[0]
        client.api.put_table(table_id, big_table(table_id, ROWS, COLUMNS))
        yield emu, client, table_id


def write_floor(emu: Any, table_id: str) -> Callable[[], None]:
    url = f"{emu.api_url}/api/table/{table_id}"
    session = _session(emu)

    def floor() -> None:
        get_put_get(session, url)

    return floor


def one_cell_writer(client: Client, table_id: str, frame: pd.DataFrame,
                    backups: str) -> Callable[[], None]:  # fmt: skip
    edits = _EDITS
    column = "name" if "name" in frame.columns else "text_0"

    def write() -> None:
        frame.at[0, column] = f"edited {next(edits)}"
        result = client.write_table(table_id, frame, backup_dir=backups)
        if result.status != "written":
            raise RuntimeError(f"write_table did not write: {result.status}")

    return write


def write_after_write(device: str, switch: Callable[[bool], None]) -> None:
    """A one-cell write of the big table after a write of the same frame (each timed
    write's context made under the same variant), and its floor GET+PUT+GET."""
    with big_table_client() as (emu, client, table_id), tempfile.TemporaryDirectory() as backups:
        frame = client.read_table(table_id)
        write = one_cell_writer(client, table_id, frame, backups)
        write()
        times = interleaved(switch, write, prepare=write, floor=write_floor(emu, table_id))
        report(device, "one-cell write after a write, 35 MB", times, "<= 1.5x")


def read_big(device: str, switch: Callable[[bool], None]) -> None:
    with big_table_client() as (emu, client, table_id):
        url = f"{emu.api_url}/api/table/{table_id}"
        session = _session(emu)

        def floor() -> pd.DataFrame:
            response = session.get(url, timeout=120)
            response.raise_for_status()
            return pd.DataFrame(json.loads(response.content)["data"])

        client.read_table(table_id)
        times = interleaved(switch, lambda: client.read_table(table_id), floor=floor)
        report(device, "read_table 35 MB", times, "<= 1.5x")


def read_tree(device: str, switch: Callable[[bool], None], backend: str = "numpy_nullable") -> None:
    with remote_emulator(TREE_ELEMENTS) as emu, Client.from_emulator(emu) as client:
        url = f"{emu.api_url}/api/system/SCALE/tree"
        session = _session(emu)

        def floor() -> pd.DataFrame:
            response = session.get(url, timeout=120)
            response.raise_for_status()
            return pd.DataFrame(json.loads(response.content))

        def read() -> pd.DataFrame:
            return client.read_tree("SCALE", dtype_backend=backend)  # type: ignore[arg-type]

        read()
        times = interleaved(switch, read, floor=floor)
        report(device, f"read_tree {TREE_ELEMENTS:,}, {backend}", times, "<= 0.8x")


def read_tables(device: str, switch: Callable[[bool], None]) -> None:
    with (
        remote_emulator(TABLES_ELEMENTS) as emu,
        Client.from_emulator(emu, max_workers=WORKERS) as client,
    ):
        ids = client.read_tree("SCALE")["table_id"].dropna().tolist()[:N_TABLES]
        client.read_tables(ids[:5], progress=False)
        emu.inject_faults(latency=LATENCY, operations=["getTable"])
        try:

            def tables() -> pd.DataFrame:
                return client.read_tables(ids, max_workers=WORKERS, progress=False)

            def fetch_only() -> None:
                run_bulk(client.api.get_table, ids, max_workers=WORKERS, progress=False)

            times = interleaved(switch, tables, floor=fetch_only)
        finally:
            emu.clear_faults()
        report(device, f"read_tables {len(ids)} @20 ms", times,
               "ceiling/candidate >= 0.95, i.e. <= 1.053x")  # fmt: skip


MEASURES: dict[str, Callable[[], None]] = {
    "gc_read": lambda: read_big("gc_paused", _switch_gc_paused()),
    "gc_tables": lambda: read_tables("gc_paused", _switch_gc_paused()),
    "gc_write": lambda: write_after_write("gc_paused", _switch_gc_paused()),
    "gc_tree": lambda: read_tree("gc_paused", _switch_gc_paused()),
    "scan_read": lambda: read_big("digit_scan", _switch_digit_scan()),
    "scan_tree": lambda: read_tree("digit_scan", _switch_digit_scan()),
    "scan_tree_arrow": lambda: read_tree("digit_scan", _switch_digit_scan(), "pyarrow"),
    "scan_write": lambda: write_after_write("digit_scan", _switch_digit_scan()),
    "shared_text_read": lambda: read_big("shared_text", _switch_shared_text()),
}


def main(argv: list[str]) -> int:
    print(f"start: {load_average()}", flush=True)
    for name in argv or list(MEASURES):
        MEASURES[name]()
    print(f"end: {load_average()}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
