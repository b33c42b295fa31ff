"""What a user names when asking lineage a question: an element, or one of its columns.

A column is ``"element_id.column"`` or the tuple ``(element_id, column)``; an element is
its id (or, when no id matches, its name, if only one element has it). Element ids may
hold dots themselves (``".."`` is a valid id), so a string is split at the dot whose
left part is a known element.
"""

from __future__ import annotations

import difflib
from collections.abc import Collection, Mapping
from typing import TypeAlias

from mddframes.errors import InvalidArgumentError

#: A column node of the lineage graph: ``(element_id, column)``.
ColumnNode: TypeAlias = tuple[str, str]
#: A node of either graph: an element id, or a column node.
Node: TypeAlias = str | ColumnNode
#: What users pass: an element id or name, ``"element_id.column"``, or a tuple.
Address: TypeAlias = str | tuple[str, str]


def resolve(
    address: Address,
    *,
    names: Mapping[str, str],
    columns: Mapping[str, Collection[str]],
) -> Node:
    """The element id or column node ``address`` names.

    Parameters
    ----------
    address : str or tuple of (str, str)
        ``"element_id"``, ``"element_name"``, ``"element_id.column"`` or
        ``(element_id, column)``.
    names : mapping of str to str
        Element id -> name, for every element the lineage knows.
    columns : mapping of str to collection of str
        Element id -> its columns that mappings read or write.

    Returns
    -------
    str or tuple of (str, str)
        An element id, or ``(element_id, column)``.

    Raises
    ------
    InvalidArgumentError
        For an unknown element or column (naming close matches), or an address that is
        neither a string nor a pair of strings.
    """
    if isinstance(address, tuple):
        if len(address) != 2 or not all(isinstance(part, str) for part in address):
            raise InvalidArgumentError(
                f"a column is addressed as (element_id, column), got {address!r}"
            )
        element = _element(address[0], names)
        return element, _column(element, address[1], names, columns)
    if not isinstance(address, str) or not address:
        raise InvalidArgumentError(
            "an element is addressed by its id or name, a column as 'element_id.column' or "
            f"(element_id, column); got {address!r}"
        )
    if address in names:
        return address
    for position, char in enumerate(address):
        if char == "." and address[:position] in names:
            element = address[:position]
            column = address[position + 1 :]
            if column in columns.get(element, ()):
                return element, column
    for position, char in enumerate(address):
        if char == "." and address[:position] in names:
            element = address[:position]
            return element, _column(element, address[position + 1 :], names, columns)
    return _element(address, names)


def _element(text: str, names: Mapping[str, str]) -> str:
    if text in names:
        return text
    by_name = [element_id for element_id, name in names.items() if name == text]
    if len(by_name) == 1:
        return by_name[0]
    if by_name:
        raise InvalidArgumentError(
            f"{len(by_name)} elements are named {text!r} ({', '.join(by_name)}): use an id"
        )
    name, _, column = text.partition(".")
    by_name = [element_id for element_id, n in names.items() if n == name]
    if column and len(by_name) == 1:
        raise InvalidArgumentError(
            f"no element {text!r}; did you mean the column {by_name[0]}.{column} "
            f"(columns are addressed by element id)?"
        )
    close = difflib.get_close_matches(text, [*names, *names.values()], n=3)
    hint = f"; close: {', '.join(close)}" if close else ""
    raise InvalidArgumentError(
        f"no element {text!r} in this lineage (no mapping reads or writes it){hint}"
    )


def _column(
    element: str, column: str, names: Mapping[str, str], columns: Mapping[str, Collection[str]]
) -> str:
    known = columns.get(element, ())
    if column in known:
        return column
    close = difflib.get_close_matches(column, list(known), n=3)
    hint = f"; close: {', '.join(close)}" if close else ""
    raise InvalidArgumentError(
        f"no column {column!r} of element {element!r} ({names[element]}) in this lineage: "
        f"no mapping reads or writes it{hint}"
    )


def label(node: Node, names: Mapping[str, str]) -> str:
    """How a node is shown: the element's name, or ``name.column``."""
    if isinstance(node, tuple):
        return f"{names.get(node[0], node[0])}.{node[1]}"
    return names.get(node, node)


def address_of(node: Node) -> str:
    """The address of a node: the element id, or ``element_id.column``."""
    return f"{node[0]}.{node[1]}" if isinstance(node, tuple) else node
