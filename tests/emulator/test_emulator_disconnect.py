"""A writer killed in the middle of its request body: one log line, no traceback (issue 21)."""

from __future__ import annotations

import logging
import socket
import time
from urllib.parse import urlsplit

import pytest
import requests

# runs once, on the newest pandas: checks the service's wire, not pandas (tests/pandas_ends.py)
pytestmark = pytest.mark.pandas_free


class Records(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


@pytest.fixture
def records():
    """Everything the emulator and uvicorn log (uvicorn's loggers do not propagate)."""
    handler = Records()
    loggers = [logging.getLogger(name) for name in ("uvicorn.error", "mddframes.emulator")]
    for logger in loggers:
        logger.addHandler(handler)
    yield handler.records
    for logger in loggers:
        logger.removeHandler(handler)


def test_a_client_gone_mid_body_is_one_log_line_and_changes_nothing(emu, records):
    token = emu.token()
    parts = urlsplit(emu.api_url)
    path = f"{parts.path}/api/table/tbl-0001"
    url = f"{emu.api_url}/api/table/tbl-0001"
    auth = {"Authorization": f"Bearer {token}"}
    before = requests.get(url, headers=auth, timeout=10).text
    head = (
        f"PUT {path} HTTP/1.1\r\nHost: {parts.netloc}\r\nAuthorization: Bearer {token}\r\n"
        "Content-Type: application/json\r\nContent-Length: 100000\r\n\r\n"
    )
    with socket.create_connection((parts.hostname, parts.port)) as writer:
        writer.sendall(head.encode() + b'{"metadata": {}, "data": [')
        time.sleep(0.2)  # the emulator is reading the body now
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and not records:
        time.sleep(0.05)
    time.sleep(0.2)  # anything logged after the first line shows up too
    lines = [r for r in records if r.levelno >= logging.WARNING]
    assert len(lines) == 1, [r.getMessage() for r in lines]
    assert "disconnected in the middle of the request body" in lines[0].getMessage()
    assert path in lines[0].getMessage()
    assert lines[0].exc_info is None
    assert requests.get(url, headers=auth, timeout=10).text == before
