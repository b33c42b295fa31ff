"""A body that breaks while it is read: one translation for the streamed read and the download.

The scripted server of test_http_session (real sockets on 127.0.0.1) sends part of a
body and then stalls or hangs up; the read time-out is short so the stall is a failure.
"""

from __future__ import annotations

import time
from http.server import BaseHTTPRequestHandler
from typing import Any

import pytest
from scripted_service import API

from mddframes.config import Settings
from mddframes.errors import ResponseFormatError, TransportError
from mddframes.http.decoding import BodyStream, stream_to_file
from mddframes.http.endpoints import endpoint
from mddframes.http.session import HttpSession

PART = 100_000


def _session(base_url: str) -> HttpSession:
    return HttpSession(
        Settings(
            tenant="acme",
            base_url=base_url,
            client_id="cid",
            client_secret="sec-xyz",
            realm="acme",
            max_retries=0,
            timeout=(2.0, 0.5),
        )
    )


def _part_then(stall: bool) -> Any:
    def route(handler: BaseHTTPRequestHandler) -> None:
        handler.send_response(200)
        handler.send_header("Content-Type", "application/zip")
        handler.send_header("Content-Length", str(2 * PART))
        handler.end_headers()
        handler.wfile.write(b"PK" + b"x" * (PART - 2))
        handler.wfile.flush()
        if stall:
            time.sleep(1.0)  # longer than the read time-out: the client gives up
        handler.close_connection = True

    return route


@pytest.mark.parametrize(
    ("stall", "kind", "message"),
    [
        (True, TransportError, r"the connection failed after \d+ bytes of the answer"),
        (False, ResponseFormatError, r"the answer was cut off after \d+ bytes"),
    ],
)
def test_a_broken_download_is_translated_and_leaves_the_target(
    script,  # noqa: F811
    tmp_path,
    stall,
    kind,
    message,
):
    plan, url = script
    plan.routes[f"{API}/structure/export/task-1/result"] = _part_then(stall)
    target = tmp_path / "result.zip"
    target.write_bytes(b"previous content")
    session = _session(url)
    response = session.call("structureMassExportAsyncResult", {"taskId": "task-1"}, stream=True)
    entry = endpoint("structureMassExportAsyncResult")
    with pytest.raises(kind, match=message) as caught:
        stream_to_file(entry, response.url, response, target)
    session.close()
    error = caught.value
    assert error.status == 200 and error.operation == "structureMassExportAsyncResult"
    assert target.read_bytes() == b"previous content"
    assert [p.name for p in tmp_path.iterdir()] == ["result.zip"]  # no .part left


@pytest.mark.parametrize(
    ("stall", "kind", "message"),
    [
        (True, TransportError, r"the connection failed after \d+ bytes of the answer"),
        (False, ResponseFormatError, r"the answer was cut off after \d+ bytes"),
    ],
)
def test_a_broken_streamed_read_is_translated_the_same_way(
    script,  # noqa: F811
    stall,
    kind,
    message,
):
    plan, url = script
    plan.routes[f"{API}/table/t"] = _part_then(stall)
    session = _session(url)
    response = session.call("getTable", {"tableId": "t"}, stream=True)
    received = 0
    with (
        pytest.raises(kind, match=message) as caught,
        BodyStream(endpoint("getTable"), response.url, response) as body,
    ):
        assert body.length == 2 * PART
        for chunk in body.chunks():
            received += len(chunk)
    session.close()
    assert 0 < received < 2 * PART
    assert f"after {received} bytes" in str(caught.value)
    assert caught.value.operation == "getTable" and caught.value.url.endswith("/table/t")
