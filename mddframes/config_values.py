"""Parsing and checking single setting values (for :mod:`mddframes.config`).

Each parser takes the setting's name, the raw value and where it came from (an
argument, a variable, the profile file), so an error names all three; the table of
settings (:data:`mddframes.config.SETTINGS`) names one parser per setting.
"""

from __future__ import annotations

import ipaddress
import math
import os
import re
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from mddframes.errors import ConfigurationError


def is_loopback_host(host: str) -> bool:
    """Whether ``host`` is ``localhost``, an address in 127.0.0.0/8, or ``::1``."""
    host = host.strip("[]").lower()
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check_transport_security(base_url: str, allow_insecure_http: bool) -> None:
    """Refuse plain ``http://`` to any host but loopback, unless explicitly allowed.

    Raises
    ------
    ConfigurationError
        If ``base_url`` is ``http://`` to a non-loopback host and
        ``allow_insecure_http`` is false.
    """
    parts = urlsplit(base_url)
    if parts.scheme == "http" and not allow_insecure_http:
        if not is_loopback_host(parts.hostname or ""):
            raise ConfigurationError(
                f"refusing plain http:// to {parts.hostname!r}: the client secret and tokens "
                "would travel unencrypted. Use https://, or pass allow_insecure_http=True "
                "if you really mean it"
            )


def parse_api_prefix(name: str, value: Any, source: str) -> str:
    """A path prefix: empty, or ``/``-led without a trailing ``/`` (``"/x/"`` -> ``"/x"``)."""
    if not isinstance(value, str):
        raise ConfigurationError(f"{name} from {source} must be a string")
    prefix = value.strip().rstrip("/")
    if prefix and not prefix.startswith("/"):
        raise ConfigurationError(
            f"{name} from {source} must be empty or start with '/', got {value!r}"
        )
    if any(ch in prefix for ch in "?#{}"):
        raise ConfigurationError(f"{name} from {source} must be a plain path, got {value!r}")
    return prefix


def parse_timeout(name: str, value: Any, source: str) -> tuple[float, float]:
    """``(connect, read)`` seconds from a number, a pair, or text ``"5"`` / ``"5,60"``."""
    raw = value
    if isinstance(value, str):
        pieces = [p.strip() for p in value.split(",")]
        try:
            numbers = [float(p) for p in pieces]
        except ValueError:
            raise ConfigurationError(
                f"{name} from {source} must be seconds or 'connect,read', got {raw!r}"
            ) from None
    elif isinstance(value, int | float) and not isinstance(value, bool):
        numbers = [float(value)]
    elif isinstance(value, list | tuple):
        try:
            numbers = [float(p) for p in value]
        except (TypeError, ValueError):
            numbers = []
    else:
        numbers = []
    if len(numbers) == 1:
        numbers = numbers * 2
    if len(numbers) != 2 or not all(n > 0 for n in numbers):
        raise ConfigurationError(
            f"{name} from {source} must be positive seconds or a (connect, read) pair, got {raw!r}"
        )
    return (numbers[0], numbers[1])


def parse_int(name: str, value: Any, source: str, *, minimum: int = 0) -> int:
    """An integer of at least ``minimum``, from an int or its text (never a bool)."""
    if isinstance(value, bool):
        number = None
    elif isinstance(value, int):
        number = value
    else:
        try:
            number = int(str(value).strip())
        except ValueError:
            number = None
    if number is None or number < minimum:
        raise ConfigurationError(
            f"{name} from {source} must be an integer >= {minimum}, got {value!r}"
        )
    return number


def parse_path(name: str, value: Any, source: str) -> str:
    """A folder's path: a non-empty string or an ``os.PathLike``, as a string."""
    text = os.fspath(value) if isinstance(value, os.PathLike) else value
    if not isinstance(text, str) or not text.strip():
        raise ConfigurationError(f"{name} from {source} must be a folder's path, got {value!r}")
    return text.strip()


def parse_seconds(name: str, value: Any, source: str, *, positive: bool = False) -> float:
    """A finite number of seconds (``>= 0``, or ``> 0`` with ``positive``), from a number
    or its text (never a bool)."""
    number: float | None
    if isinstance(value, bool):
        number = None
    elif isinstance(value, int | float):
        number = float(value)
    else:
        try:
            number = float(str(value).strip())
        except ValueError:
            number = None
    if number is None or not number >= 0 or number == float("inf") or (positive and number == 0):
        bound = "> 0" if positive else ">= 0"
        raise ConfigurationError(
            f"{name} from {source} must be a number of seconds {bound}, got {value!r}"
        )
    return number


_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off"}


def parse_bool(name: str, value: Any, source: str) -> bool:
    """A bool, or its text: ``1/true/yes/on`` or ``0/false/no/off`` (any case)."""
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in _TRUE | _FALSE:
        return value.strip().lower() in _TRUE
    raise ConfigurationError(f"{name} from {source} must be true or false, got {value!r}")


def parse_verify(name: str, value: Any, source: str) -> bool | str:
    """TLS verification: a bool (or its text, as :func:`parse_bool`) or a CA bundle path."""
    if isinstance(value, bool):
        return value
    if isinstance(value, str):
        lowered = value.strip().lower()
        if lowered in _TRUE | _FALSE:
            return lowered in _TRUE
        if not Path(value).exists():
            raise ConfigurationError(
                f"{name} from {source} is neither true/false nor an existing CA bundle: {value!r}"
            )
        return value
    raise ConfigurationError(
        f"{name} from {source} must be true, false or a CA bundle path, got {value!r}"
    )


_RATE = re.compile(
    r"^\s*(?P<n>\d+(?:\.\d+)?)\s*(?:(?:/|\s*per\s+)\s*(?P<unit>s|sec|second|m|min|minute|h|hour))?\s*$",
    re.IGNORECASE,
)
_UNIT_SECONDS = {"s": 1, "sec": 1, "second": 1, "m": 60, "min": 60, "minute": 60,
                 "h": 3600, "hour": 3600}  # fmt: skip


def parse_rate(name: str, value: Any, source: str) -> float:
    """A rate in requests a second, from a number or ``"N/s"``, ``"N/min"``, ``"N per hour"``.

    Parameters
    ----------
    name : str
        The setting's name (for the message).
    value : object
        A positive number (requests a second) or a text as above.
    source : str
        Where the value came from (for the message).

    Returns
    -------
    float
        Requests a second.

    Raises
    ------
    ConfigurationError
        The value is not a positive rate.
    """
    rate: float | None = None
    if isinstance(value, int | float) and not isinstance(value, bool):
        rate = float(value)
    elif isinstance(value, str):
        match = _RATE.match(value)
        if match:
            unit = (match["unit"] or "s").lower()
            rate = float(match["n"]) / _UNIT_SECONDS[unit]
    if rate is None or not math.isfinite(rate) or rate <= 0:
        raise ConfigurationError(
            f"{name} from {source} must be a positive rate: requests a second, or "
            f"'N/s', 'N/min' or 'N/hour' (e.g. '400/min'), got {value!r}"
        )
    return rate


def parse_user_agent(name: str, value: Any, source: str) -> str:
    """Words for a ``User-Agent`` header: printable ASCII, no line break (which would
    start a header of its own), at most 200 characters."""
    if not isinstance(value, str) or not value.strip():
        raise ConfigurationError(f"{name} from {source} must be a non-empty string")
    words: str = value.strip()
    if len(words) > 200 or not all(" " <= c <= "~" for c in words):
        raise ConfigurationError(
            f"{name} from {source} must be at most 200 printable ASCII characters, "
            "without line breaks"
        )
    return words
