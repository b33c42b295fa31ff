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


def _display_order(tree: pd.DataFrame) -> np.ndarray:
    """Row positions in depth-first order, siblings by name (a tree read top-down)."""
    # "\x00" sorts before every character, so a parent's children follow it directly
    # (with "/" a sibling like "CRM-old" would sort between "CRM" and "CRM/...")
    key = tree["path"].astype("string").fillna("").str.replace("/", "\x00", regex=False)
    return np.argsort(key.to_numpy(dtype=object), kind="stable")


class ElementPicker(widgets.VBox):
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
    >>> picker.selected  # the ids of every hub
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
        order = _display_order(self.tree)
        ordered = self.tree.iloc[order]
        self._ids = ordered["id"].astype(str).to_numpy(dtype=object)
        self._types = ordered["type"].astype("string").fillna("").to_numpy(dtype=object)
        path = ordered["path"].astype("string").fillna("")
        self._haystack = path.str.lower().reset_index(drop=True)
        indent = pd.Series([_INDENT] * len(ordered), dtype=object).str.repeat(
            ordered["depth"].fillna(0).astype(int).to_numpy()
        )
        self._labels = (
            indent.to_numpy(dtype=object)
            + ordered["name"].astype("string").fillna("").to_numpy(dtype=object)
            + "  ·  "
            + self._types
            + "  ·  "
            + path.to_numpy(dtype=object)
        )
        self._known = set(self._ids)
        self._selected: dict[str, None] = {}  # insertion-ordered set
        self._shown = np.empty(0, dtype=object)
        self._matching = np.arange(len(self._ids))
        self._syncing = False

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
        return self._ids[self._matching].tolist()

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
            self.list.options = list(zip(self._labels[shown], self._shown, strict=True))
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
