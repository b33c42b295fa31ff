"""The token endpoint (Keycloak 20+ behaviour) and bearer authentication of the API."""

from __future__ import annotations

import base64
import time
from urllib.parse import quote

import pytest
import requests
from oauthlib.oauth2 import BackendApplicationClient
from requests_oauthlib import OAuth2Session

from mddframes.emulator import serve
from mddframes.emulator._fallback import tiny_dataset

# runs once, on the newest pandas: checks the service's wire, not pandas (tests/pandas_ends.py)
pytestmark = pytest.mark.pandas_free


@pytest.fixture(scope="module")
def server():
    with serve(dataset=tiny_dataset, client_secret="s3cret-for-tests") as emu:
        yield emu


@pytest.fixture
def emu(server):
    server.reset()
    yield server


def post_token(emu, data=None, **kwargs) -> requests.Response:
    return requests.post(emu.token_url, data=data, timeout=10, **kwargs)


def good_form(emu, **changes):
    form = {
        "grant_type": "client_credentials",
        "client_id": emu.client_id,
        "client_secret": emu.client_secret,
    }
    form.update(changes)
    return {k: v for k, v in form.items() if v is not None}


def tree(emu, token: str | None) -> requests.Response:
    headers = {} if token is None else {"Authorization": f"Bearer {token}"}
    return requests.get(emu.api_url + "/api/system/DWH/tree", headers=headers, timeout=10)


def test_token_answer_has_the_six_fields_and_no_store(emu):
    response = post_token(emu, good_form(emu))
    assert response.status_code == 200
    body = response.json()
    assert set(body) == {
        "access_token",
        "expires_in",
        "refresh_expires_in",
        "token_type",
        "not-before-policy",
        "scope",
    }
    assert (body["expires_in"], body["refresh_expires_in"], body["token_type"]) == (
        300,
        0,
        "Bearer",
    )
    assert (body["not-before-policy"], body["scope"]) == (0, "email profile")
    assert response.headers["cache-control"] == "no-store"
    assert tree(emu, body["access_token"]).status_code == 200


def test_tokens_are_opaque_and_distinct(emu):
    first, second = emu.token(), emu.token()
    assert first != second
    assert emu.client_secret not in first
    assert "." not in first  # not a JWT: nothing for a client to decode


@pytest.mark.parametrize(
    ("form", "status", "error", "description"),
    [
        ({"grant_type": None}, 400, "invalid_request", "Missing form parameter: grant_type"),
        ({"grant_type": ""}, 400, "invalid_request", "Missing form parameter: grant_type"),
        ({"grant_type": "password"}, 400, "unsupported_grant_type", "Unsupported grant_type"),
        (
            {"client_id": "somebody"},
            401,
            "invalid_client",
            "Invalid client or Invalid client credentials",
        ),
        (
            {"client_id": None},
            401,
            "invalid_client",
            "Invalid client or Invalid client credentials",
        ),
        ({"client_secret": "wrong"}, 401, "unauthorized_client", "Invalid client secret"),
        ({"client_secret": None}, 401, "unauthorized_client", "Invalid client secret"),
    ],
)
def test_token_errors(emu, form, status, error, description):
    response = post_token(emu, good_form(emu, **form))
    assert response.status_code == status
    assert response.json() == {"error": error, "error_description": description}


def test_grant_type_is_checked_before_the_client(emu):
    response = post_token(emu, good_form(emu, grant_type="password", client_secret="wrong"))
    assert response.json()["error"] == "unsupported_grant_type"


def test_json_body_is_415(emu):
    response = requests.post(emu.token_url, json=good_form(emu), timeout=10)
    assert response.status_code == 415
    assert response.json()["error"] == "invalid_request"


def test_unknown_realm_is_404_like_keycloak(emu):
    url = emu.base_url + "/auth/realms/tenat/protocol/openid-connect/token"
    response = requests.post(url, data=good_form(emu), timeout=10)
    assert response.status_code == 404
    assert response.json() == {"error": "Realm does not exist"}


def test_basic_auth_credentials_are_accepted(emu):
    pair = f"{quote(emu.client_id)}:{quote(emu.client_secret)}".encode()
    headers = {"Authorization": "Basic " + base64.b64encode(pair).decode()}
    response = post_token(emu, {"grant_type": "client_credentials"}, headers=headers)
    assert response.status_code == 200
    bad = {"Authorization": "Basic " + base64.b64encode(f"{emu.client_id}:nope".encode()).decode()}
    assert post_token(emu, {"grant_type": "client_credentials"}, headers=bad).status_code == 401


def test_empty_extra_form_fields_are_ignored(emu):
    response = post_token(emu, good_form(emu, scope="", audience="", client_assertion=""))
    assert response.status_code == 200


def test_a_real_oauth2_library_gets_a_token(emu, monkeypatch):
    # oauthlib insists on https; the emulator serves plain http on loopback only
    monkeypatch.setenv("OAUTHLIB_INSECURE_TRANSPORT", "1")
    session = OAuth2Session(client=BackendApplicationClient(client_id=emu.client_id))
    token = session.fetch_token(
        token_url=emu.token_url,
        client_id=emu.client_id,
        client_secret=emu.client_secret,
        include_client_id=True,
    )
    assert token["token_type"] == "Bearer"
    response = session.get(emu.api_url + "/api/object-type", timeout=10)
    assert response.status_code == 200
    assert response.json()[0]["id"] == "ddl"


def test_no_token_is_401_with_bare_bearer_challenge_and_empty_body(emu):
    response = tree(emu, None)
    assert response.status_code == 401
    assert response.headers["www-authenticate"] == "Bearer"
    assert response.content == b""
    basic = requests.get(
        emu.api_url + "/api/system/DWH/tree", headers={"Authorization": "Basic eDp5"}, timeout=10
    )
    assert basic.status_code == 401
    assert basic.headers["www-authenticate"] == "Bearer"


def test_unknown_token_is_401_invalid_token(emu):
    response = tree(emu, "not-a-token")
    assert response.status_code == 401
    challenge = response.headers["www-authenticate"]
    assert challenge.startswith('Bearer error="invalid_token", error_description="')
    assert response.content == b""


def test_tokens_expire_after_their_ttl(emu):
    emu.set_token_ttl(1)
    answer = post_token(emu, good_form(emu)).json()
    assert answer["expires_in"] == 1
    assert tree(emu, answer["access_token"]).status_code == 200
    time.sleep(1.2)
    response = tree(emu, answer["access_token"])
    assert response.status_code == 401
    assert "expired" in response.headers["www-authenticate"]
    emu.reset()
    assert post_token(emu, good_form(emu)).json()["expires_in"] == 300


def test_revoke_invalidates_every_issued_token(emu):
    tokens = [emu.token(), emu.token()]
    assert emu.revoke_tokens() >= 2
    for token in tokens:
        assert tree(emu, token).status_code == 401
    assert tree(emu, emu.token()).status_code == 200


def test_handle_repr_never_shows_the_secret(emu):
    assert emu.client_secret not in repr(emu)
    assert "***" in repr(emu)


@pytest.mark.emulator
def test_default_secret_is_random_per_run():
    with serve(dataset=tiny_dataset) as first, serve(dataset=tiny_dataset) as second:
        assert first.client_secret != second.client_secret
        assert first.client_id == second.client_id == "mddframes-demo"
        response = requests.post(
            first.token_url, data=good_form(first, client_secret=second.client_secret), timeout=10
        )
        assert response.status_code == 401
