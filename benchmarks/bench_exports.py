"""Export benchmarks.

1. Batch export of 1,000 elements: the time from the task finishing on the service to
   ``ExportTask.wait()`` returning, against the poll interval in force at that moment
   (goal: at most one interval). The finish time is observed by a side thread that
   polls the task's status every few milliseconds through its own client.
2. The legacy fallback (no batch export) with 8 workers at 20 ms injected latency,
   against sequential single exports written into a zip (goal: at least 5x faster).
"""

from __future__ import annotations

import logging
import tempfile
import threading
import time
import warnings
import zipfile
from pathlib import Path

from benchmarks.common import (
    Result,
    median_at_most,
    median_speedup,
    paired_times,
    remote_emulator,
)
from mddframes import Client
from mddframes.archive import archive_entry_name
from mddframes.emulator import serve
from mddframes.emulator.state import scale_dataset  # the same deterministic data it serves
from mddframes.exports import (
    LegacyExportWarning,
    export_batch,
    poll_intervals,
    start_export,
)

log = logging.getLogger(__name__)

BATCH_ELEMENTS = 1_000
LEGACY_ELEMENTS = 200
LATENCY = 0.020
WORKERS = 8


def _object_type_and_ids(
    client: Client, system_elements: list[dict], n: int
) -> tuple[str, list[str]]:
    """The object type that applies to the most element types, and ``n`` elements it applies to."""
    types = [t for t in client.api.get_object_types() if isinstance(t, dict)]
    best = max(types, key=lambda t: len(t.get("elementTypes") or []))
    allowed = set(best.get("elementTypes") or [])
    ids = [e["id"] for e in system_elements if not allowed or e.get("type") in allowed][:n]
    if len(ids) < n:
        log.warning("only %d elements fit object type %s (wanted %d)", len(ids), best["id"], n)
    return str(best["id"]), ids


def _interval_at(poll: int, initial: float, maximum: float) -> float:
    """The wait that followed poll number ``poll`` (1-based) of ``ExportTask.wait``."""
    gen = poll_intervals(initial, maximum)
    value = initial
    for _ in range(max(poll, 1)):
        value = next(gen)
    return value


def _wait_lag(
    client: Client, watcher: Client, ids: list[str], object_type: str
) -> tuple[float, float]:
    """One batch export: the poll interval in force when it finished, and ``wait()``'s lag."""
    task = start_export(client.api, ids, object_type)
    finished_at: list[float] = []
    stop = threading.Event()

    def watch() -> None:
        while not stop.is_set():
            status = watcher.api.structure_mass_export_async_status(task.task_id)
            if str(status.get("status")).upper() != "RUNNING":
                finished_at.append(time.perf_counter())
                return
            stop.wait(0.005)

    thread = threading.Thread(target=watch, name="bench-export-watcher")
    thread.start()
    try:
        task.wait(poll_interval=0.5, max_poll_interval=5.0, progress=False)
        returned_at = time.perf_counter()
    finally:
        stop.set()
        thread.join()
    lag = returned_at - finished_at[0]
    # the poll that saw FINISHED was preceded by the wait after poll (polls - 1)
    interval = _interval_at(task.polls - 1, 0.5, 5.0)
    log.info("wait lag %.3f s, interval %.3f s, %d polls", lag, interval, task.polls)
    return interval, max(lag, 0.0)


def bench_wait_lag(repeat: int = 3) -> Result:
    with (
        serve(elements=BATCH_ELEMENTS, export_seconds_per_element=0.002) as emu,
        Client.from_emulator(emu) as client,
        Client.from_emulator(emu) as watcher,
    ):
        object_type, ids = _object_type_and_ids(
            client, scale_dataset(BATCH_ELEMENTS).elements, BATCH_ELEMENTS
        )
        measured = [_wait_lag(client, watcher, ids, object_type) for _ in range(repeat)]
    return median_at_most(
        f"batch export {BATCH_ELEMENTS}: wait() lag after finish / poll interval",
        [interval for interval, _ in measured],
        [lag for _, lag in measured],
        1.0,
    )


def _sequential_zip(client: Client, ids: list[str], object_type: str, dest: Path) -> None:
    """The baseline: one single export after the other, written into the same layout."""
    with zipfile.ZipFile(dest, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for structure_id in ids:
            file_name, text = client.api.external_export_structure(structure_id, object_type)
            zf.writestr(archive_entry_name(structure_id, file_name), text)


def bench_legacy_fallback() -> Result:
    with (
        remote_emulator(LEGACY_ELEMENTS, legacy=True) as emu,
        tempfile.TemporaryDirectory() as tmp,
        Client.from_emulator(emu) as client,
    ):
        emu.inject_faults(latency=LATENCY, operations=["externalExportStructure"])
        object_type, ids = _object_type_and_ids(
            client, scale_dataset(LEGACY_ELEMENTS).elements, LEGACY_ELEMENTS
        )
        folder = Path(tmp)

        def candidate() -> None:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", LegacyExportWarning)
                export_batch(
                    client.api,
                    ids,
                    object_type,
                    folder / "legacy.zip",
                    max_workers=WORKERS,
                    progress=False,
                )

        base, cand = paired_times(
            lambda: _sequential_zip(client, ids, object_type, folder / "seq.zip"),
            candidate,
            repeat=3,
        )
        with zipfile.ZipFile(folder / "seq.zip") as a, zipfile.ZipFile(folder / "legacy.zip") as b:
            if a.namelist() != b.namelist():
                raise AssertionError("the legacy zip and the sequential zip differ in layout")
        return median_speedup(
            f"legacy export {LEGACY_ELEMENTS} x {LATENCY * 1000:g} ms: {WORKERS} workers "
            "vs sequential",
            base,
            cand,
            5.0,
        )


def run() -> list[Result]:
    """Both export benchmarks."""
    return [bench_wait_lag(), bench_legacy_fallback()]
