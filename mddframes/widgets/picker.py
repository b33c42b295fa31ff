"""ElementPicker: choose elements of a system's tree, by type filter and text search.

The tree is read once into a frame; filtering is a pandas mask over precomputed
columns, and the list shows at most ``max_shown`` rows (a browser's ``<select>`` with
100,000 options freezes the page), so the picker stays responsive on large systems.
The selection lives apart from the list, so it survives changing the filter.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import ipywidgets as widgets
import numpy as np
import pandas as pd
import traitlets

from mddframes.errors import InvalidArgumentError
from mddframes.ids import id_list

ALL_TYPES = ""
_INDENT = "\u00a0\u00a0\u00a0"  # non-breaking: a <select> option collapses plain spaces


def _display_order(parent_pos: np.ndarray, depth: np.ndarray) -> np.ndarray:
    """Row positions depth first, siblings in the order the service lists them.

    Vectorised level by level, as the tree frame's depths are: subtree sizes bottom-up,
    then each element's pre-order number = its parent's + 1 + the sizes of the
    siblings listed before it. Elements without a depth (parent cycles) come last.

    Parameters
    ----------
    parent_pos : numpy.ndarray
        Each row's parent row (-1 for a root).
    depth : numpy.ndarray
        Each row's depth (-1 where unknown).
    """
    n = len(parent_pos)
    known = depth >= 0
    levels = [np.flatnonzero(depth == d) for d in range(int(depth.max(initial=-1)) + 1)]
    size = np.where(known, 1, 0).astype(np.int64)
    for rows in reversed(levels[1:]):
        np.add.at(size, parent_pos[rows], size[rows])
    # sizes of the earlier siblings: exclusive cumulative sums within each parent's group
    group = np.where((depth == 0) | ~known, n, parent_pos)
    by_group = np.argsort(group, kind="stable")
    sorted_sizes = size[by_group]
    before = np.cumsum(sorted_sizes) - sorted_sizes
    sorted_group = group[by_group]
    starts = np.r_[True, sorted_group[1:] != sorted_group[:-1]]
    first = np.maximum.accumulate(np.where(starts, np.arange(n), 0))
    offset = np.empty(n, dtype=np.int64)
    offset[by_group] = before - before[first]
    number = np.full(n, n, dtype=np.int64)  # unknown depth: after everything
    if levels:
        number[levels[0]] = offset[levels[0]]
    for rows in levels[1:]:
        number[rows] = number[parent_pos[rows]] + 1 + offset[rows]
    return np.argsort(number, kind="stable")


class ElementPicker(widgets.VBox):  # type: ignore[misc]  # VBox is Any: ipywidgets has no types
    """Pick elements of a system's tree.

    Parameters
    ----------
    client : Client
        A connected client; the tree is read once with ``client.read_tree(system)``.
    system : str
        The system whose tree is shown.
    max_shown : int, default 500
        The most rows the list shows; narrower filters show the rest.
    tree : pandas.DataFrame, optional
        A tree frame already read (``read_tree``); then nothing is fetched.

    Attributes
    ----------
    selection : tuple of str
        The selected ids (a traitlet: ``picker.observe(fn, "selection")``).
    tree : pandas.DataFrame
        The system's tree as read.

    Examples
    --------
    >>> picker = ElementPicker(client, "DWH")
    >>> picker.type_filter.value = "HUB"
    >>> picker.select_shown()
    >>> len(picker.selected)  # the ids of every hub
    18
    """

    selection = traitlets.Tuple()

    def __init__(
        self,
        client: Any,
        system: str,
        *,
        max_shown: int = 500,
        tree: pd.DataFrame | None = None,
    ) -> None:
        if isinstance(max_shown, bool) or not isinstance(max_shown, int) or max_shown < 1:
            raise InvalidArgumentError(f"max_shown must be a positive integer, got {max_shown!r}")
        self.client = client
        self.system = system
        self.max_shown = max_shown
        self.tree = client.read_tree(system) if tree is None else tree
        self._index_tree()
        self._make_controls()
        self.type_filter.observe(self._on_filter, "value")
        self.search.observe(self._on_filter, "value")
        self.list.observe(self._on_list, "value")
        self.select_shown_button.on_click(lambda _: self.select_shown())
        self.clear_button.on_click(lambda _: self.clear())
        super().__init__(
            children=[
                widgets.HBox([self.type_filter, self.search]),
                widgets.HBox([self.select_shown_button, self.clear_button, self.count]),
                self.list,
                self.hint,
            ]
        )
        self.add_class("mdd-picker")
        self._apply_filter()

    def _index_tree(self) -> None:
        """The tree's columns in display order, and the state of the selection."""

        def column(name: str) -> np.ndarray:
            return self.tree[name].astype(object).where(self.tree[name].notna(), "").to_numpy()

        ids = self.tree["id"].astype(str).to_numpy(dtype=object)
        parent_pos = pd.Index(ids).get_indexer(self.tree["parent_id"].astype(object))
        depth = self.tree["depth"].fillna(-1).to_numpy(dtype=np.int64)
        order = _display_order(parent_pos, depth)
        self._ids = ids[order]
        self._types = column("type")[order]
        self._names = column("name")[order]
        self._paths = column("path")[order]
        self._depths = np.maximum(depth, 0)[order]
        self._haystack = pd.Series(self._paths, dtype="string").str.lower()
        self._known = set(self._ids)
        self._selected: dict[str, None] = {}  # insertion-ordered set
        self._shown = np.empty(0, dtype=object)
        self._matching = np.arange(len(self._ids))
        self._syncing = False

    def _make_controls(self) -> None:
        """The filter, search, buttons, list and labels (not yet observed)."""
        types = sorted(t for t in set(self._types) if t)
        self.type_filter = widgets.Dropdown(
            options=[("(all types)", ALL_TYPES), *[(t, t) for t in types]],
            value=ALL_TYPES,
            description="Type",
        )
        self.type_filter.add_class("mdd-picker-type")
        self.search = widgets.Text(
            placeholder="search name or path", description="Search", continuous_update=True
        )
        self.search.add_class("mdd-picker-search")
        self.select_shown_button = widgets.Button(
            description="Select shown",
            tooltip="Select every element the filter matches (also those beyond the list)",
        )
        self.select_shown_button.add_class("mdd-picker-select-shown")
        self.clear_button = widgets.Button(description="Clear", tooltip="Select nothing")
        self.clear_button.add_class("mdd-picker-clear")
        self.list = widgets.SelectMultiple(
            options=[], rows=12, layout=widgets.Layout(width="100%"), description=""
        )
        self.list.add_class("mdd-picker-list")
        self.count = widgets.Label()
        self.count.add_class("mdd-picker-count")
        self.hint = widgets.Label()
        self.hint.add_class("mdd-picker-hint")

    # -- public surface --

    @property
    def selected(self) -> list[str]:
        """The selected ids, in the order they were selected."""
        return list(self._selected)

    @property
    def selected_frame(self) -> pd.DataFrame:
        """The tree rows of the selected elements (in tree order)."""
        return self.tree[self.tree["id"].astype(str).isin(self._selected)]

    @property
    def matching(self) -> list[str]:
        """The ids the current filter matches (also those the list does not show)."""
        matching: list[str] = self._ids[self._matching].tolist()  # ids are str (see __init__)
        return matching

    def select(self, ids: Iterable[Any], *, add: bool = False) -> None:
        """Select elements by id.

        Parameters
        ----------
        ids : list, Series or DataFrame
            Ids of the system's elements (a frame needs an ``id`` column).
        add : bool, default False
            Add to the selection instead of replacing it.

        Raises
        ------
        InvalidArgumentError
            An id is not an element of the system (nothing is selected then).
        """
        wanted = id_list(ids, what="ElementPicker.select ids")
        unknown = [i for i in wanted if i not in self._known]
        if unknown:
            shown = ", ".join(repr(i) for i in unknown[:10])
            more = f" and {len(unknown) - 10} more" if len(unknown) > 10 else ""
            raise InvalidArgumentError(
                f"ElementPicker.select: not elements of system {self.system!r}: {shown}{more}"
            )
        if not add:
            self._selected.clear()
        self._selected.update(dict.fromkeys(wanted))
        self._publish_selection()

    def select_shown(self) -> None:
        """Add every element the filter matches to the selection."""
        self._selected.update(dict.fromkeys(self._ids[self._matching].tolist()))
        self._publish_selection()

    def clear(self) -> None:
        """Select nothing."""
        self._selected.clear()
        self._publish_selection()

    # -- filtering and syncing with the list --

    def _on_filter(self, _: Any = None) -> None:
        self._apply_filter()

    def _apply_filter(self) -> None:
        mask = np.ones(len(self._ids), dtype=bool)
        if self.type_filter.value != ALL_TYPES:
            mask &= self._types == self.type_filter.value
        query = self.search.value.strip().lower()
        if query:
            mask &= self._haystack.str.contains(query, regex=False).to_numpy(
                dtype=bool, na_value=False
            )
        self._matching = np.flatnonzero(mask)
        shown = self._matching[: self.max_shown]
        self._shown = self._ids[shown]
        self._syncing = True
        try:
            self.list.options = [(self._label(pos), self._ids[pos]) for pos in shown]
            self.list.value = tuple(i for i in self._shown if i in self._selected)
        finally:
            self._syncing = False
        matches = len(self._matching)
        if matches > self.max_shown:
            self.hint.value = (
                f"Showing the first {self.max_shown:,} of {matches:,} matching elements: "
                f"refine your filter ('Select shown' takes all {matches:,})."
            )
        else:
            self.hint.value = f"{matches:,} matching element(s)."
        self._update_count()

    def _label(self, pos: int) -> str:
        # built for the shown rows only: labels of 100,000 rows would cost more than the tree
        return (
            f"{_INDENT * int(self._depths[pos])}{self._names[pos]}  ·  {self._types[pos]}"
            f"  ·  {self._paths[pos]}"
        )

    def _on_list(self, change: dict[str, Any]) -> None:
        if self._syncing:
            return
        now = set(change["new"])
        for structure_id in self._shown:
            if structure_id in now:
                self._selected.setdefault(structure_id, None)
            else:
                self._selected.pop(structure_id, None)
        self._publish_selection(sync_list=False)

    def _publish_selection(self, *, sync_list: bool = True) -> None:
        if sync_list:
            self._syncing = True
            try:
                self.list.value = tuple(i for i in self._shown if i in self._selected)
            finally:
                self._syncing = False
        self._update_count()
        self.selection = tuple(self._selected)

    def _update_count(self) -> None:
        self.count.value = f"{len(self._selected):,} of {len(self._ids):,} selected"
