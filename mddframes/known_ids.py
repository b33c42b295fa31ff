"""Ids the client has already seen, so that a not-found id gets its close matches.

A 404 on ``getTable`` for ``"lab-sourc"`` says only "not found"; when the session read
the tree of ``LAB`` just before, the client knows that ``"lab-source"`` exists and says
so. The ids come from the frames the tree reads returned, held by weak reference: the
client keeps no copy of them (a tree of a million elements costs nothing more), and a
frame the user dropped suggests nothing. Only the error path ever looks at them.
"""

from __future__ import annotations

import threading
import weakref
from collections import OrderedDict
from typing import Any

from mddframes.ids import close_matches

#: Frame column -> the kind of id it holds (the columns of a tree frame).
_TREE_COLUMNS = {"table": "table_id", "mapping": "mapping_id", "element": "id"}
#: How many frames are remembered (the newest; a frame read again replaces itself).
MAX_FRAMES = 8


class KnownIds:
    """The ids of tables, mappings and elements in the tree frames read through an Api.

    Safe to share between threads. :meth:`suggest` turns them into the ``"; did you
    mean ...?"`` of a not-found error.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._frames: OrderedDict[str, weakref.ref[Any]] = OrderedDict()

    def remember_tree(self, system: str, frame: Any) -> None:
        """Remember the tree frame of ``system`` (weakly) as a source of known ids."""
        with self._lock:
            self._frames.pop(system, None)
            self._frames[system] = weakref.ref(frame)
            while len(self._frames) > MAX_FRAMES:
                self._frames.popitem(last=False)

    def suggest(self, kind: str, unknown: str) -> str:
        """``"; did you mean 'x'? (from the tree of S read earlier)"``, or ``""``.

        Parameters
        ----------
        kind : {"table", "mapping", "element"}
            What kind of id was not found.
        unknown : str
            The id the service did not know.

        Returns
        -------
        str
            Empty when no remembered frame holds a close id (or none is left).
        """
        column = _TREE_COLUMNS.get(kind)
        if column is None:
            return ""
        with self._lock:
            frames = [(system, ref()) for system, ref in self._frames.items()]
        known: list[str] = []
        systems: list[str] = []
        for system, frame in frames:
            if frame is None or column not in getattr(frame, "columns", ()):
                continue
            ids = [str(value) for value in frame[column].dropna().unique()]
            if ids:
                known += ids
                systems.append(system)
        suggestion = close_matches([unknown], known)
        if not suggestion:
            return ""
        return f"{suggestion} (from the tree of {', '.join(systems)} read earlier)"
