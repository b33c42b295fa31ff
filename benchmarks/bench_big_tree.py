"""``read_tree`` of the 1,000,000-element scale system (issue 25's tree goals).

1. Time of ``read_tree`` under each dtype backend against ``requests.get`` +
   ``json.loads`` + ``pd.DataFrame`` of the same answer, interleaved in the same run
   (goal: at most 1.5x, both backends).
2. Peak RSS growth of ``read_tree`` in a fresh child process (Arrow's buffers are
   invisible to tracemalloc) against the answer's size in bytes. The goal, at most 3x,
   is measured with ``dtype_backend="pyarrow"``: that route streams the answer in
   batches into Arrow columns. The default backend is measured too, for the record,
   with no goal: its frame alone holds about 600 MB of Python ``str`` objects (ids,
   names, types, parent ids, paths), over 4x the answer before anything else. The
   floor's own peak (``get`` + ``json.loads`` + ``DataFrame`` in a fresh child) is
   measured beside them, for the record: what a user's own code costs.

The emulator takes about 30 s to start and 1.2 GB; one run of the module takes about
three minutes on two shared cores (:data:`TIME_REPEAT`, :data:`RSS_REPEAT`).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pandas as pd

from benchmarks.common import (
    Result,
    _spread,
    floor_session,
    median_at_most,
    paired_times,
    remote_emulator,
)
from mddframes import Client

SYSTEM = "SCALE"
ELEMENTS = 1_000_000
TIME_REPEAT = 3
RSS_REPEAT = 3

#: A child that connects to the emulator, measures the RSS growth of one read_tree, prints it.
_RSS_CHILD = """
import json, os
from mddframes import Client
from mddframes.emulator.server import EmulatorHandle
from mddframes.emulator.state import EmulatorConfig
spec = json.loads(os.environ["BENCH_RSS_SPEC"])
config = EmulatorConfig(elements=spec["elements"])
config.client_secret = os.environ["BENCH_EMULATOR_SECRET"]
handle = EmulatorHandle(spec["base_url"], config)
client = Client.from_emulator(handle)
client.read_object_types(dtype_backend="pyarrow")  # connected, pyarrow imported: not the job
import pandas, requests
session = requests.Session()
session.headers["Authorization"] = f"Bearer {handle.token()}"

def status(key):
    for line in open("/proc/self/status"):
        if line.startswith(key):
            return int(line.split()[1]) * 1024

base = status("VmRSS:")
with open("/proc/self/clear_refs", "w") as f:
    f.write("5")  # the peak (VmHWM) starts again from here
if spec["backend"] == "floor":
    response = session.get(f"{handle.api_url}/api/system/{spec['system']}/tree", timeout=600)
    response.raise_for_status()
    frame = pandas.DataFrame(json.loads(response.content))
else:
    frame = client.read_tree(spec["system"], dtype_backend=spec["backend"])
print(json.dumps({"growth": status("VmHWM:") - base, "rows": len(frame)}))
"""


def _rss_growth(emu: object, backend: str) -> float:
    """Peak RSS growth (bytes) of one ``read_tree`` with ``backend`` (or the floor:
    ``"floor"``) in a fresh child."""
    spec = {"base_url": emu.base_url, "elements": ELEMENTS, "system": SYSTEM,  # type: ignore[attr-defined]
            "backend": backend}  # fmt: skip
    env = {**os.environ, "BENCH_RSS_SPEC": json.dumps(spec),
           "BENCH_EMULATOR_SECRET": emu.client_secret}  # type: ignore[attr-defined]  # fmt: skip
    done = subprocess.run([sys.executable, "-c", _RSS_CHILD], env=env, capture_output=True,
                          text=True, check=True, timeout=600)  # fmt: skip
    measured = json.loads(done.stdout.splitlines()[-1])
    if measured["rows"] != ELEMENTS:
        raise RuntimeError(f"read_tree gave {measured['rows']} rows, expected {ELEMENTS}")
    return float(measured["growth"])


def run() -> list[Result]:
    """Time of both backends vs the floor, peak RSS growth of both vs the answer."""
    results = []
    with remote_emulator(ELEMENTS, startup_timeout=600) as emu, Client.from_emulator(emu) as client:
        url = f"{emu.api_url}/api/system/{SYSTEM}/tree"
        session = floor_session(emu)
        sizes = []

        def floor() -> pd.DataFrame:
            response = session.get(url, timeout=600)
            response.raise_for_status()
            sizes.append(len(response.content))
            return pd.DataFrame(json.loads(response.content))

        for backend in ("pyarrow", "numpy_nullable"):

            def candidate(backend: str = backend) -> pd.DataFrame:
                return client.read_tree(SYSTEM, dtype_backend=backend)  # type: ignore[arg-type]

            base, cand = paired_times(floor, candidate, repeat=TIME_REPEAT)
            results.append(median_at_most(
                f"read_tree {ELEMENTS:,} elements, {backend} vs get+json+DataFrame",
                base, cand, 1.5,
            ))  # fmt: skip
        session.close()
        answer = sizes[-1] / 1e6
        for backend, goal in (("pyarrow", "<= 3x"), ("numpy_nullable", "none (Python str)"),
                              ("floor", "none (the floor)")):  # fmt: skip
            growth = [_rss_growth(emu, backend) / 1e6 for _ in range(RSS_REPEAT)]
            ratios = [g / answer for g in growth]
            what = "get+json+DataFrame" if backend == "floor" else backend
            results.append(_spread(
                f"read_tree {ELEMENTS:,} elements, {what}: peak RSS growth vs the answer",
                [answer] * len(growth), growth, ratios, "MB", goal,
                lambda r, arrow=backend == "pyarrow": r <= 3.0 or not arrow,
            ))  # fmt: skip
    return results
