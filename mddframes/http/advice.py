"""The words that name the setting behind a failed token request.

A token request fails for one of a few user mistakes: a wrong tenant (its realm is
unknown: 404), a wrong client id or secret (401), a base URL that is not the service's
root (every realm 404). The messages here lead with the likeliest setting, name its
``MDD_*`` variable and where its value came from (an argument, a variable, a profile),
and never show a secret.
"""

from __future__ import annotations

from mddframes.config import Settings
from mddframes.http.discovery import base_url_looks_like_api

#: The OAuth error codes of a refused client id (Keycloak: unknown client).
_UNKNOWN_CLIENT = frozenset({"invalid_client"})
#: The OAuth error codes of a refused secret (Keycloak: wrong secret of a known client).
_WRONG_SECRET = frozenset({"unauthorized_client"})


def _source(settings: Settings, name: str) -> str:
    """`` (from ...)`` naming where a setting's value came from, if known and not its own
    ``MDD_*`` variable (the message names that already)."""
    source = settings.sources.get(name)
    if not source or source == f"environment variable MDD_{name.upper()}":
        return ""
    return f" (from {source})"


def realm_not_found_message(settings: Settings) -> str:
    """Why the token endpoint answered 404 under every realm tried, likeliest cause first.

    A base URL that holds an API path comes first (every realm 404s under it); then the
    realm when it was set on its own, else the tenant (the realm defaults to it); the
    other of the two second; the base URL last.

    Parameters
    ----------
    settings : Settings
        The client's settings (their sources name where each value came from).

    Returns
    -------
    str
    """
    base = settings.base_url
    if base_url_looks_like_api(base, settings.api_prefix):
        return (
            f"no token: the base URL {base!r}{_source(settings, 'base_url')} looks like an "
            f"API URL (it contains {settings.api_prefix!r} or '/api'); set MDD_BASE_URL to "
            "the service's root, without the API path"
        )
    realm_given = "realm" in settings.sources or settings.realm != settings.tenant
    if realm_given:
        first = (
            f"no token: the service at {base!r} knows no token realm {settings.realm!r} "
            f"(404). Check MDD_REALM{_source(settings, 'realm')}: is {settings.realm!r} "
            "the tenant's realm? "
        )
        second = f"If it is, check the tenant MDD_TENANT ({settings.tenant!r})"
    else:
        first = (
            f"no token for the tenant {settings.tenant!r}: the service at {base!r} knows "
            f"no tenant of that name (its token realm answered 404). Check MDD_TENANT"
            f"{_source(settings, 'tenant')}: is {settings.tenant!r} spelt as the service "
            "knows it? "
        )
        second = "If it is, the tenant's token realm may have another name: set MDD_REALM"
    return (
        first
        + second
        + f"; and if neither, check that MDD_BASE_URL{_source(settings, 'base_url')} "
        "is the service's root address"
    )


def credentials_refused_message(
    settings: Settings, oauth_error: str | None, reason: str | None
) -> str:
    """Why the token endpoint refused the client: the client id, the secret, or both.

    Parameters
    ----------
    settings : Settings
        The client's settings (their sources name where the credentials came from).
    oauth_error : str or None
        The OAuth ``error`` of the answer (``invalid_client``, ``unauthorized_client``).
    reason : str or None
        The HTTP reason phrase, when the answer has no OAuth error.

    Returns
    -------
    str
    """
    head = f"the token endpoint refused the request: {oauth_error or reason or 'refused'}"
    client_id = f"MDD_CLIENT_ID ({settings.client_id!r}{_from(settings, 'client_id')})"
    secret = "MDD_CLIENT_SECRET" + _source(settings, "client_secret")
    if oauth_error in _WRONG_SECRET:
        return f"{head}: the client secret is wrong; check {secret} for the client {client_id}"
    if oauth_error in _UNKNOWN_CLIENT:
        return f"{head}: the client id or its secret is wrong; check {client_id} and {secret}"
    return f"{head}; check the API user's credentials {client_id} and {secret}"


def _from(settings: Settings, name: str) -> str:
    """``, from ...`` as :func:`_source` says it, inside parentheses of the caller's."""
    source = _source(settings, name)
    return ", " + source.strip()[1:-1] if source else ""
