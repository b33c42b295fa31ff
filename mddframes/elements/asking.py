"""Asking the service whether a created child exists: the tree, read once per system.

A POST that creates a child can lose its answer after the service acted
(:class:`~mddframes.errors.AnswerLostError`). Sending it again blindly would create a
duplicate, and reporting a failure would make the user send it again. The tree of the
parent's system says what happened: :class:`ChildIndex` keeps, per system, the ids of
the elements under each ``(parent id, type, name)``, read once, so that

- :func:`~mddframes.elements.creation.create_children` reports a row that already
  exists (an earlier run created it) as ``exists`` instead of creating it again;
- after a lost answer, it reads the tree again: one new element there is the row's
  (``created``, found in the tree); none means the POST did not act, and it is sent
  again.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from mddframes.elements.records import field_of
from mddframes.errors import NotFoundError

if TYPE_CHECKING:
    from mddframes.api import Api

#: (parent id, type, name) of an element.
ChildKey = tuple[str, str, str]


class ChildIndex:
    """The children of each parent, by type and name, per system (read lazily, once).

    Parameters
    ----------
    api : Api
    """

    def __init__(self, api: Api) -> None:
        self.api = api
        self._system_of: dict[str, str | None] = {}
        self._trees: dict[str, dict[ChildKey, list[str]]] = {}

    def system(self, parent_id: str) -> str | None:
        """The system of an existing element (None when the service does not know it)."""
        if parent_id not in self._system_of:
            try:
                element = self.api.get_structure(parent_id)
            except NotFoundError:
                element = {}
            name = field_of(element, "systemName", "system_name", "system")
            self._system_of[parent_id] = None if name is None else str(name)
        return self._system_of[parent_id]

    def existing(self, parent_id: str, type: str, name: str) -> list[str]:
        """The ids of the elements named ``name`` of ``type`` under ``parent_id``."""
        system = self.system(parent_id)
        if system is None:
            return []
        if system not in self._trees:
            self._trees[system] = children_of(self.api.get_tree(system))
        return list(self._trees[system].get((parent_id, type, name), ()))

    def new_since(self, parent_id: str, type: str, name: str) -> list[str]:
        """Read the system's tree again; the matching ids that were not there before."""
        before = set(self.existing(parent_id, type, name))
        system = self.system(parent_id)
        if system is None:
            return []
        self._trees[system] = children_of(self.api.get_tree(system))
        return [i for i in self._trees[system].get((parent_id, type, name), ()) if i not in before]

    def created(
        self, parent_id: str, type: str, name: str, new_id: str, *, listed: bool = False
    ) -> None:
        """Record an element just created (and that its children share its system);
        ``listed``: the tree read last already lists it."""
        system = self.system(parent_id)
        self._system_of[new_id] = system
        if system is not None and system in self._trees and not listed:
            self._trees[system].setdefault((parent_id, type, name), []).append(new_id)


def children_of(tree: Any) -> dict[ChildKey, list[str]]:
    """``(parent id, type, name) -> ids`` of a tree answer, flat or nested, any spelling."""
    found: dict[ChildKey, list[str]] = {}
    pending: list[tuple[Any, str | None]] = [(tree, None)]
    while pending:
        item, parent = pending.pop()
        if isinstance(item, list):
            pending.extend((entry, parent) for entry in item)
            continue
        if not isinstance(item, Mapping):
            continue
        element_id = field_of(item, "id", "structureId", "structure_id")
        own_parent = field_of(item, "parentId", "parent_id")
        if own_parent is None:
            own_parent = parent
        if element_id is not None and own_parent is not None:
            key = (str(own_parent), str(item.get("type")), str(item.get("name")))
            found.setdefault(key, []).append(str(element_id))
        for value in item.values():
            if isinstance(value, list | Mapping):
                pending.append((value, None if element_id is None else str(element_id)))
    return found
