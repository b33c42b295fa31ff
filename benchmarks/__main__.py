"""Run the benchmarks: ``python -m benchmarks [NAME ...]``.

Each ``bench_*.py`` module exposes ``run() -> list[Result]``; it builds its own data in
an embedded emulator and measures candidate and baseline in the same run. Every module
runs in a process of its own, so one module's heap (a 100,000-row frame, a 50 MB
table) does not slow the next one's garbage collection. The table gives each ratio
as the median over repeats with its min and max, and the machine's load average
(``os.getloadavg``) is printed before and after each module.
"""

from __future__ import annotations

import dataclasses
import importlib
import json
import pkgutil
import subprocess
import sys
from pathlib import Path

from benchmarks.common import Result, load_average, print_table

_CHILD_FLAG = "--child-json"


def _run_child(name: str) -> list[Result]:
    """Run one module in a child process and read its results back."""
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks", _CHILD_FLAG, name],
        stdout=subprocess.PIPE,
        text=True,
        check=True,
    )
    return [Result(**fields) for fields in json.loads(done.stdout.splitlines()[-1])]


def main(argv: list[str]) -> int:
    if argv[:1] == [_CHILD_FLAG]:
        results = importlib.import_module(f"benchmarks.{argv[1]}").run()
        print(json.dumps([dataclasses.asdict(r) for r in results]))
        return 0
    here = Path(__file__).parent
    names = sorted(m.name for m in pkgutil.iter_modules([str(here)]) if m.name.startswith("bench_"))
    wanted = [n for n in names if not argv or any(a in n for a in argv)]
    results = []
    loads = [f"start: {load_average()}"]
    for name in wanted:
        print(f"running {name} ...", file=sys.stderr, flush=True)
        results.extend(_run_child(name))
        loads.append(f"after {name}: {load_average()}")
    print()
    print_table(results)
    print()
    # the machine may be shared: say how busy it was while the figures were taken
    print("\n".join(loads))
    return 0 if all(r.ok for r in results) else 1


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
