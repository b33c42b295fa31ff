"""What every benchmark shares: timing, peak memory and the result table.

Each benchmark measures a candidate against its baseline in the same run, on the
same machine and data, and reports the ratio; absolute seconds are shown only
for context. Timed comparisons run the two interleaved several times
(:func:`paired_times`) and report the median ratio with its min and max.
"""

from __future__ import annotations

import gc
import json
import os
import secrets
import statistics
import subprocess
import sys
import time
import tracemalloc
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import requests

from mddframes.emulator.server import EmulatorHandle
from mddframes.emulator.state import EmulatorConfig


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
    #: The lowest and highest ratio over the repeats (None: measured once, e.g. peak memory).
    low: float | None = None
    high: float | None = None
    #: How many paired runs the ratio is the median of.
    runs: int = 1


def floor_session(emu: EmulatorHandle) -> requests.Session:
    """A plain ``requests`` session for a floor, holding the emulator's access token.

    A benchmark on a loaded machine can outlive a token (the emulator's last 5 minutes):
    a 401 gets a new token and the request is sent once more, instead of the run dying.
    """
    session = requests.Session()
    session.headers["Authorization"] = f"Bearer {emu.token()}"

    def renew(response: requests.Response, *args: object, **kwargs: Any) -> requests.Response:
        request = response.request
        if response.status_code != 401 or request.headers.get("X-Bench-Renewed"):
            return response
        session.headers["Authorization"] = f"Bearer {emu.token()}"
        again = request.copy()
        again.headers["Authorization"] = session.headers["Authorization"]
        again.headers["X-Bench-Renewed"] = "1"
        response.close()
        return session.send(again, **kwargs)

    session.hooks["response"].append(renew)
    return session


def get_put_get(session: requests.Session, url: str, timeout: float = 120) -> None:
    """The floor of a write: GET the document, PUT the same bytes back, GET it again.

    What a careful script does by hand with ``requests`` (no parsing, no checks).
    """
    document = session.get(url, timeout=timeout)
    document.raise_for_status()
    session.put(url, data=document.content, timeout=timeout).raise_for_status()
    session.get(url, timeout=timeout).raise_for_status()


def paired_times(
    baseline: Callable[[], object], candidate: Callable[[], object], repeat: int = 5
) -> tuple[list[float], list[float]]:
    """Wall times of ``repeat`` interleaved runs of ``baseline`` and ``candidate`` (seconds).

    Interleaved (baseline, candidate, baseline, ...) so that load from other
    processes on a shared machine hits both alike; each pair gives one ratio.
    """
    base: list[float] = []
    cand: list[float] = []
    for _ in range(repeat):
        for fn, times in ((baseline, base), (candidate, cand)):
            gc.collect()
            start = time.perf_counter()
            fn()
            times.append(time.perf_counter() - start)
    return base, cand


def _spread(name: str, base: list[float], cand: list[float], ratios: list[float], unit: str,
            goal: str, ok: Callable[[float], bool]) -> Result:  # fmt: skip
    middle = statistics.median(ratios)
    return Result(
        name, statistics.median(base), statistics.median(cand), unit, goal, middle,
        ok(middle), min(ratios), max(ratios), len(ratios),
    )  # fmt: skip


def median_at_most(name: str, base: list[float], cand: list[float], limit: float) -> Result:
    """A result whose goal is the median of ``cand[i] / base[i]`` at most ``limit``."""
    ratios = [c / b for b, c in zip(base, cand, strict=True)]
    return _spread(name, base, cand, ratios, "s", f"<= {limit:g}x", lambda r: r <= limit)


def median_speedup(name: str, base: list[float], cand: list[float], limit: float,
                   goal: str | None = None) -> Result:  # fmt: skip
    """A result whose goal is the median of ``base[i] / cand[i]`` at least ``limit``."""
    ratios = [b / c for b, c in zip(base, cand, strict=True)]
    return _spread(name, base, cand, ratios, "s", goal or f">= {limit:g}x faster",
                   lambda r: r >= limit)  # fmt: skip


def load_average() -> str:
    """The machine's load (1, 5 and 15 minute averages) and its core count, as text."""
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.2f} {five:.2f} {fifteen:.2f} (1/5/15 min) on {os.cpu_count()} cores"


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


_MEMORY_CHILD = """
import json, os, sys, time
import requests
from mddframes import Client
from mddframes.emulator.server import EmulatorHandle
from mddframes.emulator.state import EmulatorConfig

config = EmulatorConfig(elements=0)
config.client_secret = os.environ["BENCH_EMULATOR_SECRET"]
handle = EmulatorHandle(os.environ["BENCH_BASE_URL"], config)
client = Client.from_emulator(handle)
table_id, what, backend = sys.argv[1], sys.argv[2], sys.argv[3]
kwargs = {} if backend == "numpy_nullable" else {"dtype_backend": backend}
import pandas, pyarrow, tempfile  # imported before the baseline
if what == "write":
    frame = client.read_table(table_id, **kwargs)
    backups = tempfile.mkdtemp()
if what == "floor":
    session = requests.Session()
    session.headers["Authorization"] = f"Bearer {handle.token()}"

def status(field):
    with open("/proc/self/status") as f:
        line = next(line for line in f if line.startswith(field + ":"))
    return int(line.split()[1]) * 1024

before = status("VmRSS")
with open("/proc/self/clear_refs", "w") as f:
    f.write("5")  # resets VmHWM, the peak resident size, to the current one
if what == "read":
    frame = client.read_table(table_id, **kwargs)
elif what == "floor":
    answer = session.get(f"{handle.api_url}/api/table/{table_id}", timeout=120)
    answer.raise_for_status()
    frame = pandas.DataFrame(json.loads(answer.content)["data"])
else:
    frame.at[0, "name" if "name" in frame.columns else "text_0"] = f"edited {os.getpid()} {time.time()}"
    result = client.write_table(table_id, frame, backup_dir=backups)
    assert result.status == "written", result.status
# not ru_maxrss: Linux carries it over from the forking parent through exec
peak = status("VmHWM")
print(json.dumps({"growth": peak - before}))
"""


def rss_growth(
    emu: EmulatorHandle, table_id: str, what: str, backend: str, repeat: int = 3
) -> list[float]:
    """Peak RSS growth (bytes) of ``repeat`` child processes doing one call each.

    ``what``: ``"read"`` (``read_table``), ``"write"`` (a one-cell ``write_table`` of the
    table read before the baseline) or ``"floor"`` (``requests`` + ``json.loads`` +
    ``DataFrame``). A child process, not tracemalloc: Arrow's buffers are outside
    tracemalloc's view. The child resets its peak (``VmHWM``, via
    ``/proc/self/clear_refs``) and subtracts its resident size before the call from
    that peak after it (``ru_maxrss`` would not do: Linux carries it over from the
    forking parent through ``exec``).
    """
    env = {
        **os.environ,
        "BENCH_BASE_URL": emu.base_url,
        "BENCH_EMULATOR_SECRET": emu.client_secret,
    }
    growths = []
    for _ in range(repeat):
        done = subprocess.run(
            [sys.executable, "-c", _MEMORY_CHILD, table_id, what, backend],
            stdout=subprocess.PIPE, env=env, text=True, check=True,
        )  # fmt: skip
        growths.append(float(json.loads(done.stdout.splitlines()[-1])["growth"]))
    return growths


def memory_result(name: str, size: float, growths: list[float], limit: float) -> Result:
    """A result whose goal is the median of ``growths[i] / size`` at most ``limit``."""
    ratios = [g / size for g in growths]
    middle = statistics.median(ratios)
    mb = 1e6
    return Result(name, size / mb, statistics.median(growths) / mb, "MB", f"<= {limit:g}x",
                  middle, middle <= limit, min(ratios), max(ratios), len(ratios))  # fmt: skip


def at_most(name: str, baseline: float, candidate: float, limit: float, unit: str = "s") -> Result:
    """A result whose goal is ``candidate / baseline <= limit``."""
    ratio = candidate / baseline
    return Result(name, baseline, candidate, unit, f"<= {limit:g}x", ratio, ratio <= limit)


def print_table(results: list[Result]) -> None:
    """Print the results as a fixed-width table."""
    header = (
        f"{'benchmark':<64} {'baseline':>10} {'candidate':>10} {'ratio':>7} "
        f"{'min-max (runs)':>19}  {'goal':<18} ok"
    )
    print(header)
    print("-" * len(header))
    for r in results:
        spread = "" if r.low is None else f"{r.low:.2f}-{r.high:.2f}x ({r.runs})"
        print(
            f"{r.name:<64} {r.baseline:>9.3f}{r.unit[0]} {r.candidate:>9.3f}{r.unit[0]} "
            f"{r.ratio:>6.2f}x {spread:>19}  {r.goal:<18} {'yes' if r.ok else 'NO'}"
        )


_CHILD = """
import json, os, sys
from mddframes.emulator import serve
with serve(elements=int(sys.argv[1]), legacy=sys.argv[2] == "legacy",
           client_secret=os.environ["BENCH_EMULATOR_SECRET"],
           startup_timeout=float(sys.argv[3])) as emu:
    print(json.dumps({"base_url": emu.base_url}), flush=True)
    sys.stdin.read()  # serve until the parent closes our stdin
"""


@contextmanager
def remote_emulator(
    elements: int, *, legacy: bool = False, startup_timeout: float = 60
) -> Iterator[EmulatorHandle]:
    """An emulator of scale data in a child process, with a handle for admin calls.

    The service is remote in real use; an emulator in the measuring process would
    spend its own CPU under the client's GIL (2 shared cores) and cap any concurrency.

    The secret is made here and handed over in the environment (never printed);
    the child is ended by closing its stdin, then by its pid if it does not exit.
    """
    secret = secrets.token_urlsafe(24)
    env = {**os.environ, "BENCH_EMULATOR_SECRET": secret}
    child = subprocess.Popen(
        [
            sys.executable,
            "-c",
            _CHILD,
            str(elements),
            "legacy" if legacy else "current",
            str(startup_timeout),
        ],  # fmt: skip
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        env=env,
        text=True,
    )
    try:
        line = child.stdout.readline() if child.stdout else ""
        if not line:
            raise RuntimeError(f"the emulator child exited early (code {child.poll()})")
        config = EmulatorConfig(elements=elements, legacy=legacy)
        config.client_secret = secret
        handle = EmulatorHandle(json.loads(line)["base_url"], config)
        try:
            yield handle
        finally:
            handle.close()
    finally:
        if child.stdin:
            child.stdin.close()
        try:
            child.wait(timeout=30)
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait()
