"""Wall times of read_table / read_tables / iter_tables, for comparing two source trees.

Not a ``bench_*`` module (no baseline in the same run): run it once per tree, one after
the other on a quiet machine, and compare the printed times::

    PYTHONPATH=<tree> python -m benchmarks.read_times > times.json

Each case is run once to warm up, then :data:`RUNS` times; the output is one JSON
object, case -> list of seconds, with the tree imported and the load average.
"""

from __future__ import annotations

import json
import os
import time
import warnings
from collections.abc import Callable
from typing import Any

import mddframes
from benchmarks.common import remote_emulator
from mddframes import Client
from mddframes.emulator.scale import big_table

RUNS = 5
#: Scale elements: about 1 table per 20 elements, so 200+ tables.
ELEMENTS = 4_100


def main() -> None:
    warnings.simplefilter("ignore")
    out: dict[str, Any] = {"tree": mddframes.__file__, "load_before": os.getloadavg()}
    with remote_emulator(ELEMENTS) as emu, Client.from_emulator(emu, max_workers=8) as client:
        ids = client.read_tree("SCALE")["table_id"].dropna().tolist()[:200]
        big, small = ids[0], ids[1:]
        client.api.put_table(big, big_table(big, 50_000, 12))
        cases: dict[str, Callable[[], Any]] = {
            "read_table 50k rows x 12 cols": lambda: client.read_table(big),
            "read_table x50 small tables": lambda: [client.read_table(i) for i in small[:50]],
            f"read_tables {len(small)} tables": lambda: client.read_tables(small, progress=False),
            f"iter_tables {len(small)} tables, chunksize 50": lambda: [
                len(c) for c in client.iter_tables(small, chunksize=50, progress=False)
            ],
        }
        for name, case in cases.items():
            case()
            times = []
            for _ in range(RUNS):
                start = time.perf_counter()
                case()
                times.append(time.perf_counter() - start)
            out[name] = times
    out["load_after"] = os.getloadavg()
    print(json.dumps(out))


if __name__ == "__main__":
    main()
