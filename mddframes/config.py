"""Connection settings: resolved from arguments, then ``MDD_*`` variables, then a profile.

Every setting of :func:`resolve_settings` is taken from its argument when given, else
from its environment variable, else from the chosen profile of the configuration file
(``$XDG_CONFIG_HOME/mddframes/config.toml``, by default ``~/.config/mddframes/config.toml``),
else from its default. The file holds a ``[default]`` table and named profiles as
``[profiles.NAME]`` (a top-level ``[NAME]`` table is accepted too)::

    [default]
    tenant = "acme"
    base_url = "https://{tenant}.example.com"
    client_id = "ci-bot"

    [profiles.staging]
    tenant = "acme-staging"
    base_url = "https://{tenant}.example.com"

The client secret is kept in a :class:`Secret`, whose repr and str mask it.
"""

from __future__ import annotations

import hmac
import logging
import os
import stat
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from mddframes.config_values import (
    _parse_api_prefix,
    _parse_bool,
    _parse_int,
    _parse_timeout,
    _parse_verify,
    check_transport_security,
)
from mddframes.config_values import is_loopback_host as is_loopback_host  # public here too
from mddframes.errors import ConfigurationError

logger = logging.getLogger(__name__)

DEFAULT_API_PREFIX = "/api/mdd-backend"
DEFAULT_TIMEOUT = (5.0, 60.0)
DEFAULT_MAX_RETRIES = 5
DEFAULT_MAX_WORKERS = 8
#: A call's deadline, when none is set, in read time-outs: a read time-out bounds one
#: socket read only, so a body trickling a byte at a time would never end without it.
DEADLINE_READ_TIMEOUTS = 4
#: The largest answer body read (after decompression), when none is set: 2 GiB.
DEFAULT_MAX_RESPONSE_BYTES = 2 << 30
DEFAULT_PROFILE = "default"

# setting name -> environment variable. allow_insecure_http has none on purpose: a
# downgrade to clear-text credentials must be asked for in code or in the profile file.
ENV_VARIABLES: dict[str, str] = {
    "tenant": "MDD_TENANT",
    "base_url": "MDD_BASE_URL",
    "client_id": "MDD_CLIENT_ID",
    "client_secret": "MDD_CLIENT_SECRET",
    "realm": "MDD_REALM",
    "api_prefix": "MDD_API_PREFIX",
    "timeout": "MDD_TIMEOUT",
    "max_retries": "MDD_MAX_RETRIES",
    "verify": "MDD_VERIFY",
    "max_workers": "MDD_MAX_WORKERS",
    "request_deadline": "MDD_REQUEST_DEADLINE",
    "max_response_bytes": "MDD_MAX_RESPONSE_BYTES",
}
PROFILE_VARIABLE = "MDD_PROFILE"
PROFILE_KEYS = frozenset(ENV_VARIABLES) | {"allow_insecure_http"}


class Secret:
    """A string that never shows itself: repr and str print ``'********'``.

    Call :meth:`reveal` at the one place the value is really needed (the token request).

    Parameters
    ----------
    value : str
        The secret value.
    """

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        if not isinstance(value, str):
            raise ConfigurationError(f"a secret must be a string, got {type(value).__name__}")
        self._value = value

    def reveal(self) -> str:
        """The secret value itself."""
        return self._value

    def __repr__(self) -> str:
        return "Secret('********')"

    __str__ = __repr__

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Secret):
            return NotImplemented
        return hmac.compare_digest(self._value.encode(), other._value.encode())

    def __hash__(self) -> int:
        return hash(Secret)

    def __bool__(self) -> bool:
        return bool(self._value)

    def __reduce__(self) -> Any:
        # Pickling would write the secret in clear into files and caches.
        raise TypeError("a Secret cannot be pickled")


@dataclass(frozen=True, repr=False)
class Settings:
    """Everything a :class:`~mddframes.client.Client` needs to reach one tenant.

    Attributes
    ----------
    tenant : str or None
        The tenant name (``None`` only when the base URL and realm need none).
    base_url : str
        The tenant's address, ``{tenant}`` already replaced, without a trailing slash.
    client_id : str
        The API user's id.
    client_secret : Secret
        The API user's secret, masked.
    realm : str
        The token realm (defaults to the tenant).
    api_prefix : str
        The path prefix of every API operation (``""`` allowed).
    timeout : tuple of float
        ``(connect, read)`` time-outs in seconds, applied to every call.
    max_retries : int
        Retries of a GET or PUT on 429/5xx and connection errors.
    verify : bool or str
        TLS verification: ``True``, ``False`` or a CA bundle path.
    max_workers : int
        Default concurrency of bulk calls; the connection pool is sized for it.
    allow_insecure_http : bool
        Whether plain ``http://`` is allowed for a host that is not loopback.
    request_deadline : float or None
        Seconds one call may take in all, from connecting to the answer's last byte,
        retries and their waits included; ``None``: :attr:`deadline`'s default.
    max_response_bytes : int
        The largest answer body read, counted after decompression (default 2 GiB).
    """

    tenant: str | None
    base_url: str
    client_id: str
    client_secret: Secret
    realm: str
    api_prefix: str = DEFAULT_API_PREFIX
    timeout: tuple[float, float] = DEFAULT_TIMEOUT
    max_retries: int = DEFAULT_MAX_RETRIES
    verify: bool | str = True
    max_workers: int = DEFAULT_MAX_WORKERS
    allow_insecure_http: bool = False
    request_deadline: float | None = None
    max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES

    def __post_init__(self) -> None:
        if not isinstance(self.client_secret, Secret):
            object.__setattr__(self, "client_secret", Secret(self.client_secret))
        check_transport_security(self.base_url, self.allow_insecure_http)

    @property
    def api_url(self) -> str:
        """The base URL followed by the API prefix."""
        return self.base_url + self.api_prefix

    @property
    def deadline(self) -> float:
        """Seconds one call may take in all: ``request_deadline``, else 4 read time-outs."""
        if self.request_deadline is not None:
            return self.request_deadline
        return DEADLINE_READ_TIMEOUTS * self.timeout[1]

    def __repr__(self) -> str:
        return (
            f"Settings(tenant={self.tenant!r}, base_url={self.base_url!r}, "
            f"client_id={self.client_id!r}, realm={self.realm!r}, "
            f"api_prefix={self.api_prefix!r})"
        )


def config_file_path(environ: Mapping[str, str] | None = None) -> Path:
    """Where the profile file lives: ``$XDG_CONFIG_HOME/mddframes/config.toml``.

    Parameters
    ----------
    environ : mapping, optional
        The environment to read (default ``os.environ``).
    """
    environ = os.environ if environ is None else environ
    root = environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(root) / "mddframes" / "config.toml"


def load_profile(name: str | None, path: Path, *, required: bool) -> dict[str, Any]:
    """The settings of profile ``name`` in the TOML file at ``path``.

    Parameters
    ----------
    name : str
        The profile: ``[default]`` for ``"default"``, else ``[profiles.NAME]`` or ``[NAME]``.
    path : Path
        The configuration file.
    required : bool
        Whether a missing file or profile is an error (a profile asked for by name)
        or just means "no values from the file".

    Raises
    ------
    ConfigurationError
        If the file cannot be parsed, the profile is required but absent, or the
        profile holds a key mddframes does not know.
    """
    name = name or DEFAULT_PROFILE
    if not path.is_file():
        if required:
            raise ConfigurationError(
                f"profile {name!r} was asked for, but the configuration file {path} does not exist"
            )
        return {}
    try:
        document = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ConfigurationError(f"cannot read the configuration file {path}: {exc}") from None
    named = document.get("profiles", {})
    table = named.get(name) if isinstance(named, dict) else None
    if table is None and name != "profiles":
        table = document.get(name)
    if table is None:
        if required:
            available = sorted(
                [k for k, v in document.items() if isinstance(v, dict) and k != "profiles"]
                + (list(named) if isinstance(named, dict) else [])
            )
            raise ConfigurationError(
                f"profile {name!r} is not in the configuration file {path} "
                f"(profiles there: {', '.join(available) or 'none'})"
            )
        return {}
    if not isinstance(table, dict):
        raise ConfigurationError(f"profile {name!r} in {path} is not a table")
    unknown = sorted(set(table) - PROFILE_KEYS)
    if unknown:
        raise ConfigurationError(
            f"profile {name!r} in {path} has unknown keys {unknown}; "
            f"known keys: {sorted(PROFILE_KEYS)}"
        )
    if "client_secret" in table:
        _warn_if_readable_by_others(path)
    return dict(table)


def _warn_if_readable_by_others(path: Path) -> None:
    try:
        mode = path.stat().st_mode
    except OSError:
        return
    if os.name == "posix" and mode & (stat.S_IRGRP | stat.S_IROTH):
        logger.warning(
            "the configuration file %s holds a client secret and is readable by other "
            "users; restrict it with: chmod 600 %s",
            path,
            path,
        )


def resolve_settings(
    tenant: str | None = None,
    *,
    base_url: str | None = None,
    client_id: str | None = None,
    client_secret: str | Secret | None = None,
    realm: str | None = None,
    api_prefix: str | None = None,
    timeout: float | tuple[float, float] | None = None,
    max_retries: int | None = None,
    verify: bool | str | None = None,
    max_workers: int | None = None,
    allow_insecure_http: bool | None = None,
    request_deadline: float | None = None,
    max_response_bytes: int | None = None,
    profile: str | None = None,
    environ: Mapping[str, str] | None = None,
    config_file: str | os.PathLike[str] | None = None,
) -> Settings:
    """Resolve every setting: argument, else ``MDD_*`` variable, else profile, else default.

    Parameters
    ----------
    tenant : str, optional
        Tenant name (``MDD_TENANT``); replaces ``{tenant}`` in the base URL and is the
        default realm.
    base_url : str, optional
        The service address, may contain ``{tenant}`` (``MDD_BASE_URL``).
    client_id, client_secret : str, optional
        The API user's credentials (``MDD_CLIENT_ID``, ``MDD_CLIENT_SECRET``).
    realm : str, optional
        The token realm (``MDD_REALM``); defaults to the tenant.
    api_prefix : str, optional
        API path prefix (``MDD_API_PREFIX``), default ``"/api/mdd-backend"``; ``""`` allowed.
    timeout : float or (float, float), optional
        Connect and read time-outs in seconds (``MDD_TIMEOUT``, e.g. ``"5,60"``),
        default ``(5, 60)``.
    max_retries : int, optional
        Retries of GET/PUT on 429/5xx and connection errors (``MDD_MAX_RETRIES``), default 5.
    verify : bool or str, optional
        TLS verification or CA bundle path (``MDD_VERIFY``: ``true``, ``false`` or a path),
        default ``True``.
    max_workers : int, optional
        Default concurrency of bulk calls (``MDD_MAX_WORKERS``), default 8.
    allow_insecure_http : bool, optional
        Allow plain ``http://`` to a host that is not loopback (argument or profile only).
    request_deadline : float, optional
        Seconds one call may take in all, retries included (``MDD_REQUEST_DEADLINE``),
        default 4 times the read time-out (240 s with the default time-outs).
    max_response_bytes : int, optional
        The largest answer body read, after decompression (``MDD_MAX_RESPONSE_BYTES``),
        default 2 GiB.
    profile : str, optional
        The profile of the configuration file (``MDD_PROFILE``), default ``"default"``.
    environ : mapping, optional
        The environment to read (default ``os.environ``); for tests.
    config_file : path, optional
        The configuration file (default :func:`config_file_path`).

    Returns
    -------
    Settings

    Raises
    ------
    ConfigurationError
        If a required setting is missing (the message names the argument, the
        variable and the file) or a value is invalid (the message names its source).
    """
    environ = os.environ if environ is None else environ
    path = Path(config_file) if config_file is not None else config_file_path(environ)
    profile_name = profile or environ.get(PROFILE_VARIABLE) or None
    from_file = load_profile(profile_name, path, required=profile_name is not None)
    profile_label = f"profile {profile_name or DEFAULT_PROFILE!r} of {path}"

    arguments = {
        "tenant": tenant,
        "base_url": base_url,
        "client_id": client_id,
        "client_secret": client_secret,
        "realm": realm,
        "api_prefix": api_prefix,
        "timeout": timeout,
        "max_retries": max_retries,
        "verify": verify,
        "max_workers": max_workers,
        "allow_insecure_http": allow_insecure_http,
        "request_deadline": request_deadline,
        "max_response_bytes": max_response_bytes,
    }

    def lookup(name: str) -> tuple[Any, str] | None:
        """The value of setting ``name`` and where it came from, or None."""
        if arguments[name] is not None:
            return arguments[name], f"argument {name}="
        variable = ENV_VARIABLES.get(name)
        # An empty variable counts as unset, except MDD_API_PREFIX where "" is a value.
        if variable is not None and (
            environ.get(variable) or (name == "api_prefix" and variable in environ)
        ):
            return environ[variable], f"environment variable {variable}"
        if name in from_file:
            return from_file[name], f"{name} in {profile_label}"
        return None

    def require(name: str) -> tuple[Any, str]:
        found = lookup(name)
        if found is None:
            raise ConfigurationError(_missing_message(name, profile_label))
        return found

    def text(name: str, found: tuple[Any, str]) -> str:
        value, source = found
        if isinstance(value, Secret):
            return value.reveal()
        if not isinstance(value, str) or not value.strip():
            # The value itself is not echoed: it could be a misplaced secret.
            raise ConfigurationError(f"{name} from {source} must be a non-empty string")
        return value.strip()

    found_tenant = lookup("tenant")
    tenant_value = text("tenant", found_tenant) if found_tenant else None
    base_template = text("base_url", require("base_url"))
    resolved_base = _fill_base_url(base_template, tenant_value, profile_label)
    client_id_value = text("client_id", require("client_id"))
    secret_found = require("client_secret")
    secret = secret_found[0] if isinstance(secret_found[0], Secret) else None
    if secret is None:
        secret = Secret(text("client_secret", secret_found))
    found_realm = lookup("realm")
    if found_realm is not None:
        realm_value = text("realm", found_realm)
    elif tenant_value is not None:
        realm_value = tenant_value
    else:
        raise ConfigurationError(
            "missing setting realm (it defaults to the tenant, which is not set either): "
            + _how_to_set("tenant", profile_label)
        )
    found_prefix = lookup("api_prefix")
    prefix_value = (
        _parse_api_prefix(*found_prefix) if found_prefix is not None else DEFAULT_API_PREFIX
    )
    found_timeout = lookup("timeout")
    timeout_value = _parse_timeout(*found_timeout) if found_timeout else DEFAULT_TIMEOUT
    found_retries = lookup("max_retries")
    retries_value = (
        _parse_int("max_retries", *found_retries, minimum=0)
        if found_retries
        else DEFAULT_MAX_RETRIES
    )
    found_workers = lookup("max_workers")
    workers_value = (
        _parse_int("max_workers", *found_workers, minimum=1)
        if found_workers
        else DEFAULT_MAX_WORKERS
    )
    found_verify = lookup("verify")
    verify_value = _parse_verify(*found_verify) if found_verify else True
    found_insecure = lookup("allow_insecure_http")
    insecure_value = (
        _parse_bool("allow_insecure_http", *found_insecure) if found_insecure else False
    )

    found_deadline = lookup("request_deadline")
    deadline_value = _parse_seconds("request_deadline", *found_deadline) if found_deadline else None
    found_cap = lookup("max_response_bytes")
    cap_value = (
        _parse_int("max_response_bytes", *found_cap, minimum=1)
        if found_cap
        else DEFAULT_MAX_RESPONSE_BYTES
    )

    return Settings(
        tenant=tenant_value,
        base_url=resolved_base,
        client_id=client_id_value,
        client_secret=secret,
        realm=realm_value,
        api_prefix=prefix_value,
        timeout=timeout_value,
        max_retries=retries_value,
        verify=verify_value,
        max_workers=workers_value,
        allow_insecure_http=insecure_value,
        request_deadline=deadline_value,
        max_response_bytes=cap_value,
    )


def _parse_seconds(name: str, value: Any, source: str) -> float:
    try:
        seconds = float(value) if not isinstance(value, bool) else 0.0
    except (TypeError, ValueError):
        seconds = 0.0
    if not seconds > 0 or seconds == float("inf"):
        raise ConfigurationError(f"{name} from {source} must be positive seconds, got {value!r}")
    return seconds


def _how_to_set(name: str, profile_label: str) -> str:
    variable = ENV_VARIABLES.get(name)
    ways = [f"pass {name}=... to connect()"]
    if variable:
        ways.append(f"set the environment variable {variable}")
    ways.append(f"or add {name} to {profile_label}")
    return ", ".join(ways)


def _missing_message(name: str, profile_label: str) -> str:
    return f"missing setting {name}: " + _how_to_set(name, profile_label)


def _fill_base_url(template: str, tenant: str | None, profile_label: str) -> str:
    if "{tenant}" in template:
        if tenant is None:
            raise ConfigurationError(
                f"the base URL {template!r} contains {{tenant}} but no tenant is set: "
                + _how_to_set("tenant", profile_label)
            )
        url = template.replace("{tenant}", tenant)
    else:
        url = template
    if "{" in url or "}" in url:
        raise ConfigurationError(
            f"the base URL {template!r} has a placeholder other than {{tenant}}"
        )
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ConfigurationError(
            f"the base URL {url!r} must be an http:// or https:// address with a host name"
        )
    if parts.username or parts.password:
        raise ConfigurationError(
            "the base URL must not carry a user name or password; "
            "use client_id and client_secret instead"
        )
    if parts.query or parts.fragment:
        raise ConfigurationError(f"the base URL {url!r} must not have a query or fragment")
    return url.rstrip("/")
