"""The read-context registry stays bounded: memory left by many reads whose frames are
not kept.

Reads ``MANY`` distinct tables one by one in one process, keeping no frame, and measures
the memory still allocated afterwards (tracemalloc, after a collection) against reading
``FEW`` (goal: at most 1.2x). For context, the same ``MANY`` reads with a registry that
keeps every read (as it did before it was bounded) are shown too.
"""

from __future__ import annotations

import gc
import tracemalloc

from benchmarks.common import Result, at_most, remote_emulator
from mddframes import Client
from mddframes.context import ContextRegistry

FEW, MANY = 50, 5_000


def _left_after(emu, ids: list[str], registry: ContextRegistry | None = None) -> float:
    """Bytes still allocated after reading ``ids`` one by one, no frame kept."""
    with Client.from_emulator(emu) as client:
        if registry is not None:
            client.api.read_contexts = registry
        client.read_table(ids[0])  # connection, token, caches: outside the measure
        gc.collect()
        tracemalloc.start()
        try:
            base, _ = tracemalloc.get_traced_memory()
            for table_id in ids:
                client.read_table(table_id)
            gc.collect()
            left, _ = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        return float(left - base)


def run() -> list[Result]:
    """The memory left by ``MANY`` reads against ``FEW``, bounded (and unbounded)."""
    with remote_emulator(20 * MANY + 100) as emu:
        with Client.from_emulator(emu) as client:
            ids = client.read_tree("SCALE")["table_id"].dropna().tolist()[:MANY]
        few = _left_after(emu, ids[:FEW])
        many = _left_after(emu, ids)
        unbounded = _left_after(emu, ids, ContextRegistry(recent=10**9))
    mb = 1 << 20
    return [
        at_most(
            f"memory left by {len(ids):,} reads vs {FEW} (registry bounded)",
            few / mb,
            many / mb,
            1.2,
            unit="MB",
        ),  # fmt: skip
        at_most(
            f"memory left by {len(ids):,} reads vs {FEW} (every read kept: before)",
            few / mb,
            unbounded / mb,
            1.2,
            unit="MB",
        ),  # fmt: skip
    ]
