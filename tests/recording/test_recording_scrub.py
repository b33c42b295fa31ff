"""A hostile service echoes the client secret and the tokens everywhere it can; the
recording holds none of them, in any spelling, and says what it scrubbed."""

from __future__ import annotations

import base64
import html
import io
import json
import os
import stat
import threading
import zipfile
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import quote, quote_plus

import pytest

from mddframes.client import Client
from mddframes.config import Settings
from mddframes.errors import MddError

SECRET = 's3cr/et+va=l&ue"x<y>'
TOKENS = ["tok-FIRST-0123456789abcdef", "tok-SECOND-fedcba9876543210"]
COOKIE = "sess-cookie-value-42"


def _spellings(value: str) -> set[str]:
    raw = value.encode()
    return {
        value,
        quote(value, safe=""),
        quote_plus(value),
        json.dumps(value)[1:-1],
        json.dumps(value)[1:-1].replace("/", "\\/"),
        html.escape(value),
        base64.b64encode(raw).decode(),
        base64.urlsafe_b64encode(raw).decode().rstrip("="),
        "".join(f"\\u{ord(c):04x}" for c in value),
    }


class Hostile:
    """Every answer echoes the request (headers, body, URL) in every way it can."""

    def __init__(self) -> None:
        self.tokens = iter(TOKENS)
        self.refused_once = False
        self.host = ""

    def answer(self, handler: BaseHTTPRequestHandler, body: bytes) -> None:
        echo = {
            "path": handler.path,
            "headers": dict(handler.headers),
            "body": body.decode("utf-8", "replace"),
        }
        everything = json.dumps(echo)
        spelled = {s: sorted(_spellings(s)) for s in [SECRET, *TOKENS, COOKIE]}
        escaped = json.dumps(spelled, ensure_ascii=True)
        headers = {
            "Set-Cookie": f"session={COOKIE}; Path=/; HttpOnly",
            "X-Echo-Authorization": handler.headers.get("Authorization", ""),
            "X-Echo-Body": quote(body.decode("utf-8", "replace")),
            "Location": f"http://{self.host}/next?token={TOKENS[0]}&secret={quote(SECRET)}",
        }
        if "/token" in handler.path:
            token = next(self.tokens, TOKENS[-1])
            document = {
                "access_token": token,
                "refresh_token": token + "-refresh",
                "token_type": "Bearer",
                "expires_in": 300,
                "echo": echo,
                "secret_again": SECRET,
            }
            self._send(handler, 200, headers, json.dumps(document).encode(), "application/json")
            return
        if "/table/" in handler.path and not self.refused_once:
            self.refused_once = True  # a 401: the client renews its token (a second one)
            self._send(handler, 401, headers, everything.encode(), "application/json")
            return
        if handler.path.endswith("/result"):
            archive = io.BytesIO()
            with zipfile.ZipFile(archive, "w") as zf:
                zf.writestr("stored.sql", f"-- {everything}\n-- {SECRET}", zipfile.ZIP_STORED)
                zf.writestr(f"{TOKENS[0]}.sql", f"-- {TOKENS}", zipfile.ZIP_DEFLATED)
            self._send(handler, 200, headers, archive.getvalue(), "application/zip")
            return
        if "/object-type" in handler.path:  # over 1 MiB: spooled to disk, copied in pieces
            piece = "x" * 65_530 + SECRET + TOKENS[0]  # the secrets straddle 64 KiB pieces
            big = json.dumps({"padding": [piece] * 20, "echo": echo}).encode()
            self._send(handler, 200, headers, big, "application/json")
            return
        document = {
            "id": "t1",
            "echo": echo,
            "spelled": spelled,
            "escaped_again": escaped,
            "html": f"<p>{html.escape(everything)}</p>",
            "link": f"http://{self.host}/api?access_token={TOKENS[0]}",
        }
        self._send(handler, 200, headers, json.dumps(document).encode(), "application/json")

    @staticmethod
    def _send(
        handler: BaseHTTPRequestHandler,
        status: int,
        headers: dict[str, str],
        body: bytes,
        mime: str,
    ) -> None:
        handler.send_response(status)
        for name, value in {
            **headers,
            "Content-Type": mime,
            "Content-Length": str(len(body)),
        }.items():
            handler.send_header(name, value)
        handler.end_headers()
        handler.wfile.write(body)


@pytest.fixture
def hostile() -> Iterator[str]:
    plan = Hostile()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: object) -> None:
            pass

        def do_GET(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            plan.answer(self, self.rfile.read(length) if length else b"")

        do_POST = do_PUT = do_GET

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    plan.host = f"127.0.0.1:{server.server_port}"
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield f"http://{plan.host}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


def _session(base_url: str) -> Client:
    return Client(
        Settings(
            tenant="acme",
            base_url=base_url,
            client_id="hostile-client",
            client_secret=SECRET,
            realm="acme",
            max_retries=0,
        )
    )


def _record(base_url: str, path: Path, *, redact_values: bool = False) -> None:
    with _session(base_url) as client, client.recording(path, redact_values=redact_values):
        client.http.call("getTable", {"tableId": "t1"}).close()
        client.http.call("getObjectTypes", query={"token": TOKENS[1], "s": SECRET}).close()
        client.http.call("tableUpdate", {"tableId": "t1"}, json_body={"echo": SECRET}).close()
        with client.http.call(
            "structureMassExportAsyncResult", {"taskId": "x"}, stream=True
        ) as result:
            result.content  # noqa: B018 -- read it through the tee
        try:
            client.api.get_tree("DWH")
        except MddError:
            pass  # the echo is not a tree; its call is recorded all the same


def _all_text(path: Path) -> str:
    """The file, and every member of every zip answer in it, as one text."""
    text = path.read_text("utf-8")
    parts = [text]
    for entry in json.loads(text)["log"]["entries"]:
        content = entry["response"]["content"]
        if content.get("encoding") == "base64":
            data = base64.b64decode(content["text"])
            parts.append(data.decode("latin-1"))
            if not data.startswith(b"PK"):
                continue  # a binary answer that is no zip
            with zipfile.ZipFile(io.BytesIO(data)) as zf:
                for name in zf.namelist():
                    parts.append(name)
                    parts.append(zf.read(name).decode("utf-8", "replace"))
    return "\n".join(parts)


@pytest.mark.parametrize("redact_values", [False, True])
def test_no_secret_token_cookie_or_host_in_any_spelling(
    hostile: str, tmp_path: Path, redact_values: bool
) -> None:
    path = tmp_path / "hostile.har"
    _record(hostile, path, redact_values=redact_values)
    text = _all_text(path)
    host = hostile.removeprefix("http://")
    for value in [SECRET, *TOKENS, TOKENS[0] + "-refresh", COOKIE, host]:
        for spelling in _spellings(value):
            assert spelling not in text, f"{spelling!r} (a form of {value[:6]}...) is in the file"
    assert "SCRUBBED-CLIENT-SECRET" in text and "SCRUBBED-TOKEN" in text
    assert "tenant.invalid" in text


def test_recording_is_har_with_a_header_saying_what_was_scrubbed(
    hostile: str, tmp_path: Path
) -> None:
    path = tmp_path / "hostile.har"
    _record(hostile, path)
    log = json.loads(path.read_text("utf-8"))["log"]
    assert log["version"] == "1.2" and log["creator"]["name"] == "mddframes"
    scrubbed = log["_mddframes"]["scrubbed"]
    assert scrubbed["clientSecret"] is True
    assert scrubbed["accessTokens"] >= 2  # both tokens, and the refresh ones
    assert scrubbed["cookieValues"] >= 1
    assert "authorization" in scrubbed["headers"]
    assert "client secret" in log["comment"] and "tenant.invalid" in log["comment"]
    operations = [e["_operation"] for e in log["entries"]]
    assert operations.count("getToken") == 2  # the 401 renewed the token
    for name in ("getTable", "getObjectTypes", "tableUpdate", "structureMassExportAsyncResult"):
        assert name in operations
    for entry in log["entries"]:
        for header in entry["request"]["headers"] + entry["response"]["headers"]:
            if header["name"].lower() in ("authorization", "cookie", "set-cookie"):
                assert header["value"] == "SCRUBBED"
        assert entry["request"]["url"].startswith("http://tenant.invalid/")


def test_written_atomically_owner_only(hostile: str, tmp_path: Path) -> None:
    path = tmp_path / "hostile.har"
    path.write_text("an older recording")
    with _session(hostile) as client, client.recording(path):
        client.http.call("getTable", {"tableId": "t1"}).close()
        # nothing is written under the name before the block ends
        assert path.read_text() == "an older recording"
    assert json.loads(path.read_text("utf-8"))["log"]["entries"]
    if os.name == "posix":
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert sorted(p.name for p in tmp_path.iterdir()) == ["hostile.har"]  # no temporary left


def test_written_even_when_the_block_raises(hostile: str, tmp_path: Path) -> None:
    path = tmp_path / "failed.har"
    with pytest.raises(RuntimeError), _session(hostile) as client, client.recording(path):
        client.http.call("getTable", {"tableId": "t1"}).close()
        raise RuntimeError("the session failed")
    assert (
        len(json.loads(path.read_text("utf-8"))["log"]["entries"]) == 4
    )  # token, 401, token, repeat


def test_nothing_recorded_unless_asked(hostile: str, tmp_path: Path) -> None:
    with _session(hostile) as client:
        assert client.http.interceptor is None
        client.http.call("getTable", {"tableId": "t1"}).close()
    assert list(tmp_path.iterdir()) == []
