"""Nested values as deep as the decoder takes them: measured, encoded, or refused by name.

The one depth limit is :data:`mddframes.codec.fastjson.MAX_DEPTH` (1024 levels, orjson's):
an answer nested deeper is refused when it is decoded. Everything that encodes or walks a
served value (snapshots, workbooks, tables as code, digests, lineage) accepts what the
decoder accepted: :func:`dumps` is :func:`json.dumps`, and where ``json``'s recursive C
encoder gives up (near the interpreter's recursion limit, about 1000 levels) it encodes
the same text without recursion. A value built in Python may nest deeper than any
answer: :func:`check_depth` refuses it with a
:class:`~mddframes.errors.DataShapeError` naming the object.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from mddframes.codec.fastjson import MAX_DEPTH, NestingTooDeep
from mddframes.codec.fastjson import loads as fast_loads
from mddframes.errors import DataShapeError

__all__ = ["MAX_DEPTH", "check_depth", "depth_of", "dumps", "equal", "loads"]


def depth_of(value: Any, *, stop_after: int = MAX_DEPTH) -> int:
    """How many levels of lists and dicts ``value`` nests (a scalar: 0), without recursion.

    Parameters
    ----------
    value : Any
        A decoded JSON value.
    stop_after : int, optional
        Stop counting once this depth is passed (the answer is then ``stop_after + 1``).

    Returns
    -------
    int

    Examples
    --------
    >>> depth_of({"a": [1, {"b": []}]})
    4
    """
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, list | tuple):
            children = item
        else:
            continue
        level += 1
        if level > deepest:
            deepest = level
            if deepest > stop_after:
                return deepest
        stack.extend((child, level) for child in children)
    return deepest


def check_depth(value: Any, what: str) -> None:
    """Refuse a value nested deeper than :data:`MAX_DEPTH` levels.

    Parameters
    ----------
    value : Any
        The value.
    what : str
        The object it belongs to, for the error (``"table 'tbl-1'"``).

    Raises
    ------
    DataShapeError
        Naming ``what`` and the limit.
    """
    if depth_of(value) > MAX_DEPTH:
        raise DataShapeError(
            f"{what} holds a value nested deeper than {MAX_DEPTH} levels, the most "
            "mddframes reads or writes"
        )


def dumps(value: Any, *, what: str = "a value", **options: Any) -> str:
    """:func:`json.dumps` for values of any depth the decoder accepts.

    Parameters
    ----------
    value : Any
        The value.
    what : str
        The object it belongs to, named if it is refused.
    **options
        ``json.dumps``' ``ensure_ascii``, ``allow_nan``, ``separators``, ``sort_keys``,
        ``default``.

    Returns
    -------
    str
        What ``json.dumps(value, **options)`` gives.

    Raises
    ------
    DataShapeError
        The value nests deeper than :data:`MAX_DEPTH` levels.

    Examples
    --------
    >>> deep = []
    >>> for _ in range(1000):
    ...     deep = [deep]
    >>> len(dumps(deep))
    2002
    """
    try:
        return json.dumps(value, **options)
    except RecursionError:
        check_depth(value, what)
        return _dumps_flat(value, **options)


def loads(text: str | bytes, *, what: str = "a value", **options: Any) -> Any:
    """:func:`json.loads` for documents of any depth the decoder accepts.

    ``json``'s recursive decoder gives up near the recursion limit; such a document is
    then decoded by :func:`mddframes.codec.fastjson.loads` (orjson: 1024 levels).

    Parameters
    ----------
    text : str or bytes
        The document.
    what : str
        The object it belongs to, named if it is refused.
    **options
        ``json.loads``' keyword arguments (for documents within the recursion limit).

    Returns
    -------
    Any

    Raises
    ------
    DataShapeError
        The document nests deeper than :data:`MAX_DEPTH` levels.
    """
    try:
        return json.loads(text, **options)
    except RecursionError:
        pass
    try:
        return fast_loads(text)
    except NestingTooDeep:
        raise DataShapeError(
            f"{what} holds a value nested deeper than {MAX_DEPTH} levels, the most "
            "mddframes reads or writes"
        ) from None


def equal(a: Any, b: Any) -> bool:
    """``a == b`` for decoded JSON values of any depth the decoder accepts.

    Python compares nested values recursively; past its recursion limit the two
    values' canonical texts (keys sorted) are compared instead, where ``1`` and ``1.0``
    differ.

    Parameters
    ----------
    a, b : Any
        Decoded JSON values.

    Returns
    -------
    bool
    """
    try:
        return bool(a == b)
    except RecursionError:
        canonical: dict[str, Any] = {"sort_keys": True, "separators": (",", ":")}
        return dumps(a, **canonical) == dumps(b, **canonical)


def _dumps_flat(
    value: Any,
    *,
    ensure_ascii: bool = True,
    allow_nan: bool = True,
    separators: tuple[str, str] | None = None,
    sort_keys: bool = False,
    default: Callable[[Any], Any] | None = None,
    **_ignored: Any,
) -> str:
    """The text ``json.dumps`` gives, built with a stack of its own instead of recursion."""
    item_separator, key_separator = separators or (", ", ": ")

    def scalar(item: Any) -> str:
        return json.dumps(item, ensure_ascii=ensure_ascii, allow_nan=allow_nan)

    out: list[str] = []
    # each entry: (True, text to emit) or (False, a value still to encode)
    stack: list[tuple[bool, Any]] = [(False, value)]
    while stack:
        is_text, item = stack.pop()
        if is_text:
            out.append(item)
            continue
        if isinstance(item, dict):
            pairs = sorted(item.items()) if sort_keys else list(item.items())
            work: list[tuple[bool, Any]] = [(True, "{")]
            for position, (key, child) in enumerate(pairs):
                if position:
                    work.append((True, item_separator))
                work.append((True, scalar(_key_text(key)) + key_separator))
                work.append((False, child))
            work.append((True, "}"))
            stack.extend(reversed(work))
        elif isinstance(item, list | tuple):
            work = [(True, "[")]
            for position, child in enumerate(item):
                if position:
                    work.append((True, item_separator))
                work.append((False, child))
            work.append((True, "]"))
            stack.extend(reversed(work))
        elif item is None or isinstance(item, str | int | float):
            out.append(scalar(item))
        elif default is not None:
            stack.append((False, default(item)))
        else:
            out.append(scalar(item))  # raises json's own TypeError
    return "".join(out)


def _key_text(key: Any) -> str:
    """A dict key as ``json.dumps`` writes it (a string, or a number/bool/None spelled)."""
    if isinstance(key, str):
        return key
    if key is True:
        return "true"
    if key is False:
        return "false"
    if key is None:
        return "null"
    if isinstance(key, float):
        return json.dumps(key)
    return str(int(key)) if isinstance(key, int) else key
