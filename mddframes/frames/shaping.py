"""Reading response shapes tolerantly: envelopes, snake_case names, flattened objects.

The service description leaves every response shape "not shown", so the loaders read
tolerantly, and never drop a field they do not know (it becomes a column): a bare list or
a list under a common envelope key, camelCase or snake_case field names. These helpers do that on decoded JSON and know
nothing of HTTP.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

import pandas as pd

from mddframes.errors import DataShapeError
from mddframes.wire.profile import ENVELOPE_KEYS as ENVELOPE_KEYS  # (read from here too)

_CAMEL_BOUNDARY_1 = re.compile(r"([A-Z]+)([A-Z][a-z])")
_CAMEL_BOUNDARY_2 = re.compile(r"([a-z0-9])([A-Z])")
_NON_WORD = re.compile(r"[^0-9a-zA-Z]+")


def listed_in(payload: Any, keys: Iterable[str]) -> list[Any] | None:
    """The list an answer is, or holds directly under the first of ``keys`` that has one.

    Parameters
    ----------
    payload : Any
        Decoded JSON.
    keys : iterable of str
        The envelope keys to try, in order.

    Returns
    -------
    list or None
        The list itself (not a copy); None when ``payload`` is neither a list nor an
        object with a list under one of ``keys``.
    """
    if isinstance(payload, list):
        return payload
    if isinstance(payload, Mapping):
        for key in keys:
            value = payload.get(key)
            if isinstance(value, list):
                return value
    return None


def unwrap_list(payload: Any, *, what: str, keys: Iterable[str] = ENVELOPE_KEYS) -> list[Any]:
    """Return the list a response carries, bare or under an envelope key.

    Parameters
    ----------
    payload : Any
        Decoded JSON: a list, or an object holding the list under one of ``keys``
        (one level of nesting such as ``{"data": {"items": [...]}}`` is accepted too).
    what : str
        What the list is (e.g. ``"tree of system 'DWH'"``), used in the error message.
    keys : iterable of str, optional
        The envelope keys to try, in order.

    Returns
    -------
    list
        The list itself (not a copy).

    Raises
    ------
    DataShapeError
        When no list is found; the message names ``what`` and the keys that were there.
    """
    keys = tuple(keys)
    listed = listed_in(payload, keys)
    if listed is not None:
        return listed
    if isinstance(payload, Mapping):
        for key in keys:
            value = payload.get(key)
            nested = listed_in(value, keys) if isinstance(value, Mapping) else None
            if nested is not None:
                return nested
        found = ", ".join(repr(k) for k in list(payload)[:10]) or "none"
        raise DataShapeError(
            f"expected a list for the {what}, bare or under one of the keys "
            f"{', '.join(keys)}; got an object with the keys {found}"
        )
    raise DataShapeError(f"expected a list for the {what}; got {type(payload).__name__}")


def snake_case(name: str) -> str:
    """Convert a field name to snake_case (``parentId`` -> ``parent_id``).

    Already snake_case names are returned unchanged; acronyms stay together
    (``HTTPStatus`` -> ``http_status``); dashes and spaces become underscores
    (``not-before-policy`` -> ``not_before_policy``); dots are kept because they
    separate the levels of a flattened name (``attributes.schemaName`` ->
    ``attributes.schema_name``).
    """
    if not isinstance(name, str):
        return name
    if "." in name:
        return ".".join(snake_case(part) for part in name.split("."))
    out = _CAMEL_BOUNDARY_1.sub(r"\1_\2", name)
    out = _CAMEL_BOUNDARY_2.sub(r"\1_\2", out)
    out = _NON_WORD.sub("_", out).strip("_")
    return out.lower() if out else name


def snake_columns(frame: pd.DataFrame) -> pd.DataFrame:
    """Rename a frame's columns to snake_case, merging columns that collide.

    When two source fields map to one name (a payload that mixes ``parentId`` and
    ``parent_id``), the first column's values win and the gaps are filled from the
    others, so no value is dropped.
    """
    new_names = [snake_case(c) for c in frame.columns]
    if new_names == list(frame.columns):
        return frame
    if len(set(new_names)) == len(new_names):
        return frame.set_axis(new_names, axis=1)
    merged: dict[str, pd.Series] = {}
    for position, name in enumerate(new_names):
        column = frame.iloc[:, position]
        if name in merged:
            merged[name] = merged[name].combine_first(column)
        else:
            merged[name] = column
    return pd.DataFrame(merged, index=frame.index)


def flatten_dict(value: Mapping[str, Any], *, sep: str = ".", prefix: str = "") -> dict[str, Any]:
    """Flatten nested objects into one level, joining keys with ``sep``.

    Lists are kept as values (a list of objects has no natural column shape), and
    an empty nested object is kept as ``{}`` so that nothing disappears.

    Examples
    --------
    >>> flatten_dict({"id": "a", "attributes": {"schema": "dwh", "tags": ["x"]}})
    {'id': 'a', 'attributes.schema': 'dwh', 'attributes.tags': ['x']}
    """
    flat: dict[str, Any] = {}
    for key, item in value.items():
        name = f"{prefix}{sep}{key}" if prefix else str(key)
        if isinstance(item, Mapping) and item:
            flat.update(flatten_dict(item, sep=sep, prefix=name))
        else:
            flat[name] = item
    return flat


def leaf_rows(value: Any) -> list[tuple[str, Any]]:
    """Every leaf of a JSON value as ``(path, value)``, in document order.

    Paths join object keys with ``.`` and write list positions as ``[i]``
    (``table.columns[0].name``); the root itself is ``""``. Empty objects and lists
    are leaves (so they are not lost). Iterative, so deep documents do not hit the
    recursion limit.
    """
    rows: list[tuple[str, Any]] = []
    stack: list[tuple[str, Any]] = [("", value)]
    while stack:
        path, item = stack.pop()
        if isinstance(item, Mapping) and item:
            children = [(f"{path}.{k}" if path else str(k), v) for k, v in item.items()]
        elif isinstance(item, list) and item:
            children = [(f"{path}[{i}]", v) for i, v in enumerate(item)]
        else:
            rows.append((path, item))
            continue
        stack.extend(reversed(children))
    return rows
