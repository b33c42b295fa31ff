"""The conditions of the combined-conditions suite, and the service's ground truth.

Everything here talks to the emulator directly (admin calls, plain ``requests`` with a
token of ``emu.token()``), never through the client under test, so what the checks
read of the service does not depend on what they check.
"""

from __future__ import annotations

import base64
import contextlib
import json
import tempfile
import threading
import time
import traceback
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import quote

import requests

T = TypeVar("T")

#: The client secret of every chaos emulator: letters of either case whose percent
#: spelling differs in the case of its hex digits (z, j, k, o, Z), digits and dashes.
SECRET = "Zq7jK-chaos-Sx9kWz3o"

#: The faults of issue 43's flaky service, and a real token-bucket rate limit.
FLAKY = {"error_rate": 0.12, "rate_limit_rate": 0.05, "drop_rate": 0.05, "latency": 0.01,
         "retry_after": 1}  # fmt: skip
RATE_LIMIT = {"rate_limit_rps": 150.0, "rate_limit_burst": 30}
#: Answers lost after the service acted (the connection closed instead of answered).
LOST_ANSWERS = {"lose_answer_rate": 0.05, "lose_answer_methods": ("PUT", "POST")}
#: Token churn (issue 49): tokens live this long and are all revoked this often.
TOKEN_TTL = 1
REVOKE_EVERY = 0.5


def spellings(secret: str) -> dict[str, str]:
    """The secret as issue 43 saw it reach a recording, plus base64: name -> spelling."""
    raw = secret.encode()
    return {
        "percent, lower-case hex": "".join(f"%{b:02x}" for b in raw),
        "double percent-encoded": "".join(f"%25{b:02X}" for b in raw),
        "HTML decimal entities": "".join(f"&#{b};" for b in raw),
        "HTML hex entities": "".join(f"&#x{b:x};" for b in raw),
        "every second character \\u-escaped": "".join(
            f"\\u{ord(c):04x}" if i % 2 else c for i, c in enumerate(secret)
        ),
        "base64": base64.b64encode(raw).decode(),
        "base64 of the percent spelling": base64.urlsafe_b64encode(
            "".join(f"%{b:02x}" for b in raw).encode()
        ).decode(),
    }


def inject_all(emu: Any, seed: int) -> None:
    """The flaky service, the rate limit and lost answers at once, seeded."""
    emu.inject_faults(**FLAKY, **RATE_LIMIT, **LOST_ANSWERS, seed=seed)


class IssuedTokens:
    """Every access token the emulator issues while installed (its own issuer, in this
    process: the admin calls list none, and expired ones are forgotten)."""

    def __init__(self, emu: Any) -> None:
        self.tokens: list[str] = []
        self._issuer = emu._state.issuer
        self._original = self._issuer._issue
        self._lock = threading.Lock()

    def _issue(self, client_id: str) -> str:
        token: str = self._original(client_id)
        with self._lock:
            self.tokens.append(token)
        return token

    def __enter__(self) -> IssuedTokens:
        self._issuer._issue = self._issue
        return self

    def __exit__(self, *exc: object) -> None:
        self._issuer._issue = self._original


@contextlib.contextmanager
def private_temp_dir(folder: Path) -> Iterator[Path]:
    """Temporary files of the run (a recording's spools) go into ``folder``, so the scan
    of "every file written by the run" sees those still there."""
    folder.mkdir(parents=True, exist_ok=True)
    previous = tempfile.tempdir
    tempfile.tempdir = str(folder)
    try:
        yield folder
    finally:
        tempfile.tempdir = previous


class Service:
    """Direct reads of the emulator (faults must be off): the ground truth."""

    def __init__(self, emu: Any) -> None:
        self.emu = emu
        self.root = emu.api_url
        self.session = requests.Session()
        self.session.headers["Authorization"] = f"Bearer {emu.token()}"

    def close(self) -> None:
        self.session.close()

    def raw(self, method: str, path: str, body: Any = None) -> bytes:
        response = self.session.request(method, self.root + path, json=body, timeout=60)
        if response.status_code >= 400:
            raise AssertionError(f"ground truth: {method} {path} -> {response.status_code}")
        return response.content

    def get(self, path: str) -> Any:
        return json.loads(self.raw("GET", path))

    def tree(self, system: str) -> list[dict[str, Any]]:
        entries: list[dict[str, Any]] = self.get(f"/api/system/{quote(system, safe='')}/tree")
        return entries

    def packages(self, system: str) -> dict[str, dict[str, Any]]:
        listed = self.get(f"/api/system/{quote(system, safe='')}/deployment-package")
        return {p["name"]: p for p in listed}

    def objects(self, kind: str, ids: Iterable[str]) -> dict[str, Any]:
        """Each table or mapping's JSON, read 4 at a time."""
        ids = list(ids)
        with ThreadPoolExecutor(4) as pool:
            docs = pool.map(lambda i: self.get(f"/api/{kind}/{quote(i, safe='')}"), ids)
            return dict(zip(ids, docs, strict=True))

    def put_table(self, table_id: str, payload: Any) -> None:
        self.raw("PUT", f"/api/table/{quote(table_id, safe='')}", payload)


def exact(value: Any) -> str:
    """A JSON value's exact spelling: key order, ints against floats, nulls, all kept."""
    return json.dumps(value, ensure_ascii=False, allow_nan=False)


def first_difference(expected: Any, actual: Any, where: str = "") -> str | None:
    """Where two JSON values first differ, in words; None when they are the same exactly."""
    if exact(expected) == exact(actual):
        return None
    if isinstance(expected, dict) and isinstance(actual, dict):
        if list(expected) != list(actual):
            return f"{where or '/'}: keys {list(expected)[:8]} became {list(actual)[:8]}"
        for key in expected:
            found = first_difference(expected[key], actual[key], f"{where}/{key}")
            if found:
                return found
    if isinstance(expected, list) and isinstance(actual, list):
        if len(expected) != len(actual):
            return f"{where or '/'}: {len(expected)} items became {len(actual)}"
        for position, (a, b) in enumerate(zip(expected, actual, strict=True)):
            found = first_difference(a, b, f"{where}/{position}")
            if found:
                return found
    return f"{where or '/'}: {exact(expected)[:80]} became {exact(actual)[:80]}"


@dataclass
class Problems:
    """The properties a run broke, in words: every check runs, all are reported at once."""

    items: list[str] = field(default_factory=list)

    def check(self, ok: bool, message: str | Callable[[], str]) -> None:
        if not ok:
            self.items.append(message() if callable(message) else message)

    def report(self) -> str:
        return "\n".join(f"- {line}" for line in self.items)


def step(raised: dict[str, str], name: str, call: Callable[[], T]) -> T | None:
    """``call()``, or None with its error kept in ``raised[name]`` (so the next step runs
    and the report names every step that raised)."""
    try:
        return call()
    except Exception as exc:
        raised[name] = "".join(traceback.format_exception_only(exc)).strip()[:600]
        return None


@dataclass
class Bounded:
    """``work`` in a thread for at most ``budget`` seconds; past it ``stop`` is called
    (the client closed: its next call fails) and the thread gets ``grace`` more."""

    budget: float
    grace: float = 30.0
    elapsed: float | None = None
    failure: BaseException | None = None
    overran: bool = False
    stuck: bool = False

    def run(self, work: Callable[[], None], stop: Callable[[], None]) -> None:
        def target() -> None:
            try:
                work()
            except BaseException as exc:  # reported by the test, with its traceback text
                self.failure = exc

        started = time.monotonic()
        thread = threading.Thread(target=target, name="chaos-work", daemon=True)
        thread.start()
        thread.join(self.budget)
        if thread.is_alive():
            self.overran = True
            stop()
            thread.join(self.grace)
            self.stuck = thread.is_alive()
        self.elapsed = time.monotonic() - started
