"""The tree frame's vocabulary and integrity warnings, shared by both read routes.

:mod:`mddframes.frames.tree` (the default route) and :mod:`mddframes.frames.tree_arrow`
with :mod:`mddframes.frames.tree_walk` (the Arrow route) take the same field names,
the same child index and the same warnings from here, so that both give one frame.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd

from mddframes.errors import TreeIntegrityWarning, issue_warning

# the spellings a tree may use (row 11) are the wire profile's; the readers take them here
from mddframes.wire.profile import CHILDREN_KEYS as CHILDREN_KEYS
from mddframes.wire.profile import ID_ALIASES as ID_ALIASES
from mddframes.wire.profile import PARENT_ALIASES as PARENT_ALIASES

logger = logging.getLogger("mddframes.frames.tree")  # the name users filter on

#: The columns every tree frame starts with, in this order.
LEADING_COLUMNS: tuple[str, ...] = (
    "id",
    "name",
    "type",
    "parent_id",
    "depth",
    "path",
    "n_children",
)

#: Fields that hold identifiers or names: always ``string`` (an id never turns number).
STRING_COLUMNS: tuple[str, ...] = (
    "id",
    "name",
    "type",
    "parent_id",
    "system_name",
    "table_id",
    "mapping_id",
    "deployment_id",
)

PATH_SEP = "/"
NAMED_LIMIT = 20  # how many ids a warning lists before it just counts


def warn_duplicates(id_values: np.ndarray, what: str) -> None:
    """Warn that ids appear more than once (naming the caller's line)."""
    dupes = pd.Index(id_values)[pd.Index(id_values).duplicated()].unique().tolist()
    issue_warning(
        f"{what}: {len(dupes)} id(s) appear more than once; children attach to the "
        f"first occurrence: {name_list(dupes)}",
        TreeIntegrityWarning,
    )


def child_index(parent_pos: np.ndarray) -> tuple[np.ndarray, Callable[[np.ndarray], np.ndarray]]:
    """Child counts and a ``children_of(frontier)`` over a CSR index of the children.

    ``parent_pos`` holds each element's parent position (-1: none in the tree).
    ``children_of`` gives the positions of every child of the frontier's elements,
    in a few vectorised passes.
    """
    n = len(parent_pos)
    linked = parent_pos >= 0
    counts = np.bincount(parent_pos[linked], minlength=n)
    children = np.flatnonzero(linked)
    # (the order of siblings does not matter: every result is stored by position)
    children = children[np.argsort(parent_pos[children])]
    offsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(counts, out=offsets[1:])

    def children_of(frontier: np.ndarray) -> np.ndarray:
        per_node = counts[frontier]
        total = int(per_node.sum())
        if total == 0:
            return frontier[:0]
        before = np.cumsum(per_node) - per_node
        return children[np.repeat(offsets[frontier] - before, per_node) + np.arange(total)]

    return counts, children_of


def warn_unreached(
    ids: pd.Series,
    parents: pd.Series,
    orphan: np.ndarray,
    unreached: np.ndarray,
    parent_pos: np.ndarray,
    counts: np.ndarray,
    children_of: Any,
    what: str,
) -> None:
    """Warn about orphans, the elements under them, and parent cycles, by id."""
    id_values = ids.to_numpy(dtype=object)
    parent_values = parents.to_numpy(dtype=object)
    under_orphan = np.zeros(len(ids), dtype=bool)
    frontier = np.flatnonzero(orphan)
    while frontier.size:
        under_orphan[frontier] = True
        frontier = children_of(frontier)
        frontier = frontier[~under_orphan[frontier]]
    in_cycle_area = unreached & ~under_orphan
    # Peel away elements that have no children left in the area: what remains
    # after no more can be peeled is exactly the set of cycle members.
    alive = in_cycle_area.copy()
    while True:
        live_children = np.bincount(parent_pos[alive & (parent_pos >= 0)], minlength=len(ids))
        leaves = alive & (live_children == 0)
        if not leaves.any():
            break
        alive &= ~leaves
    messages = []
    orphan_pos = np.flatnonzero(orphan)
    if orphan_pos.size:
        pairs = [
            f"{id_values[p]!r} (parent {parent_values[p]!r})" for p in orphan_pos[:NAMED_LIMIT]
        ]
        more = f" and {orphan_pos.size - NAMED_LIMIT} more" if orphan_pos.size > NAMED_LIMIT else ""
        below = int(under_orphan.sum()) - orphan_pos.size
        messages.append(
            f"{orphan_pos.size} orphan(s) whose parent is not in the tree: {', '.join(pairs)}{more}"
            + (f"; {below} element(s) below them" if below else "")
        )
    cycle_pos = np.flatnonzero(alive)
    if cycle_pos.size:
        below = int(in_cycle_area.sum()) - cycle_pos.size
        messages.append(
            f"{cycle_pos.size} element(s) in parent cycles: "
            f"{name_list(id_values[cycle_pos].tolist())}"
            + (f"; {below} element(s) below them" if below else "")
        )
    message = (
        f"{what}: {int(unreached.sum())} element(s) are not reachable from a root and are "
        f"kept with a missing depth and path. " + "; ".join(messages)
    )
    logger.debug(message)
    issue_warning(message, TreeIntegrityWarning)


def name_list(values: list[Any]) -> str:
    shown = ", ".join(repr(v) for v in values[:NAMED_LIMIT])
    if len(values) > NAMED_LIMIT:
        shown += f" and {len(values) - NAMED_LIMIT} more"
    return shown


def whole_versions(array: Any) -> Any:
    """A ``version`` column's array: ``Int64`` when it is ``Float64`` of whole numbers only.

    A service that sends versions as ``3.0`` still numbers them; any other array is
    returned as it is.
    """
    if array.dtype != "Float64":
        return array
    present = array[~array.isna()]
    return array.astype("Int64") if ((present % 1) == 0).all() else array
