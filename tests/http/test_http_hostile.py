"""A client that survives a hostile answer (issue 21).

A small server of this module's own on 127.0.0.1 (not the emulator, which never
misbehaves like this) answers every API GET with one hostile answer: cut off, trickling,
endless, nested 100,000 levels deep, oversized, a gzip bomb, invalid UTF-8, an HTML page,
an empty body, a redirect. Each must end in an ``MddError`` that names the operation and
the URL, within the call's deadline, with no credential in it, and a write whose read is
hostile must send no PUT.
"""

from __future__ import annotations

import json
import threading
import time
import zlib
from collections import Counter
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from mddframes.client import Client
from mddframes.config import Settings
from mddframes.errors import MddError, ResponseFormatError, ServiceError, TransportError

# a mechanism, checked once, on the newest pandas (tests/pandas_ends.py)
pytestmark = pytest.mark.pandas_once

TOKEN_PATH = "/auth/realms/acme/protocol/openid-connect/token"
API = "/api/mdd-backend/api"
TABLE_PATH = f"{API}/table/t1"
TREE_PATH = f"{API}/system/DWH/tree"
# Recognisable fakes: neither may ever show in an error.
ACCESS_TOKEN = "tok-HOSTILE-SECRET-5e1f"
CLIENT_SECRET = "cs-HOSTILE-SECRET-a93c"

DEADLINE = 2.0
MARGIN = 1.5  # scheduling on a loaded two-core machine
CAP = 1 << 20  # max_response_bytes of these clients: 1 MiB
TABLE = {
    "id": "t1",
    "metadata": {"columns": [{"name": "a", "dataType": "INTEGER"}]},
    "data": [{"a": 1}, {"a": 2}],
}

Case = Callable[[BaseHTTPRequestHandler, "Plan"], None]


class Plan:
    """What the server answers to API GETs (``case``), and what it was asked."""

    def __init__(self) -> None:
        self.case: Case | None = None
        self.hits: Counter[tuple[str, str]] = Counter()
        self.lock = threading.Lock()
        self.stop = threading.Event()  # set at teardown: endless answers end
        self.base = ""

    def count(self, method: str, path: str) -> None:
        with self.lock:
            self.hits[method, path.split("?")[0]] += 1

    @property
    def puts(self) -> int:
        return sum(n for (method, _), n in self.hits.items() if method == "PUT")


def send_head(handler: BaseHTTPRequestHandler, status: int, headers: dict[str, str]) -> None:
    handler.send_response(status)
    for name, value in headers.items():
        handler.send_header(name, value)
    handler.end_headers()


def whole(
    body: bytes, content_type: str = "application/json", status: int = 200, **extra: str
) -> Case:
    def answer(handler: BaseHTTPRequestHandler, plan: Plan) -> None:
        headers = {"Content-Type": content_type, "Content-Length": str(len(body)), **extra}
        send_head(handler, status, headers)
        handler.wfile.write(body)

    return answer


def chunked(pieces: Callable[[Plan], Iterator[bytes]], delay: float = 0.0) -> Case:
    """A chunked answer (no length) of ``pieces``, ``delay`` seconds apart."""

    def answer(handler: BaseHTTPRequestHandler, plan: Plan) -> None:
        send_head(
            handler, 200, {"Content-Type": "application/json", "Transfer-Encoding": "chunked"}
        )
        for piece in pieces(plan):
            if plan.stop.is_set():
                return
            handler.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece))
            handler.wfile.flush()
            time.sleep(delay)
        handler.wfile.write(b"0\r\n\r\n")

    return answer


def truncated(handler: BaseHTTPRequestHandler, plan: Plan) -> None:
    send_head(handler, 200, {"Content-Type": "application/json", "Content-Length": "1000"})
    handler.wfile.write(b'{"id": "t1", "data": [{"a": 1}')
    handler.close_connection = True


def cut_mid_chunk(handler: BaseHTTPRequestHandler, plan: Plan) -> None:
    send_head(handler, 200, {"Content-Type": "application/json", "Transfer-Encoding": "chunked"})
    handler.wfile.write(b'400\r\n{"id": "t1", "data": [')  # announces 1024 bytes, sends 21
    handler.close_connection = True


def trickle(handler: BaseHTTPRequestHandler, plan: Plan) -> None:
    """110 bytes, one every 0.1 s: each read well within the read time-out, 11 s in all."""
    body = json.dumps({**TABLE, "pad": "x" * 40}).encode()[:110]
    send_head(handler, 200, {"Content-Type": "application/json", "Content-Length": "110"})
    for byte in body:
        if plan.stop.is_set():
            return
        handler.wfile.write(bytes([byte]))
        handler.wfile.flush()
        time.sleep(0.1)


def trickling_headers(handler: BaseHTTPRequestHandler, plan: Plan) -> None:
    """The status line, then header lines a byte every 0.1 s, forever."""
    handler.wfile.write(b"HTTP/1.1 200 OK\r\n")
    while not plan.stop.is_set():
        handler.wfile.write(b"X-Slow: " + b"a" * 40 + b"\r\n")  # headers limit: 100 lines
        handler.wfile.flush()
        time.sleep(0.1)


def endless_slowly(plan: Plan) -> Iterator[bytes]:
    yield b'{"id": "t1", "data": ['
    while True:
        yield b'{"a": 1},' * 100  # 900 bytes every 10 ms: the cap is 12 s away


def endless_fast(plan: Plan) -> Iterator[bytes]:
    yield b'{"id": "t1", "data": ['
    while True:
        yield b'{"a": 1},' * 7000


DEPTH = 100_000
NESTED = b'{"id": "t1", "data": [{"a": ' + b"[" * DEPTH + b"]" * DEPTH + b"}]}"


def gzip_bomb() -> bytes:
    """256 MiB of zeros, gzipped to about 250 kB."""
    packer = zlib.compressobj(9, zlib.DEFLATED, 31)
    zeros = bytes(1 << 20)
    parts = [packer.compress(b'{"id": "t1", "data": [')]
    parts += [packer.compress(zeros) for _ in range(256)]
    return b"".join(parts) + packer.flush()


def redirect(handler: BaseHTTPRequestHandler, plan: Plan) -> None:
    send_head(
        handler, 302, {"Location": f"{plan.base}/login?next=elsewhere", "Content-Length": "0"}
    )


CASES: dict[str, tuple[Case, type[MddError], str]] = {
    # name: (answer, error class, words the message must hold)
    "truncated": (truncated, ResponseFormatError, "cut off"),
    "cut mid-chunk": (cut_mid_chunk, ResponseFormatError, "cut off"),
    "trickle": (trickle, TransportError, f"deadline of {DEADLINE:g} s"),
    "trickling headers": (trickling_headers, TransportError, f"deadline of {DEADLINE:g} s"),
    "endless": (chunked(endless_slowly, 0.01), TransportError, f"deadline of {DEADLINE:g} s"),
    "endless fast": (chunked(endless_fast), ResponseFormatError, "larger than the limit"),
    "nested 100,000 levels": (whole(NESTED), ResponseFormatError, "nested deeper"),
    "nested, streamed": (
        chunked(lambda plan: iter([NESTED[i : i + 4096] for i in range(0, len(NESTED), 4096)])),
        ResponseFormatError,
        "nested deeper",
    ),
    "oversized": (whole(b"[" + b"0," * CAP + b"0]"), ResponseFormatError, "larger than the limit"),
    "gzip bomb": (None, ResponseFormatError, "larger than the limit"),  # type: ignore[dict-item]
    "invalid UTF-8": (
        whole(b'{"id": "t1", "data": [{"a": "\xff\xfe"}]}'),
        ResponseFormatError,
        "utf-8",
    ),  # fmt: skip
    "HTML 200": (
        whole(b"<html><body>Please sign in</body></html>", "text/html"),
        ResponseFormatError,
        "text/html",
    ),
    "empty 200": (whole(b""), ResponseFormatError, "empty"),
    "redirect": (redirect, ServiceError, "/login?next=elsewhere"),
}


@pytest.fixture(scope="module")
def bomb() -> bytes:
    return gzip_bomb()


@pytest.fixture
def server(bomb: bytes) -> Iterator[Plan]:
    plan = Plan()
    token = json.dumps({"access_token": ACCESS_TOKEN, "expires_in": 300}).encode()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: object) -> None:
            pass

        def handle_one_request(self) -> None:
            try:
                super().handle_one_request()
            except (BrokenPipeError, ConnectionResetError):
                self.close_connection = True  # the client gave up: the point of most cases

        def do_GET(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            if length:
                self.rfile.read(length)
            plan.count(self.command, self.path)
            if self.path == TOKEN_PATH:
                whole(token)(self, plan)
            elif self.path.startswith(API) and self.command == "GET" and plan.case is not None:
                plan.case(self, plan)
            elif self.path == TABLE_PATH:
                whole(json.dumps(TABLE).encode())(self, plan)
            else:
                whole(b'{"message": "no route"}', status=404)(self, plan)

        do_POST = do_PUT = do_GET

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    plan.base = f"http://127.0.0.1:{httpd.server_port}"
    thread = threading.Thread(target=httpd.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield plan
    finally:
        plan.stop.set()
        httpd.shutdown()
        httpd.server_close()  # joins the handler threads
        thread.join(timeout=5)


def client_for(plan: Plan, **overrides: object) -> Client:
    values: dict[str, object] = {
        "tenant": "acme",
        "base_url": plan.base,
        "client_id": "hostile-test",
        "client_secret": CLIENT_SECRET,
        "realm": "acme",
        "max_retries": 1,
        "timeout": (1.0, 1.0),
        "request_deadline": DEADLINE,
        "max_response_bytes": CAP,
    }
    values.update(overrides)
    return Client(Settings(**values))  # type: ignore[arg-type]


def set_case(plan: Plan, name: str, bomb: bytes) -> tuple[type[MddError], str]:
    case, kind, words = CASES[name]
    if name == "gzip bomb":
        case = whole(bomb, **{"Content-Encoding": "gzip"})
    plan.case = case
    return kind, words


def assert_well_formed(error: MddError, operation: str, url: str, elapsed: float) -> None:
    assert elapsed < DEADLINE + MARGIN, f"{elapsed:.2f} s"
    assert error.operation == operation and error.url == url
    assert url in str(error)
    for secret in (ACCESS_TOKEN, CLIENT_SECRET):
        assert secret not in str(error) and secret not in repr(error)
        assert secret not in repr(error.__dict__)


READS = {
    # name: (how a user reads, operation, path)
    "read_table": (lambda client: client.read_table("t1"), "getTable", TABLE_PATH),
    "get_tree": (lambda client: client.api.get_tree("DWH"), "getTree", TREE_PATH),
}
MEASURED: dict[tuple[str, str], float] = {}


@pytest.mark.parametrize("read", sorted(READS))
@pytest.mark.parametrize("name", list(CASES))
def test_a_hostile_answer_is_an_mdd_error_within_the_deadline(server, bomb, name, read):
    kind, words = set_case(server, name, bomb)
    call, operation, path = READS[read]
    with client_for(server) as client:
        client.http.tokens.token()  # the token first: only the hostile call is timed
        started = time.monotonic()
        with pytest.raises(MddError) as caught:
            call(client)
        elapsed = time.monotonic() - started
    MEASURED[name, read] = elapsed
    error = caught.value
    assert isinstance(error, kind), repr(error)
    assert words.lower() in str(error).lower(), str(error)
    assert_well_formed(error, operation, server.base + path, elapsed)
    if name == "redirect":
        assert server.hits["GET", "/login"] == 0  # not followed
    assert server.puts == 0


@pytest.mark.parametrize("name", ["trickle", "endless", "gzip bomb", "cut mid-chunk"])
def test_a_hostile_body_read_in_chunks_ends_in_an_mdd_error(server, bomb, name):
    """``get_table_stream``: the deadline and the cap hold while the caller reads."""
    kind, words = set_case(server, name, bomb)
    with client_for(server) as client:
        client.http.tokens.token()
        started = time.monotonic()
        with pytest.raises(MddError) as caught, client.api.get_table_stream("t1") as body:
            for _ in body.chunks(1024):
                pass
        elapsed = time.monotonic() - started
    assert isinstance(caught.value, kind) and words.lower() in str(caught.value).lower()
    assert_well_formed(caught.value, "getTable", server.base + TABLE_PATH, elapsed)


@pytest.mark.parametrize("name", ["truncated", "trickle", "nested 100,000 levels", "gzip bomb",
                                  "invalid UTF-8", "HTML 200", "empty 200", "redirect"])  # fmt: skip
def test_a_write_whose_read_is_hostile_sends_no_put(server, bomb, name, tmp_path):
    with client_for(server) as client:
        frame = client.read_table("t1")  # a good read first: the write has its original
        frame.loc[0, "a"] = 42
        kind, _ = set_case(server, name, bomb)
        started = time.monotonic()
        with pytest.raises(MddError) as caught:
            client.write_table("t1", frame, backup_dir=tmp_path)
        elapsed = time.monotonic() - started
    assert isinstance(caught.value, kind), repr(caught.value)
    assert_well_formed(caught.value, "getTable", server.base + TABLE_PATH, elapsed)
    assert server.puts == 0


def test_a_gzip_bomb_stops_at_the_cap_without_inflating_it_all(server, bomb):
    """256 MiB of zeros behind 250 kB: the read stops at the 1 MiB cap, quickly."""
    set_case(server, "gzip bomb", bomb)
    with client_for(server) as client:
        client.http.tokens.token()
        started = time.monotonic()
        with pytest.raises(ResponseFormatError, match="larger than the limit of 1,048,576"):
            client.api.get_tree("DWH")
        elapsed = time.monotonic() - started
    assert elapsed < 1.0  # inflating 256 MiB alone takes longer


def test_the_deadline_defaults_to_four_read_time_outs(server):
    with client_for(server, request_deadline=None, timeout=(1.0, 0.5)) as client:
        assert client.settings.deadline == 2.0
        set_case(server, "trickle", b"")
        started = time.monotonic()
        with pytest.raises(TransportError, match="deadline of 2 s"):
            client.api.get_tree("DWH")
    assert time.monotonic() - started < 2.0 + MARGIN


def test_a_good_answer_after_hostile_ones_is_read_on_the_same_client(server, bomb):
    """The deadline's watchdog leaves a finished call's pooled connection alone."""
    with client_for(server) as client:
        set_case(server, "trickle", bomb)
        with pytest.raises(TransportError):
            client.api.get_table("t1")
        server.case = None
        for _ in range(3):
            assert client.api.get_table("t1") == TABLE
        time.sleep(DEADLINE + 0.3)  # the good calls' deadlines pass while idle
        assert client.api.get_table("t1") == TABLE


def test_report_measured_times():
    """Not a check: prints what the parametrized cases measured (pytest -s shows it)."""
    for (name, read), elapsed in sorted(MEASURED.items()):
        print(f"{name:24} {read:10} {elapsed:6.2f} s")
    assert all(elapsed < DEADLINE + MARGIN for elapsed in MEASURED.values())


def test_a_retry_after_past_the_deadline_is_not_waited(server):
    """A 429 asking for 30 s, with 2 s left: the call ends now, naming the deadline."""
    server.case = whole(b'{"message": "slow down"}', status=429, **{"Retry-After": "30"})
    with client_for(server, max_retries=3) as client:
        client.http.tokens.token()
        started = time.monotonic()
        with pytest.raises(TransportError, match="deadline of 2 s") as caught:
            client.api.get_tree("DWH")
        elapsed = time.monotonic() - started
    assert_well_formed(caught.value, "getTree", server.base + TREE_PATH, elapsed)
    assert elapsed < 1.0 and server.hits["GET", TREE_PATH] == 1


def test_the_two_settings_resolve_from_arguments_and_variables(tmp_path):
    from mddframes.config import resolve_settings
    from mddframes.errors import ConfigurationError

    required = {"base_url": "https://x.example", "client_id": "c", "client_secret": "s"}
    missing = tmp_path / "none.toml"
    default = resolve_settings("t", **required, environ={}, config_file=missing)
    assert default.request_deadline is None and default.deadline == 240.0
    assert default.max_response_bytes == 2 << 30
    environ = {"MDD_REQUEST_DEADLINE": "7.5", "MDD_MAX_RESPONSE_BYTES": "1000"}
    from_env = resolve_settings("t", **required, environ=environ, config_file=missing)
    assert (from_env.deadline, from_env.max_response_bytes) == (7.5, 1000)
    given = resolve_settings(
        "t", **required, request_deadline=3, environ=environ, config_file=missing
    )
    assert given.deadline == 3.0
    with pytest.raises(ConfigurationError, match="MDD_REQUEST_DEADLINE"):
        resolve_settings(
            "t", **required, environ={"MDD_REQUEST_DEADLINE": "0"}, config_file=missing
        )
