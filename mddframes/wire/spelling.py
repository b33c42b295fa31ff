"""camelCase and snake_case spellings of the wire names, and renaming between them.

The emulator writes the field names of docs/wire-format.md in camelCase, as Jackson does
by default; a service configured with ``SNAKE_CASE`` naming writes ``parent_id``,
``table_id``, ``data_type``... The client renames an answer's snake_case names to
camelCase (:func:`to_camel`) so every layer above reads one spelling, the ``snake-case``
dialect renames the other way (:func:`to_snake`), and doctor and the recording learner
tell the spellings apart (:func:`spelling`, :func:`snake_names`). The keys users own
(:data:`~mddframes.wire.profile.USER_KEYS`) are never renamed nor looked into.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

from mddframes.wire.profile import USER_KEYS, WIRE_NAMES

_BOUNDARY = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


def snake(name: str) -> str:
    """``name`` (camelCase) in snake_case: ``"parentId"`` -> ``"parent_id"``."""
    return _BOUNDARY.sub("_", name).lower()


TO_SNAKE: dict[str, str] = {name: snake(name) for name in WIRE_NAMES}
"""camelCase wire name -> its snake_case spelling."""
TO_CAMEL: dict[str, str] = {snake_name: camel for camel, snake_name in TO_SNAKE.items()}
"""snake_case wire name -> its camelCase spelling."""


def _sampled_keys(value: Any, depth: int = 4) -> Iterator[str]:
    """Keys along the first entry of every list, a few levels deep (a cheap look)."""
    if depth == 0:
        return
    if isinstance(value, list):
        if value:
            yield from _sampled_keys(value[0], depth - 1)
    elif isinstance(value, dict):
        for key, item in value.items():
            yield key
            if key not in USER_KEYS:
                yield from _sampled_keys(item, depth - 1)


def is_snake_case(value: Any) -> bool:
    """Whether ``value`` (a decoded answer) spells any wire name in snake_case."""
    return any(key in TO_CAMEL for key in _sampled_keys(value))


def spelling(value: Any) -> str | None:
    """How ``value`` spells the wire names: ``"snake_case"``, ``"camelCase"`` or ``None``.

    ``None`` when it holds none of them (a bare list of ids, say).
    """
    keys = set(_sampled_keys(value))
    if keys & TO_CAMEL.keys():
        return "snake_case"
    return "camelCase" if keys & TO_SNAKE.keys() else None


def rename(value: Any, names: Mapping[str, str]) -> Any:
    """``value`` with the keys found in ``names`` renamed; users' keys left alone."""
    if isinstance(value, list):
        return [rename(item, names) for item in value]
    if isinstance(value, dict):
        return {
            names.get(key, key): item if key in USER_KEYS else rename(item, names)
            for key, item in value.items()
        }
    return value


def to_camel(value: Any) -> Any:
    """``value`` with snake_case wire names in camelCase (unchanged when it has none)."""
    return rename(value, TO_CAMEL) if is_snake_case(value) else value


def to_snake(value: Any) -> Any:
    """``value`` with camelCase wire names in snake_case."""
    return rename(value, TO_SNAKE)


def all_keys(value: Any, per_list: int | None = None) -> set[str]:
    """Every key of ``value`` at any depth, users' keys not looked into.

    Parameters
    ----------
    value : Any
        Decoded JSON.
    per_list : int, optional
        Look at only this many entries of each list (a bound for large answers).
    """
    found: set[str] = set()
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, list):
            stack.extend(item if per_list is None else item[:per_list])
        elif isinstance(item, Mapping):
            found.update(k for k in item if isinstance(k, str))
            stack.extend(v for k, v in item.items() if k not in USER_KEYS)
    return found


def camel_names(value: Any, names: Mapping[str, str] = TO_SNAKE) -> set[str]:
    """The camelCase wire names (keys of ``names``) used as keys in ``value``."""
    return {key for key in all_keys(value) if key in names}


def snake_names(value: Any, per_list: int | None = None) -> set[str]:
    """The snake_case wire names used as keys in ``value``."""
    return {key for key in all_keys(value, per_list) if key in TO_CAMEL}
