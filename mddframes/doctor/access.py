"""Doctor checks of how the service is reached: the token realm and the API prefix.

Both rely on the client's own discovery (:mod:`mddframes.http.discovery`): the doctor
makes the first calls and reports what the discovery settled on.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mddframes.doctor.findings import Finding
from mddframes.errors import AuthError, MddError
from mddframes.http.advice import realm_not_found_message

if TYPE_CHECKING:
    from mddframes.api import Api


def check_token_realm(api: Api) -> Finding:
    """Get a token, trying the configured realm and then the other one (row 4)."""
    try:
        api.http.tokens.token()
    except MddError as exc:
        advice = (
            "check MDD_CLIENT_ID and MDD_CLIENT_SECRET, and set MDD_REALM to the realm "
            "the service's token URL names; nothing else can be checked without a token"
        )
        if isinstance(exc, AuthError) and exc.status == 404:
            # every realm 404: the token URL is wrong, which the base URL decides first
            advice = (
                realm_not_found_message(api.http.settings)
                + ". Nothing else can be checked without a token"
            )
        return Finding("token realm", "4", "breaks", f"no token: {exc}", advice)
    found = api.http.discovery.report()
    configured, realm = found["realm"], found["token_realm"]
    if realm == configured:
        return Finding("token realm", "4", "ok", f"a token was granted under the realm {realm!r}")
    return Finding(
        "token realm",
        "4",
        "differs",
        f"the realm {configured!r} is unknown to the service (404); the realm {realm!r} "
        "granted a token",
        f"mddframes tries the other realm on a 404 and keeps the one that answers, once "
        f"per client (logged); set MDD_REALM={realm} to skip the probe",
    )


def check_api_prefix(api: Api, error: MddError | None) -> Finding:
    """Where the synchronous operations answered (row 2), after a first read of them.

    ``error`` is what that read (the object types) raised, if it failed under both
    prefixes the client tries.
    """
    if error is not None:
        tried = " and ".join(repr(p) for p in api.http.discovery.prefixes())
        return Finding(
            "API prefix",
            "2",
            "breaks",
            f"the object types could not be read under {tried}: {error}",
            "set MDD_BASE_URL and MDD_API_PREFIX to where the service's API answers "
            "(its Swagger UI shows the address)",
        )
    found = api.http.discovery.report()
    configured, prefix = found["api_prefix"], found["sync_prefix"]
    if prefix is None or prefix == configured:
        return Finding(
            "API prefix",
            "2",
            "ok",
            f"the synchronous operations answer under the configured prefix {configured!r}",
        )
    return Finding(
        "API prefix",
        "2",
        "differs",
        f"the synchronous operations answer under {prefix!r}, not under the configured "
        f"prefix {configured!r}",
        "mddframes repeats a synchronous call answered 404 under the other prefix and "
        "keeps the one that answers, once per client (logged); the batch export "
        f"operations stay under {configured!r}, where the description shows them (not "
        "probed: starting a task is not read-only)",
    )
