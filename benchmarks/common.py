"""What every benchmark shares: timing, peak memory and the result table.

Each benchmark measures a candidate against its baseline in the same run, on the
same machine and data, and reports the ratio; absolute seconds are shown only
for context.
"""

from __future__ import annotations

import gc
import time
import tracemalloc
from collections.abc import Callable
from dataclasses import dataclass


@dataclass
class Result:
    """One line of the benchmark table."""

    name: str
    baseline: float
    candidate: float
    unit: str  # "s" or "MB"
    goal: str  # e.g. "<= 1.5x", ">= 6x faster"
    ratio: float
    ok: bool


def best_time(fn: Callable[[], object], repeat: int = 3) -> float:
    """The shortest wall time of ``repeat`` calls of ``fn`` (seconds)."""
    best = float("inf")
    for _ in range(repeat):
        gc.collect()
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def peak_memory(fn: Callable[[], object]) -> float:
    """Peak Python-allocated memory during ``fn`` (bytes), measured by tracemalloc."""
    gc.collect()
    tracemalloc.start()
    try:
        fn()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return float(peak)


def at_most(name: str, baseline: float, candidate: float, limit: float, unit: str = "s") -> Result:
    """A result whose goal is ``candidate / baseline <= limit``."""
    ratio = candidate / baseline
    return Result(name, baseline, candidate, unit, f"<= {limit:g}x", ratio, ratio <= limit)


def speedup_at_least(name: str, baseline: float, candidate: float, limit: float) -> Result:
    """A result whose goal is ``baseline / candidate >= limit`` (candidate is faster)."""
    ratio = baseline / candidate
    return Result(name, baseline, candidate, "s", f">= {limit:g}x faster", ratio, ratio >= limit)


def print_table(results: list[Result]) -> None:
    """Print the results as a fixed-width table."""
    header = f"{'benchmark':<58} {'baseline':>10} {'candidate':>10} {'ratio':>7}  {'goal':<15} ok"
    print(header)
    print("-" * len(header))
    for r in results:
        print(
            f"{r.name:<58} {r.baseline:>9.3f}{r.unit[0]} {r.candidate:>9.3f}{r.unit[0]} "
            f"{r.ratio:>6.2f}x  {r.goal:<15} {'yes' if r.ok else 'NO'}"
        )
