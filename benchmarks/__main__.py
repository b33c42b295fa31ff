"""Run the benchmarks: ``python -m benchmarks [NAME ...]``.

Each ``bench_*.py`` module exposes ``run() -> list[Result]``; it builds its own data in
an embedded emulator and measures candidate and baseline in the same run.
"""

from __future__ import annotations

import importlib
import pkgutil
import sys
from pathlib import Path

from benchmarks.common import print_table


def main(argv: list[str]) -> int:
    here = Path(__file__).parent
    names = sorted(m.name for m in pkgutil.iter_modules([str(here)]) if m.name.startswith("bench_"))
    wanted = [n for n in names if not argv or any(a in n for a in argv)]
    results = []
    for name in wanted:
        print(f"running {name} ...", flush=True)
        results.extend(importlib.import_module(f"benchmarks.{name}").run())
    print()
    print_table(results)
    return 0 if all(r.ok for r in results) else 1


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
