"""A scripted service for the client's HTTP tests: a real server on 127.0.0.1 that plays
a misbehaving service (the ``script`` fixture), and a client connected to it.

Shared by the tests of http/, frames/, doctor/ and client/ (import it by name: the tests
folder is on ``sys.path`` through its conftest).
"""

from __future__ import annotations

import json
import threading
from collections import Counter
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from mddframes.client import Client
from mddframes.config import Settings

TOKEN_PATH = "/auth/realms/acme/protocol/openid-connect/token"
API = "/api/mdd-backend/api"
Answer = tuple[int, dict[str, str], bytes]


class Script:
    """What the server answers, per path; counts hits per path."""

    def __init__(self) -> None:
        self.routes: dict[str, Callable[[BaseHTTPRequestHandler], Answer | None]] = {}
        self.hits: Counter[str] = Counter()
        self.lock = threading.Lock()
        self.token_body = json.dumps({"access_token": "tok-abc", "expires_in": 300}).encode()

    def handle(self, handler: BaseHTTPRequestHandler) -> None:
        length = int(handler.headers.get("Content-Length") or 0)
        if length:
            handler.rfile.read(length)
        with self.lock:
            self.hits[handler.path] += 1
        if handler.path == TOKEN_PATH and TOKEN_PATH not in self.routes:
            answer: Answer | None = (200, {"Content-Type": "application/json"}, self.token_body)
        else:
            route = self.routes.get(handler.path)
            answer = route(handler) if route else (404, {}, b'{"message": "no route"}')
        if answer is None:  # the route wrote (or broke) the answer itself
            return
        status, headers, body = answer
        handler.send_response(status)
        headers = {"Content-Length": str(len(body)), **headers}
        for name, value in headers.items():
            handler.send_header(name, value)
        try:
            handler.end_headers()
            handler.wfile.write(body)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (time-out tests)


@pytest.fixture
def script() -> Iterator[tuple[Script, str]]:
    plan = Script()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: object) -> None:  # keep test output clean
            pass

        def do_GET(self) -> None:
            plan.handle(self)

        do_POST = do_PUT = do_GET

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield plan, f"http://127.0.0.1:{server.server_port}"
    finally:
        server.shutdown()
        server.server_close()  # joins the handler threads
        thread.join(timeout=5)


def make_client(base_url: str, **overrides: object) -> Client:
    values: dict = {
        "tenant": "acme",
        "base_url": base_url,
        "client_id": "cid",
        "client_secret": "sec-xyz",
        "realm": "acme",
        "max_retries": 1,
        "timeout": (2.0, 2.0),
    }
    values.update(overrides)
    return Client(Settings(**values))


def json_answer(value: object, status: int = 200) -> Callable[..., Answer]:
    return lambda handler: (
        status,
        {"Content-Type": "application/json"},
        json.dumps(value).encode(),
    )
