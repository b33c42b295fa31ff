"""The pace against simulated services in real time: 8 threads, no HTTP (about 5 minutes).

``python -m benchmarks pace_sim`` is the quick loop for work on
:mod:`mddframes.http.pace`: it runs the pace's own code (``acquire``, ``succeeded``,
``throttled``, ``unanswered``) from 8 worker threads against a service model kept in
this process (a token bucket, sporadic 429s, errors), and the same work as a plain loop
(8 threads, no shared pace, each request waiting out its own ``Retry-After``), in the
same run. With several workers the answers to one rate arrive after the rate has moved
on, which a one-request-at-a-time fake clock does not show: rules tuned there broke
here. What it does not replace: ``python -m benchmarks ratelimit`` (the client over
HTTP against the emulator), whose figures are the ones the goals are about.

``BENCH_PACE_SIM_RUNS`` sets the runs per case (default 5), ``BENCH_PACE_SIM_CASES``
picks cases by name (comma-separated substrings).
"""

from __future__ import annotations

import math
import os
import queue
import random
import statistics
import threading
import time
from dataclasses import dataclass

from benchmarks.common import Result
from mddframes.http.pace import Pace

WORKERS = 8
#: A request's round trip in the model: half before the service decides, half after.
LATENCY = 0.015
BURST = 2
#: Error back-off as urllib3's Retry with backoff_factor 0.25 (full jitter in the pace's
#: error repeats, mddframes.http.retry)
BACKOFF = 0.25


@dataclass(frozen=True)
class Case:
    name: str
    jobs: int
    limit: float | None  # the token bucket's rate, req/s
    noise: float  # share of answers that are sporadic 429s (Retry-After: 1)
    errors: float  # share answered 5xx or lost (never acted on by the pace)
    retry_after: str  # "seconds" or "none" (for the bucket's 429s)
    #: the goal: "plain" (pace / plain loop <= 1.2x) or "ideal" (pace / (jobs/limit) <= 1.2x)
    versus: str


CASES = (
    Case("sporadic 10%", 200, None, 0.10, 0.0, "seconds", "plain"),
    Case("flaky", 200, None, 0.05, 0.17, "seconds", "plain"),
    Case("bucket R=20", 150, 20.0, 0.0, 0.0, "seconds", "ideal"),
    Case("bucket R=20, no Retry-After", 150, 20.0, 0.0, 0.0, "none", "ideal"),
    Case("bucket R=5", 40, 5.0, 0.0, 0.0, "seconds", "ideal"),
    Case("fresh 40, R=20", 40, 20.0, 0.0, 0.0, "seconds", "ideal"),
    Case("bucket R=20 + sporadic 5%", 150, 20.0, 0.05, 0.0, "seconds", "ideal"),
)


class Service:
    """A token bucket (``limit`` per second, ``BURST`` deep) with sporadic 429s and errors."""

    def __init__(self, case: Case, seed: int) -> None:
        self.case = case
        self.rng = random.Random(seed)
        self.lock = threading.Lock()
        self.tokens = float(BURST)
        self.stamp = time.monotonic()
        self.requests = self.limited = 0

    def answer(self) -> tuple[str, float | None]:
        """``("ok", None)``, ``("error", None)`` or ``("429", retry_after or None)``."""
        case = self.case
        with self.lock:
            self.requests += 1
            draw = self.rng.random()
            if draw < case.errors:
                return "error", None
            if draw < case.errors + case.noise:
                self.limited += 1
                return "429", 1.0
            if case.limit is None:
                return "ok", None
            now = time.monotonic()
            self.tokens = min(float(BURST), self.tokens + (now - self.stamp) * case.limit)
            self.stamp = now
            if self.tokens >= 1.0:
                self.tokens -= 1.0
                return "ok", None
            self.limited += 1
            wait = (1.0 - self.tokens) / case.limit
            return "429", (float(math.ceil(wait)) if case.retry_after == "seconds" else None)


def _worker(jobs: queue.Queue[int], service: Service, pace: Pace | None) -> None:
    while True:
        try:
            jobs.get_nowait()
        except queue.Empty:
            return
        not_before = 0.0
        errors = 0
        while True:
            sent = pace.acquire(not_before) if pace else time.monotonic()
            if not pace and not_before > sent:
                time.sleep(not_before - sent)
            not_before = 0.0
            time.sleep(LATENCY / 2)
            status, retry_after = service.answer()
            time.sleep(LATENCY / 2)
            if status == "ok":
                if pace:
                    pace.succeeded(sent)
                break
            if status == "error":
                if pace:
                    pace.unanswered(sent)
                # the first repeat at once (as urllib3), then exponential, full jitter
                wait = 0.0 if errors == 0 else random.uniform(0, BACKOFF * 2**errors)
                errors += 1
                not_before = time.monotonic() + wait
                continue
            if pace:
                not_before = pace.throttled(sent, retry_after)
            else:
                not_before = time.monotonic() + (retry_after if retry_after is not None else 0.0)


def run_case(case: Case, seed: int, paced: bool) -> tuple[float, int, int, float | None]:
    """Seconds, requests, 429s and the pace's final rate of one run."""
    service = Service(case, seed)
    pace = Pace() if paced else None
    jobs: queue.Queue[int] = queue.Queue()
    for job in range(case.jobs):
        jobs.put(job)
    threads = [
        threading.Thread(target=_worker, args=(jobs, service, pace), daemon=True)
        for _ in range(WORKERS)
    ]
    started = time.monotonic()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    seconds = time.monotonic() - started
    return seconds, service.requests, service.limited, pace.rate if pace else None


def _cases() -> list[Case]:
    wanted = [w for w in os.environ.get("BENCH_PACE_SIM_CASES", "").split(",") if w]
    return [c for c in CASES if not wanted or any(w in c.name for w in wanted)]


def run() -> list[Result]:
    runs = int(os.environ.get("BENCH_PACE_SIM_RUNS", "5"))
    results = []
    for case in _cases():
        ratios, shares, paced_s, base_s = [], [], [], []
        for seed in range(runs):
            seconds, sent, limited, rate = run_case(case, seed, paced=True)
            if case.versus == "plain":
                baseline = run_case(case, seed, paced=False)[0]
            else:
                assert case.limit is not None
                baseline = max(case.jobs - BURST, 1) / case.limit
            ratios.append(seconds / baseline)
            shares.append(limited / sent)
            paced_s.append(seconds)
            base_s.append(baseline)
            shown = "none" if rate is None else f"{rate:.0f}"
            print(
                f"  {case.name} seed {seed}: {seconds:.2f} s vs {baseline:.2f} s "
                f"({seconds / baseline:.2f}x), 429s {limited}/{sent}, rate {shown}",
                flush=True,
            )
        ratio = statistics.median(ratios)
        share_ok = case.noise > 0 or case.limit is None or max(shares) <= 0.10
        results.append(
            Result(
                name=f"pace sim: {case.name} (429s {min(shares):.0%}-{max(shares):.0%})",
                baseline=statistics.median(base_s),
                candidate=statistics.median(paced_s),
                unit="s",
                goal=f"<= 1.2x {case.versus}"
                + ("" if case.noise or not case.limit else ", 429s <= 10%"),
                ratio=ratio,
                ok=max(ratios) <= 1.2 and share_ok,
                low=min(ratios),
                high=max(ratios),
                runs=runs,
            )
        )
    return results
