"""Bulk work under the service's rate limit, and writes whose answers are lost (issue 33).

1. ``read_tables`` of 300 tables and ``export_scripts`` of 40 elements
   through the emulator's ``rate_limit_rps`` fault (a token bucket of R requests a
   second across all connections, burst 2, 429 otherwise) at R=20 and R=5, for each
   ``Retry-After`` style (seconds, HTTP-date, none). ``read_tables`` and one
   ``export_scripts`` start with a fresh client (a cold pace: the limit is unknown to
   it); a second ``export_scripts`` runs in the client that just read the tables (its
   pace has learnt the limit: one pace per client). Goals: wall time at most 1.2x the ideal
   ``(requests - burst) / R``, 429s at most 10% of the requests, no failed object.
2. Lost answers: ``write_tables`` of 20 tables (``etag`` dialect, so a repeated PUT
   gets 412), ``create_children`` of 20 rows and ``add_to_package`` of 20 elements,
   with 35% of PUT and POST answers lost after the service acted. Goals: no false
   failure, no duplicate element.
3. No limit: ``read_tables`` of 300 tables at 20 ms latency with 8 workers, against a
   sequential loop of ``getTable`` (goal: at least 7x faster: no pace cost).
4. A flaky service, no real limit (issue 43): ``read_tables`` of 200 tables of the
   ``SCALE`` system with a fresh client, against a plain loop of 8 threads of
   ``requests`` with urllib3's ``Retry`` (back-off, ``Retry-After`` per request, 429 and
   5xx repeated, no shared pace) in the same run, under the same faults: "flaky"
   (``error_rate=0.12, rate_limit_rate=0.05, drop_rate=0.05, latency=0.01,
   retry_after=1``) and "sporadic" 429s alone (``rate_limit_rate=0.10, retry_after=1``).
   Goals: the median of client / plain loop at most 1.2x, no failed table in any run.

Runs: ``BENCH_RATELIMIT_RUNS`` (default 5); each goal of 1-3 is judged on every run
(the table shows the median with min and max). ``BENCH_RATELIMIT_PARTS`` picks parts
(``limits,lost,nolimit,flaky``; default all); the flaky runs draw their faults from
seeds ``BENCH_RATELIMIT_SEED`` (default 0) onwards, so separate processes can share runs.
"""

from __future__ import annotations

import logging
import os
import statistics
import tempfile
import time
import warnings
from concurrent.futures import ThreadPoolExecutor

import pandas as pd
import requests
from requests.adapters import HTTPAdapter
from urllib3.util.retry import Retry

from benchmarks.common import (
    Result,
    floor_session,
    median_speedup,
    paired_times,
    remote_emulator,
)
from mddframes import Client
from mddframes.emulator import serve
from mddframes.emulator.state import scale_dataset

log = logging.getLogger(__name__)

ELEMENTS = 6_000  # 300 tables in the scale data
BURST = 2
WORKERS = 8
STYLES = ("seconds", "http-date", "none")
CASES = ((20.0, 300, 40), (5.0, 300, 40))  # (R, tables, exports)
LOST = 0.35
LATENCY = 0.020
FLAKY_TABLES = 200
#: The flaky cases: (name, the emulator's faults), no real limit in either.
FLAKY = (
    ("flaky", {"error_rate": 0.12, "rate_limit_rate": 0.05, "drop_rate": 0.05,
               "latency": 0.01, "retry_after": 1}),
    ("sporadic", {"rate_limit_rate": 0.10, "retry_after": 1}),
)  # fmt: skip
PARTS = ("limits", "lost", "nolimit", "flaky")


def _runs() -> int:
    return max(1, int(os.environ.get("BENCH_RATELIMIT_RUNS", "5")))


def _measure(emu, client: Client, rate: float, style: str, work) -> tuple[float, int, int, int]:
    """Wall time, requests answered, 429s and failed objects of ``work`` under the limit."""
    emu.inject_faults(rate_limit_rps=rate, rate_limit_burst=BURST, retry_after_style=style)
    emu.reset_counters()
    started = time.perf_counter()
    failed = work(client)
    wall = time.perf_counter() - started
    requests = sum(emu.counters().values())
    limited = sum(emu.fault_counters().values())
    emu.clear_faults()
    return wall, requests, limited, failed


def _spread_result(name: str, values: list[float], goal: str, ok, unit: str = "x") -> Result:
    middle = statistics.median(values)
    return Result(name, 0.0, middle, unit, goal, middle, all(ok(v) for v in values),
                  min(values), max(values), len(values))  # fmt: skip


def _one(
    emu, client: Client, rate: float, style: str, work, label: str
) -> tuple[float, float, int]:
    """(wall / ideal, 429 share, failed objects) of one measured piece of work."""
    wall, requests, limited, failed = _measure(emu, client, rate, style, work)
    ideal = (requests - limited - BURST) / rate
    log.info("%s: wall %.2f s ideal %.2f s, %d/%d 429, %d failed, %s", label, wall, ideal,
             limited, requests, failed, client.http.pace.describe())  # fmt: skip
    return wall / ideal, limited / requests, failed


def bench_limits(runs: int) -> list[Result]:
    results: list[Result] = []
    with remote_emulator(ELEMENTS) as emu, Client.from_emulator(emu) as setup:
        table_ids = [str(t["id"]) for t in scale_dataset(ELEMENTS).tables]
        types = [t for t in setup.api.get_object_types() if isinstance(t, dict)]
        best = max(types, key=lambda t: len(t.get("elementTypes") or []))
        allowed = set(best.get("elementTypes") or [])
        elements = [e["id"] for e in scale_dataset(ELEMENTS).elements
                    if not allowed or e.get("type") in allowed]  # fmt: skip
        object_type = str(best["id"])
        for rate, n_tables, n_exports in CASES:
            for style in STYLES:
                labels = {
                    "read": f"read_tables {n_tables}, R={rate:g}, Retry-After {style} (cold pace)",
                    "cold": f"export_scripts {n_exports}, R={rate:g}, Retry-After {style} "
                    "(cold pace)",
                    "warm": f"export_scripts {n_exports}, R={rate:g}, Retry-After {style} "
                    "(same client, after read_tables)",
                }
                seen: dict[str, list[tuple[float, float, int]]] = {k: [] for k in labels}

                def read(client: Client, n: int = n_tables) -> int:
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        frame = client.read_tables(table_ids[:n], max_workers=WORKERS,
                                                   progress=False, errors="skip")  # fmt: skip
                    got = set(frame["table_id"].astype(str)) if len(frame) else set()
                    return n - len(got & set(table_ids[:n]))

                def export(client: Client, n: int = n_exports) -> int:
                    out = client.export_scripts(
                        elements[:n], object_type, max_workers=WORKERS, progress=False
                    )
                    return int((~out["ok"]).sum())

                for _ in range(runs):
                    with Client.from_emulator(emu) as client:  # a cold pace
                        client.http.tokens.token()  # the token is not the work measured
                        for key, work in (("read", read), ("warm", export)):
                            seen[key].append(_one(emu, client, rate, style, work, labels[key]))
                    with Client.from_emulator(emu) as client:
                        client.http.tokens.token()
                        seen["cold"].append(_one(emu, client, rate, style, export, labels["cold"]))
                for key in ("read", "cold", "warm"):
                    label, runs_seen = labels[key], seen[key]
                    results.append(_spread_result(f"{label}: wall / ideal",
                                                  [r for r, _, _ in runs_seen], "<= 1.2x",
                                                  lambda r: r <= 1.2))  # fmt: skip
                    results.append(_spread_result(f"{label}: 429s / requests",
                                                  [s for _, s, _ in runs_seen], "<= 0.10",
                                                  lambda r: r <= 0.10, unit="share"))  # fmt: skip
                    results.append(_spread_result(f"{label}: failed objects",
                                                  [float(f) for _, _, f in runs_seen], "== 0",
                                                  lambda r: r == 0, unit="n"))  # fmt: skip
    return results


def _lost_round(emu, client: Client, tables: list[str], root: str, package_ids: list[str],
                round_no: int) -> tuple[int, int]:  # fmt: skip
    """One round of the three lost-answer batches: (false failures, duplicates)."""
    frame = client.read_tables(tables, progress=False)
    frame["bench_note"] = f"round {round_no}"
    names = [f"lost-{round_no}-{i}" for i in range(len(tables))]
    children = pd.DataFrame({"parent": root, "type": "FOLDER", "name": names})
    emu.inject_faults(lose_answer_rate=LOST, seed=round_no,
                      operations=["tableUpdate", "createChildStructure", "addToDeploymentPackage"])  # fmt: skip
    with tempfile.TemporaryDirectory() as backups, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        written = client.write_tables(frame, backup_dir=backups, progress=False)
        created = client.create_children(children, progress=False)
        added = (
            client.add_to_package("DWH", "hotfix-2024.07.1", package_ids)
            if package_ids
            else pd.DataFrame({"ok": []})
        )
    lost = sum(emu.fault_counters().values())
    emu.clear_faults()
    false_failures = int((written["status"] != "written").sum() + (~created["ok"]).sum()
                         + (~added["ok"].astype(bool)).sum())  # fmt: skip
    tree = client.api.get_tree("DWH")
    counts: dict[str, int] = {}
    for entry in tree:
        if entry.get("parentId") == root and str(entry.get("name", "")).startswith(
            f"lost-{round_no}-"
        ):
            counts[entry["name"]] = counts.get(entry["name"], 0) + 1
    duplicates = sum(c - 1 for c in counts.values()) + (len(names) - len(counts))
    held = [r for r in (client.read_tables(tables, progress=False)["bench_note"].unique())]
    if held != [f"round {round_no}"]:
        false_failures += 1000  # a write reported but not on the service
    log.info("lost round %d: %d answers lost, %d false failures, %d duplicates", round_no, lost,
             false_failures, duplicates)  # fmt: skip
    return false_failures, duplicates


def bench_lost_answers(runs: int) -> list[Result]:
    with serve(dialect="etag") as emu, Client.from_emulator(emu) as client:
        tree = client.read_tree("DWH")
        tables = [str(t) for t in tree["table_id"].dropna().unique()][:20]
        root = str(tree.loc[tree["parent_id"].isna(), "id"].iloc[0])
        elements = [str(i) for i in tree["id"]]
        falses, dupes = [], []
        for round_no in range(runs):
            emu.reset()
            package_ids = elements[20 * round_no % len(elements) :][:20]
            f, d = _lost_round(emu, client, tables, root, package_ids, round_no)
            falses.append(f)
            dupes.append(d)
    return [
        _spread_result(f"lost answers ({LOST:.0%} of PUT/POST), 20-object batches: "
                       "false failures", falses, "== 0", lambda v: v == 0, unit="n"),
        _spread_result(f"lost answers ({LOST:.0%} of PUT/POST), 20-object batches: "
                       "duplicates", dupes, "== 0", lambda v: v == 0, unit="n"),
    ]  # fmt: skip


def bench_no_limit(runs: int) -> Result:
    with remote_emulator(ELEMENTS) as emu, Client.from_emulator(emu) as client:
        ids = [str(t["id"]) for t in scale_dataset(ELEMENTS).tables]
        emu.inject_faults(latency=LATENCY, operations=["getTable"])
        base, cand = paired_times(
            lambda: [client.api.get_table(i) for i in ids],
            lambda: client.read_tables(ids, max_workers=WORKERS, progress=False),
            repeat=runs,
        )
        return median_speedup(
            f"read_tables 300 x {LATENCY * 1000:g} ms, no limit: {WORKERS} workers vs sequential",
            base,
            cand,
            7.0,
        )


def _plain_session(emu) -> requests.Session:
    """What a careful script does by hand: ``requests`` with urllib3's ``Retry`` (back-off,
    each request waits its own ``Retry-After``, 429 and 5xx repeated), no shared pace."""
    session = floor_session(emu)
    retry = Retry(total=10, backoff_factor=0.25, status_forcelist=(429, 500, 502, 503, 504),
                  respect_retry_after_header=True, raise_on_status=False)  # fmt: skip
    adapter = HTTPAdapter(pool_connections=1, pool_maxsize=WORKERS, max_retries=retry)
    session.mount("http://", adapter)
    session.mount("https://", adapter)
    return session


def _plain_loop(session: requests.Session, urls: list[str]) -> int:
    """GET every URL in 8 threads; the number that failed (after urllib3's repeats)."""

    def get(url: str) -> bool:
        try:
            with session.get(url, timeout=60) as response:
                return response.status_code == 200
        except requests.RequestException:
            return False

    with ThreadPoolExecutor(WORKERS) as pool:
        return sum(not ok for ok in pool.map(get, urls))


def bench_flaky(runs: int) -> list[Result]:
    """The flaky cases: read_tables of a fresh client against the plain loop, same faults."""
    results: list[Result] = []
    seed0 = int(os.environ.get("BENCH_RATELIMIT_SEED", "0"))
    with remote_emulator(ELEMENTS) as emu:
        ids = [str(t["id"]) for t in scale_dataset(ELEMENTS).tables][:FLAKY_TABLES]
        urls = [f"{emu.api_url}/api/table/{i}" for i in ids]
        for name, faults in FLAKY:
            plain_s, client_s, ratios, failed, rates = [], [], [], [], []
            for run_no in range(runs):
                session = _plain_session(emu)  # its token is not the work measured
                emu.inject_faults(seed=seed0 + run_no, **faults)
                started = time.perf_counter()
                plain_failed = _plain_loop(session, urls)
                plain_s.append(time.perf_counter() - started)
                emu.clear_faults()
                session.close()
                with Client.from_emulator(emu) as client:  # a cold pace
                    client.http.tokens.token()
                    emu.inject_faults(seed=seed0 + run_no, **faults)
                    emu.reset_counters()
                    started = time.perf_counter()
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        frame = client.read_tables(ids, max_workers=WORKERS, progress=False,
                                                   errors="skip")  # fmt: skip
                    client_s.append(time.perf_counter() - started)
                    requests_sent = sum(emu.counters().values())
                    emu.clear_faults()
                    got = set(frame["table_id"].astype(str)) if len(frame) else set()
                    failed.append(float(len(set(ids) - got) + plain_failed))
                    rates.append(client.http.pace.rate)
                    log.info("%s run %d: client %.2f s (%d requests, %s), plain %.2f s, "
                             "%d + %d failed", name, run_no, client_s[-1], requests_sent,
                             client.http.pace.describe(), plain_s[-1], len(set(ids) - got),
                             plain_failed)  # fmt: skip
                ratios.append(client_s[-1] / plain_s[-1])
            label = f"{name}: read_tables {FLAKY_TABLES}, fresh client vs plain urllib3 loop"
            middle = statistics.median(ratios)
            results.append(Result(f"{label}: time ratio", statistics.median(plain_s), statistics.median(client_s),
                                  "s", "<= 1.2x (median)", middle, middle <= 1.2, min(ratios), max(ratios), runs))  # fmt: skip
            results.append(_spread_result(f"{label}: plain loop seconds", plain_s, "(context)",
                                          lambda v: True, unit="s"))  # fmt: skip
            results.append(_spread_result(f"{label}: client seconds", client_s, "(context)",
                                          lambda v: True, unit="s"))  # fmt: skip
            results.append(_spread_result(f"{label}: failed tables (client + plain)", failed,
                                          "== 0", lambda v: v == 0, unit="n"))  # fmt: skip
            log.info("%s: pace rate at the end of each run: %s", name, rates)
    return results


def _parts() -> set[str]:
    wanted = os.environ.get("BENCH_RATELIMIT_PARTS", ",".join(PARTS))
    parts = {p.strip() for p in wanted.split(",") if p.strip()}
    unknown = parts - set(PARTS)
    if unknown:
        raise SystemExit(
            f"BENCH_RATELIMIT_PARTS: unknown part(s) {sorted(unknown)}; known: {PARTS}"
        )
    return parts


def run() -> list[Result]:
    """The rate-limit, lost-answer, no-limit and flaky-service benchmarks."""
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    logging.getLogger("mddframes").setLevel(logging.WARNING)
    logging.getLogger("urllib3").setLevel(logging.ERROR)  # the plain loop's repeats
    runs = _runs()
    parts = _parts()
    results: list[Result] = []
    if "limits" in parts:
        results += bench_limits(runs)
    if "lost" in parts:
        results += bench_lost_answers(runs)
    if "nolimit" in parts:
        results.append(bench_no_limit(runs))
    if "flaky" in parts:
        results += bench_flaky(runs)
    return results
