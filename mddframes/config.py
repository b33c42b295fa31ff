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

The settings are the rows of :data:`SETTINGS` (name, variable, profile key, parser,
default, help), from which :func:`resolve_settings` and docs/settings.md are made. The
client secret is kept in a :class:`Secret`, whose repr and str mask it.
"""

from __future__ import annotations

import hmac
import logging
import os
import stat
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from mddframes.config_table import REQUIRED, Setting, markdown_table
from mddframes.config_values import (
    check_transport_security,
    parse_api_prefix,
    parse_bool,
    parse_int,
    parse_path,
    parse_rate,
    parse_seconds,
    parse_timeout,
    parse_verify,
)
from mddframes.config_values import is_loopback_host as is_loopback_host  # public here too
from mddframes.errors import ConfigurationError
from mddframes.wire.profile import API_PREFIX

logger = logging.getLogger(__name__)

DEFAULT_API_PREFIX = API_PREFIX  # the wire profile's (docs/wire-format.md row 2)
DEFAULT_TIMEOUT = (5.0, 60.0)
# as many as a plain urllib3 Retry loop's total: a flaky service (12% 5xx, 5% dropped
# connections) failed one GET in about 4,000 with 5; the call's deadline bounds the waits
DEFAULT_MAX_RETRIES = 8
DEFAULT_MAX_WORKERS = 8
DEFAULT_LOCK_TIMEOUT = 300.0
DEFAULT_RETRY_BUDGET = 10
DEFAULT_RETRY_AFTER_MAX = 60.0
#: A call's deadline, when none is set, in read time-outs: a read time-out bounds one
#: socket read only, so a body trickling a byte at a time would never end without it.
DEADLINE_READ_TIMEOUTS = 4
#: The largest answer body read (after decompression), when none is set: 2 GiB.
DEFAULT_MAX_RESPONSE_BYTES = 2 << 30
DEFAULT_PROFILE = "default"

PROFILE_VARIABLE = "MDD_PROFILE"


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
    lock_dir : str or None
        The machine's folder of write locks (one per user); None: the user's cache
        folder (:func:`mddframes.writing.locks.default_lock_dir`).
    lock_timeout : float
        Seconds a write waits for another writer of the same object on this machine.
    backup_dir : str or None
        The root folder of the backups and journals of writes; None: ``MDD_BACKUP_DIR``
        as the process has it when writing, else the user's data folder
        (:func:`mddframes.writing.backups.default_backup_root`).
    request_deadline : float or None
        Seconds one call may take in all, from connecting to the answer's last byte,
        retries and their waits included; ``None``: :attr:`deadline`'s default.
    max_response_bytes : int
        The largest answer body read, counted after decompression (default 2 GiB).
    max_rate : float or None
        The service's limit, declared up front, in requests a second (the client's
        pace starts there and never goes above it); None: unknown, the pace adapts
        once the service answers 429 or 503 (:mod:`mddframes.http.pace`).
    retry_budget : int
        How many times one call is sent again after 429 answers (apart from
        ``max_retries``, which counts errors).
    retry_after_max : float
        The longest ``Retry-After`` waited, in seconds (a longer one is cut to this).
    sources : mapping of str to str
        Where each setting that was given came from (``"environment variable
        MDD_TENANT"``, ``"client_secret in profile 'ci' of ..."``); errors name it.
        Not part of equality.
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
    lock_dir: str | None = None
    lock_timeout: float = DEFAULT_LOCK_TIMEOUT
    backup_dir: str | None = None
    request_deadline: float | None = None
    max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES
    max_rate: float | None = None
    retry_budget: int = DEFAULT_RETRY_BUDGET
    retry_after_max: float = DEFAULT_RETRY_AFTER_MAX
    sources: Mapping[str, str] = field(default_factory=dict, compare=False, repr=False)

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


def parse_text(name: str, value: Any, source: str) -> str:
    """A non-empty string, stripped (a :class:`Secret` gives its value)."""
    if isinstance(value, Secret):
        return value.reveal()
    if not isinstance(value, str) or not value.strip():
        # The value itself is not echoed: it could be a misplaced secret.
        raise ConfigurationError(f"{name} from {source} must be a non-empty string")
    return value.strip()


def parse_secret(name: str, value: Any, source: str) -> Secret:
    """A :class:`Secret` as given, or one holding the text :func:`parse_text` makes."""
    return value if isinstance(value, Secret) else Secret(parse_text(name, value, source))


def _with_tenant(template: str, source: str, earlier: Mapping[str, Any], label: str) -> str:
    return _fill_base_url(template, source, earlier["tenant"], label)


def _realm_or_tenant(
    realm: str | None, source: str | None, earlier: Mapping[str, Any], profile_label: str
) -> str:
    if realm is not None:
        return realm
    if earlier["tenant"] is not None:
        return str(earlier["tenant"])
    raise ConfigurationError(
        "missing setting tenant (the tenant's name, which is also its token realm): "
        + _how_to_set("tenant", profile_label)
    )


#: Every setting, in the order :func:`resolve_settings` resolves them (a setting's
#: ``then`` sees those above it). Adding a setting: a row here, its argument of
#: resolve_settings and connect(), its field of Settings (tests check they agree).
SETTINGS: tuple[Setting, ...] = (
    Setting("tenant", "MDD_TENANT", parse_text, None,
            "Tenant name; fills `{tenant}` in the base URL and is the default realm."),
    Setting("base_url", "MDD_BASE_URL", parse_text, REQUIRED,
            "The service address, e.g. `https://{tenant}.example.com`.", then=_with_tenant),
    Setting("client_id", "MDD_CLIENT_ID", parse_text, REQUIRED, "The API user's id."),
    Setting("client_secret", "MDD_CLIENT_SECRET", parse_secret, REQUIRED,
            "The API user's secret (kept masked)."),
    Setting("realm", "MDD_REALM", parse_text, None, "The token realm.",
            shown_default="the tenant", then=_realm_or_tenant),
    Setting("api_prefix", "MDD_API_PREFIX", parse_api_prefix, DEFAULT_API_PREFIX,
            "Path prefix of every API operation; empty allowed (also as an empty variable).",
            empty_is_value=True),
    Setting("timeout", "MDD_TIMEOUT", parse_timeout, DEFAULT_TIMEOUT,
            "Connect and read time-outs in seconds: one number, or `connect,read`."),
    Setting("max_retries", "MDD_MAX_RETRIES", partial(parse_int, minimum=0),
            DEFAULT_MAX_RETRIES, "Retries of a call safe to repeat (GET, PUT) after a 5xx or a "
            "lost answer (429s count against `retry_budget`)."),
    Setting("max_workers", "MDD_MAX_WORKERS", partial(parse_int, minimum=1),
            DEFAULT_MAX_WORKERS, "Default concurrency of bulk calls (sizes the connection pool)."),
    Setting("verify", "MDD_VERIFY", parse_verify, True,
            "TLS verification: `true`, `false` or the path of a CA bundle."),
    # no variable on purpose: a downgrade to clear-text credentials must be asked for
    # in code or in the profile file
    Setting("allow_insecure_http", None, parse_bool, False,
            "Allow plain `http://` to a host that is not loopback."),
    Setting("request_deadline", "MDD_REQUEST_DEADLINE", partial(parse_seconds, positive=True),
            None, "Seconds one call may take in all, from connecting to the answer's last byte, "
            "retries and their waits included.", shown_default="4 read time-outs"),
    Setting("max_response_bytes", "MDD_MAX_RESPONSE_BYTES", partial(parse_int, minimum=1),
            DEFAULT_MAX_RESPONSE_BYTES,
            "The largest answer body read, counted after decompression.",
            shown_default="2 GiB"),
    Setting("max_rate", "MDD_MAX_RATE", parse_rate, None,
            "The service's request limit, if known: requests a second, or `N/min` "
            "(`400/min`); the client's shared pace starts there and stays under it.",
            shown_default="none: unknown, the pace adapts to 429/503 answers"),
    Setting("retry_budget", "MDD_RETRY_BUDGET", partial(parse_int, minimum=0),
            DEFAULT_RETRY_BUDGET,
            "How many times one call is sent again after 429 Too Many Requests (apart from "
            "`max_retries`)."),
    Setting("retry_after_max", "MDD_RETRY_AFTER_MAX", partial(parse_seconds, positive=True),
            DEFAULT_RETRY_AFTER_MAX,
            "The longest `Retry-After` (seconds or HTTP-date) waited, in seconds."),
    Setting("lock_dir", "MDD_LOCK_DIR", parse_path, None,
            "The machine's folder of write locks (one writer per object per machine).",
            shown_default="the user's cache folder + `mddframes/locks`"),
    Setting("lock_timeout", "MDD_LOCK_TIMEOUT", parse_seconds, DEFAULT_LOCK_TIMEOUT,
            "Seconds a write waits for another writer of the same object on this machine."),
    Setting("backup_dir", "MDD_BACKUP_DIR", parse_path, None,
            "Root folder of the backups and journals of writes (a write's `backup_dir` "
            "argument wins).",
            shown_default="the user's data folder + `mddframes/backups`"),
)  # fmt: skip
SETTINGS_BY_NAME = {setting.name: setting for setting in SETTINGS}
#: Setting name -> its environment variable (those that have one).
ENV_VARIABLES = {s.name: s.variable for s in SETTINGS if s.variable is not None}
#: The keys a profile of the configuration file may hold.
PROFILE_KEYS = frozenset(setting.profile_key for setting in SETTINGS)


def settings_markdown() -> str:
    """The table of :data:`SETTINGS` in Markdown (docs/settings.md holds it verbatim)."""
    return markdown_table(SETTINGS)


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
    lock_dir: str | os.PathLike[str] | None = None,
    lock_timeout: float | None = None,
    request_deadline: float | None = None,
    max_response_bytes: int | None = None,
    backup_dir: str | os.PathLike[str] | None = None,
    max_rate: float | str | None = None,
    retry_budget: int | None = None,
    retry_after_max: float | None = None,
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
    lock_dir : path, optional
        The machine's folder of write locks (``MDD_LOCK_DIR``), default the user's cache
        folder + ``mddframes/locks``.
    lock_timeout : float, optional
        Seconds a write waits for another writer of the same object on this machine
        (``MDD_LOCK_TIMEOUT``), default 300.
    request_deadline : float, optional
        Seconds one call may take in all, retries included (``MDD_REQUEST_DEADLINE``),
        default 4 times the read time-out (240 s with the default time-outs).
    max_response_bytes : int, optional
        The largest answer body read, after decompression (``MDD_MAX_RESPONSE_BYTES``),
        default 2 GiB.
    backup_dir : path, optional
        The root folder of the backups and journals of writes (``MDD_BACKUP_DIR``),
        default the user's data folder + ``mddframes/backups``.
    max_rate : float or str, optional
        The service's request limit if known (``MDD_MAX_RATE``): requests a second, or
        ``"N/min"`` (``"400/min"``); default none (the pace adapts to 429/503).
    retry_budget : int, optional
        Repeats of one call after 429 answers (``MDD_RETRY_BUDGET``), default 10.
    retry_after_max : float, optional
        The longest ``Retry-After`` waited, in seconds (``MDD_RETRY_AFTER_MAX``), default 60.
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

    Notes
    -----
    The settings, their variables, profile keys, parsers and defaults are the rows of
    :data:`SETTINGS`, resolved in that order (docs/settings.md is made from them).
    """
    # the parameters by name, as the rows of SETTINGS name them (taken before any local)
    arguments = dict(locals())
    environ = os.environ if environ is None else environ
    path = Path(config_file) if config_file is not None else config_file_path(environ)
    profile_name = profile or environ.get(PROFILE_VARIABLE) or None
    from_file = load_profile(profile_name, path, required=profile_name is not None)
    profile_label = f"profile {profile_name or DEFAULT_PROFILE!r} of {path}"
    values: dict[str, Any] = {}
    sources: dict[str, str] = {}
    for setting in SETTINGS:
        found = setting.lookup(arguments[setting.name], environ, from_file, profile_label)
        source = None if found is None else found[1]
        if found is not None:
            sources[setting.name] = found[1]
            value = setting.parse(setting.name, *found)
        elif setting.default is REQUIRED:
            raise ConfigurationError(_missing_message(setting.name, profile_label))
        else:
            value = setting.default
        if setting.then is not None:
            value = setting.then(value, source, values, profile_label)
        values[setting.name] = value
    return Settings(**values, sources=sources)


def _how_to_set(name: str, profile_label: str) -> str:
    setting = SETTINGS_BY_NAME[name]
    ways = [f"pass {name}=... to connect()"]
    if setting.variable:
        ways.append(f"set the environment variable {setting.variable}")
    ways.append(f"or add {setting.profile_key} to {profile_label}")
    return ", ".join(ways)


def _missing_message(name: str, profile_label: str) -> str:
    return f"missing setting {name}: " + _how_to_set(name, profile_label)


def _fill_base_url(template: str, source: str, tenant: str | None, profile_label: str) -> str:
    where = f"the base URL {template!r} from {source}"
    if "{tenant}" in template:
        if tenant is None:
            raise ConfigurationError(
                f"{where} contains {{tenant}} but no tenant is set: "
                + _how_to_set("tenant", profile_label)
            )
        url = template.replace("{tenant}", tenant)
    else:
        url = template
    if "{" in url or "}" in url:
        raise ConfigurationError(f"{where} has a placeholder other than {{tenant}}")
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ConfigurationError(f"{where} must be an http:// or https:// address with a host name")
    if parts.username or parts.password:
        raise ConfigurationError(
            f"the base URL from {source} must not carry a user name or password; "
            "use client_id and client_secret instead"
        )
    if parts.query or parts.fragment:
        raise ConfigurationError(f"{where} must not have a query or fragment")
    return url.rstrip("/")
