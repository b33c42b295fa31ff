"""requests' environment settings (proxies) are still honoured though read once per origin."""

from __future__ import annotations

import socket

import pytest

from mddframes import Client, TransportError


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.mark.parametrize("variable", ["HTTP_PROXY", "http_proxy"])
def test_a_proxy_from_the_environment_is_used(emu, monkeypatch, variable):
    for name in ("NO_PROXY", "no_proxy", "HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv(variable, f"http://127.0.0.1:{_closed_port()}")
    with Client.from_emulator(emu, max_retries=0) as client:
        with pytest.raises(TransportError):
            client.api.get_object_types()


def test_no_proxy_lets_calls_through_and_repeated_calls_still_work(emu, monkeypatch):
    monkeypatch.setenv("HTTP_PROXY", f"http://127.0.0.1:{_closed_port()}")
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    with Client.from_emulator(emu, max_retries=0) as client:
        first = client.api.get_object_types()
        assert client.api.get_object_types() == first
        assert client.api.get_tree("DWH")
