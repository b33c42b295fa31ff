"""ETags and ``If-Match``: optimistic concurrency where the service offers it (row 29).

Across machines only the service can refuse a write made over someone else's change.
If a read of a table or a mapping carries a strong ``ETag``, a write of it can send that
tag as ``If-Match``, and a service that honours it answers 412 instead of overwriting
(:mod:`mddframes.http.translation` makes that a ``ConcurrentModificationError``).

If-Match compares entity tags strongly (RFC 9110, 13.1.1): a weak tag (``W/"..."``)
never matches, so only a strong tag is worth keeping; a weak one, a malformed one or
none at all leaves a write protected only by mddframes' own lock.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, NamedTuple

from mddframes.errors import InvalidArgumentError
from mddframes.wire.profile import ANY_VERSION, ETAG_HEADER, IF_MATCH_HEADER

# RFC 9110: entity-tag = [ weak ] opaque-tag; opaque-tag = DQUOTE *etagc DQUOTE,
# etagc = %x21 / %x23-7E / obs-text
_STRONG = re.compile(r'"[\x21\x23-\x7e\x80-\xff]*"')


class Tagged(NamedTuple):
    """A JSON document read with the strong ETag of its answer.

    Attributes
    ----------
    document : dict
        The decoded document, as the parsed read returns it.
    etag : str or None
        The answer's strong ``ETag``, quoted as sent (what ``if_match`` takes back);
        ``None`` when the service sent none, or only a weak or malformed one.
    """

    document: dict[str, Any]
    etag: str | None


def strong_etag(value: str | None) -> str | None:
    """``value`` when it is one strong entity tag (``"..."``), else ``None``.

    Parameters
    ----------
    value : str or None
        An ``ETag`` header as received.
    """
    if value is None:
        return None
    value = value.strip()
    return value if _STRONG.fullmatch(value) else None


def etag_of(headers: Mapping[str, str]) -> str | None:
    """The strong ``ETag`` of an answer's headers (see :func:`strong_etag`)."""
    return strong_etag(headers.get(ETAG_HEADER))


def if_match_headers(if_match: str | None, what: str) -> dict[str, str] | None:
    """The ``If-Match`` header to send for ``if_match`` (``None``: no precondition).

    Parameters
    ----------
    if_match : str or None
        A strong ETag as a read returned it, or ``"*"`` (any existing version).
    what : str
        The call, for the error message (``"put_table"``).

    Raises
    ------
    InvalidArgumentError
        If ``if_match`` is neither a strong entity tag nor ``*`` (a weak tag never
        matches, so the write could only be refused); nothing was sent.
    """
    if if_match is None:
        return None
    if if_match != ANY_VERSION and strong_etag(if_match) != if_match:
        raise InvalidArgumentError(
            f"{what}(): if_match must be a strong ETag as a read returned it (quoted, "
            f"not W/...) or '*', got {if_match[:80]!r}; nothing was sent"
        )
    return {IF_MATCH_HEADER: if_match}
