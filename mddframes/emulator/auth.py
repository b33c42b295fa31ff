"""Token issuance and validation, answering as Keycloak 20+ does (wire-format rows 4-8).

No web framework in here: :meth:`TokenIssuer.token_request` takes the raw pieces of
the HTTP request and returns a :class:`TokenAnswer` (status, JSON body, headers)
that the routes send as it is.

Keycloak order of checks: the content type (415), then ``grant_type`` (missing ->
400 ``invalid_request``, other than ``client_credentials`` -> 400
``unsupported_grant_type``), then the client (unknown -> 401 ``invalid_client``,
wrong secret -> 401 ``unauthorized_client``). Credentials come from the form
(client_secret_post) or from HTTP Basic (client_secret_basic). Empty form fields
are treated as absent, as Keycloak does.
"""

from __future__ import annotations

import base64
import binascii
import secrets
import threading
import time
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl, unquote_plus

FORM_TYPE = "application/x-www-form-urlencoded"


@dataclass
class TokenAnswer:
    """What the token endpoint answers: status, JSON body and extra headers."""

    status: int
    body: dict[str, Any]
    headers: dict[str, str] = field(default_factory=dict)


def _oauth_error(status: int, error: str, description: str) -> TokenAnswer:
    return TokenAnswer(
        status,
        {"error": error, "error_description": description},
        {"Cache-Control": "no-store", "Pragma": "no-cache"},
    )


def _basic_credentials(authorization: str | None) -> tuple[str, str] | None:
    """Client id and secret from an HTTP Basic header (RFC 6749 2.3.1 form-encodes both)."""
    if not authorization or not authorization.lower().startswith("basic "):
        return None
    try:
        decoded = base64.b64decode(authorization[6:].strip(), validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        return None
    client_id, sep, secret = decoded.partition(":")
    if not sep:
        return None
    return unquote_plus(client_id), unquote_plus(secret)


@dataclass
class _Token:
    realm: str
    client_id: str
    expires_at: float


class TokenIssuer:
    """Issues opaque bearer tokens for one realm and checks them.

    Parameters
    ----------
    realm : str
        The realm (the tenant) tokens are bound to.
    clients : dict of str to str
        Client id -> client secret of the API users.
    ttl : float
        Token lifetime in seconds (``expires_in``).
    """

    def __init__(self, realm: str, clients: dict[str, str], ttl: float = 300) -> None:
        self.realm = realm
        self._clients = dict(clients)
        self.ttl = ttl
        self._tokens: dict[str, _Token] = {}
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return (
            f"TokenIssuer(realm={self.realm!r}, clients={sorted(self._clients)!r}, ttl={self.ttl})"
        )

    def token_request(
        self,
        realm: str,
        content_type: str | None,
        body: bytes,
        authorization: str | None = None,
    ) -> TokenAnswer:
        """Answer one POST to the token endpoint of ``realm``."""
        if realm != self.realm:
            return TokenAnswer(404, {"error": "Realm does not exist"})
        media_type = (content_type or "").split(";")[0].strip().lower()
        if media_type != FORM_TYPE:
            return _oauth_error(
                415,
                "invalid_request",
                f"Content-Type must be {FORM_TYPE}, got {media_type or 'none'}",
            )
        try:
            pairs = parse_qsl(body.decode("utf-8"), keep_blank_values=True)
        except UnicodeDecodeError:
            return _oauth_error(400, "invalid_request", "The form body is not UTF-8")
        form: dict[str, str] = {}
        for key, value in pairs:
            if value != "":  # some clients send empty extra fields; Keycloak ignores them
                form.setdefault(key, value)
        grant_type = form.get("grant_type")
        if grant_type is None:
            return _oauth_error(400, "invalid_request", "Missing form parameter: grant_type")
        if grant_type != "client_credentials":
            return _oauth_error(400, "unsupported_grant_type", "Unsupported grant_type")
        basic = _basic_credentials(authorization)
        client_id, secret = basic if basic else (form.get("client_id"), form.get("client_secret"))
        if client_id is None or client_id not in self._clients:
            return _oauth_error(
                401, "invalid_client", "Invalid client or Invalid client credentials"
            )
        # compare_digest takes str only when ASCII: compare the UTF-8 bytes, so a
        # non-ASCII secret (sent or configured) is a plain mismatch or match, not a crash
        if secret is None or not secrets.compare_digest(
            secret.encode("utf-8", "surrogatepass"),
            self._clients[client_id].encode("utf-8", "surrogatepass"),
        ):
            return _oauth_error(401, "unauthorized_client", "Invalid client secret")
        return TokenAnswer(
            200,
            {
                "access_token": self._issue(client_id),
                "expires_in": int(self.ttl),
                "refresh_expires_in": 0,
                "token_type": "Bearer",
                "not-before-policy": 0,
                "scope": "email profile",
            },
            {"Cache-Control": "no-store", "Pragma": "no-cache"},
        )

    def _issue(self, client_id: str) -> str:
        token = secrets.token_urlsafe(32)
        with self._lock:
            now = time.monotonic()
            # forget expired tokens so a long-running emulator does not grow without bound
            self._tokens = {k: v for k, v in self._tokens.items() if v.expires_at > now}
            self._tokens[token] = _Token(self.realm, client_id, now + self.ttl)
        return token

    def check(self, token: str) -> str | None:
        """``None`` when ``token`` is valid for this realm, else why it is not."""
        with self._lock:
            record = self._tokens.get(token)
        if record is None:
            return "Token is not active"
        if record.realm != self.realm:
            return "Token was issued for another realm"
        if time.monotonic() >= record.expires_at:
            return "Token is expired"
        return None

    def revoke_all(self) -> int:
        """Invalidate every token issued so far; returns how many were active."""
        with self._lock:
            count = len(self._tokens)
            self._tokens.clear()
        return count
