"""Bulk work while tokens expire and are revoked under it (issue 49).

``read_tables`` and ``write_tables`` of 200 tables (scale data) with a fresh client,
while the emulator's tokens live 1 s and a thread revokes every token every 0.5 s:

- alone: 120 ms latency on every request (the token request included);
- flaky: the flaky-service faults (12% 5xx, 5% sporadic 429 with ``Retry-After: 1``,
  5% dropped connections, 10 ms latency) plus a real rate limit (a token bucket of
  40 requests a second, burst 10), so requests wait for the pace before they leave.

Each run reports the failed tables, the token requests the emulator received
(``counters()["getToken"]``), the calls repeated after a 401 (the session's
``unauthorized_repeats``) and the wall time. Goal: no failed table. The other figures
are shown for the record (median with min and max over the runs).

Runs: ``BENCH_TOKENS_RUNS`` (default 3). ``BENCH_TOKENS_CASES`` picks cases by a
comma-separated list of words each case's label must contain (e.g. ``read,alone``; default
all four); ``BENCH_TOKENS_LOG`` names a file that gets each run's line as it ends.
"""

from __future__ import annotations

import logging
import os
import statistics
import tempfile
import time
import warnings
from collections.abc import Callable

from benchmarks.common import Result, remote_emulator
from mddframes import Client
from mddframes.emulator.server import EmulatorHandle
from mddframes.emulator.state import scale_dataset
from mddframes.errors import MddError

log = logging.getLogger(__name__)

ELEMENTS = 6_000  # 300 tables in the scale data
TABLES = 200
WORKERS = 8
TOKEN_TTL = 1.0
REVOKE_EVERY = 0.5
ALONE = {"latency": 0.12}
FLAKY = {"error_rate": 0.12, "rate_limit_rate": 0.05, "drop_rate": 0.05, "latency": 0.01,
         "retry_after": 1, "rate_limit_rps": 40.0, "rate_limit_burst": 10}  # fmt: skip
CONDITIONS = {"alone (120 ms latency)": ALONE,
              "flaky + 40 rps limit": FLAKY}  # fmt: skip


def _runs() -> int:
    return max(1, int(os.environ.get("BENCH_TOKENS_RUNS", "3")))


def _wanted(label: str) -> bool:
    words = [w.strip() for w in os.environ.get("BENCH_TOKENS_CASES", "").split(",")]
    return all(w in label for w in words if w)


Work = Callable[[], tuple[int, list[str]]]


def _read(client: Client, ids: list[str], run: int) -> Work:
    def read() -> tuple[int, list[str]]:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            frame = client.read_tables(ids, max_workers=WORKERS, progress=False, errors="skip")
        failures = frame.attrs.get("failures") or []
        got = set(frame["table_id"].astype(str)) if len(frame) else set()
        messages = [f"{f.get('error_type')}: {f.get('message')}" for f in failures]
        return max(len(set(ids) - got), len(failures)), messages

    return read


def _write(client: Client, ids: list[str], run: int) -> Work:
    # read through this client first, outside the measure and the churn: a write
    # overlays the frame on what this client read
    changed = client.read_tables(ids, max_workers=WORKERS, progress=False)
    changed["bench_note"] = f"token churn run {run} at {time.time():.3f}"

    def write() -> tuple[int, list[str]]:
        with tempfile.TemporaryDirectory() as backups, warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                out = client.write_tables(changed, backup_dir=backups, max_workers=WORKERS,
                                          progress=False)  # fmt: skip
            except MddError as exc:  # a table that cannot be prepared stops the batch
                return len(ids), [f"the whole batch raised {type(exc).__name__}: {exc}"]
        failed = out[out["status"] != "written"]
        return len(failed), [str(e) for e in failed["error"]]

    return write


def _one_run(emu: EmulatorHandle, faults: dict[str, float], prepare: Callable[..., Work],
             ids: list[str], run: int, label: str) -> tuple[int, int, int, float]:  # fmt: skip
    """(failed tables, token requests, repeats after a 401, seconds) of one fresh client."""
    with Client.from_emulator(emu) as client:
        work = prepare(client, ids, run)
        repeats_before = client.http.unauthorized_repeats
        with emu.churn_tokens(REVOKE_EVERY, ttl=TOKEN_TTL) as revocations:
            emu.inject_faults(seed=run, **faults)  # type: ignore[arg-type]
            emu.reset_counters()
            started = time.perf_counter()
            failed, messages = work()
            wall = time.perf_counter() - started
            tokens = emu.counters().get("getToken", 0)
            emu.clear_faults()
        repeats = client.http.unauthorized_repeats - repeats_before
    log.info("%s run %d: %d failed, %d token requests, %d repeats after 401, %.2f s, "
             "%d revocations", label, run, failed, tokens, repeats, wall, len(revocations))  # fmt: skip
    for message in sorted(set(messages))[:3]:
        log.info("    failure: %s", message[:300])
    return failed, tokens, repeats, wall


def _spread(name: str, values: list[float], unit: str, goal: str, ok: bool) -> Result:
    middle = statistics.median(values)
    return Result(name, 0.0, middle, unit, goal, middle, ok, min(values), max(values),
                  len(values))  # fmt: skip


def run() -> list[Result]:
    """Token churn during bulk reads and writes, alone and on a flaky, rate-limited service."""
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    if os.environ.get("BENCH_TOKENS_LOG"):
        log.addHandler(logging.FileHandler(os.environ["BENCH_TOKENS_LOG"]))
    logging.getLogger("mddframes").setLevel(logging.ERROR)
    logging.getLogger("urllib3").setLevel(logging.ERROR)  # its retry lines drown the runs'
    runs = _runs()
    results: list[Result] = []
    with remote_emulator(ELEMENTS) as emu:
        ids = [str(t["id"]) for t in scale_dataset(ELEMENTS).tables][:TABLES]
        works = {"read_tables": _read, "write_tables": _write}
        for condition, faults in CONDITIONS.items():
            for what, work in works.items():
                label = f"{what} {TABLES}, tokens 1 s + revoked /0.5 s, {condition}"
                if not _wanted(label):
                    continue
                seen = [_one_run(emu, faults, work, ids, run, label) for run in range(runs)]
                failed = [float(s[0]) for s in seen]
                results += [
                    _spread(f"{label}: failed", failed, "n", "== 0", max(failed) == 0),
                    _spread(
                        f"{label}: token requests",
                        [float(s[1]) for s in seen],
                        "n",
                        "(record)",
                        True,
                    ),  # fmt: skip
                    _spread(
                        f"{label}: repeats after 401",
                        [float(s[2]) for s in seen],
                        "n",
                        "(record)",
                        True,
                    ),  # fmt: skip
                    _spread(f"{label}: time", [s[3] for s in seen], "s", "(record)", True),
                ]
    return results
