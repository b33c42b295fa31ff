"""A base URL that is not the service's root: the realm error and the doctor name it first.

The emulator's banner once printed an ``api:`` URL that a newcomer took for
``MDD_BASE_URL``; every token realm then answers 404, and the advice must point at the
base URL, not at the client id and secret.
"""

from __future__ import annotations

import pytest

from mddframes import AuthError, Client
from mddframes.http.discovery import base_url_looks_like_api


def test_an_api_url_as_base_url_names_the_base_url_first(emu):
    api_url = emu.base_url.rstrip("/") + emu.api_prefix
    with Client.from_emulator(emu, base_url=api_url) as c:
        with pytest.raises(AuthError) as caught:
            c.read_object_types()
    message = str(caught.value)
    assert message.startswith(f"no token: the base URL {api_url!r}")
    assert "set MDD_BASE_URL to the service's root" in message
    assert "looks like an API URL" in message
    assert "'tenat'" not in message  # a realm the user never typed
    assert emu.client_secret not in message


def test_the_doctor_advises_the_base_url_not_the_secret(emu):
    api_url = emu.base_url.rstrip("/") + emu.api_prefix
    with Client.from_emulator(emu, base_url=api_url) as c:
        report = c.doctor()
    token = report.set_index("check").loc["token realm"]
    assert token["result"] == "breaks"
    assert token["action"].startswith(f"no token: the base URL {api_url!r}")
    assert "looks like an API URL" in token["action"]
    assert "MDD_CLIENT_SECRET" not in token["action"]


def test_a_root_that_is_not_an_api_url_is_not_called_one():
    assert base_url_looks_like_api("http://127.0.0.1:8080/api/mdd-backend")
    assert base_url_looks_like_api("https://acme.example.com/x/api/")
    assert not base_url_looks_like_api("https://acme.example.com")
    assert not base_url_looks_like_api("https://acme.example.com/apis")
