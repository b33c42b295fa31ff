"""Reading a ``Retry-After`` header: delta-seconds or an HTTP-date (RFC 9110, 10.2.3)."""

from __future__ import annotations

import time
from email.utils import parsedate_to_datetime

__all__ = ["retry_after_seconds"]


def retry_after_seconds(value: str | None, now: float | None = None) -> float | None:
    """The seconds a ``Retry-After`` header asks for: delta-seconds or an HTTP-date.

    Parameters
    ----------
    value : str or None
        The header (``"7"`` or ``"Wed, 21 Oct 2026 07:28:00 GMT"``).
    now : float, optional
        The wall clock (``time.time()``) to count an HTTP-date from.

    Returns
    -------
    float or None
        Seconds (0 for a date already past); None when absent or unreadable.
    """
    if value is None:
        return None
    text = value.strip()
    if not text:
        return None
    if text.isdigit():
        return float(text)
    try:
        when = parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:
        return None
    current = time.time() if now is None else now
    return max(0.0, when.timestamp() - current)
