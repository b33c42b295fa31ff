"""EditGrid and :func:`edit`: an editable grid over a table or mapping, a thin view of an
:class:`~mddframes.widgets.edit_model.EditModel`.

The grid is ipydatagrid's ``DataGrid`` (chosen over perspective and ipyaggrid: see
docs/internals.md), imported only when a grid is built, from the ``notebooks`` extra. It
shows one page of rows at a time as text (``page_size``, default 500), so a table of
200,000 rows opens as fast as a small one and the browser never holds all of it. Every
edit committed in the grid goes to the model by the row's index label and the column's
name (sorting or filtering the page in the grid changes nothing of what is written);
a cell the column cannot hold is put back at once and the refusal shown in words.

Beside the grid: the running diff (the model's changed cells), and after Preview the
write's own dry run (its diff and completeness check). Write is enabled once a Preview
of the edits as they are passed; it writes through ``write_table``/``write_mapping``.
"""

from __future__ import annotations

import html
import os
from collections.abc import Hashable
from typing import Any

import ipywidgets as widgets
import pandas as pd

from mddframes.codec.kinds import Kind
from mddframes.context import ATTRS_KEY
from mddframes.errors import InvalidArgumentError
from mddframes.widgets._panel import Panel
from mddframes.widgets.edit_model import EditModel, long_kind

#: The background of an edited cell.
HIGHLIGHT = "#fde68a"
_PLAIN = "#ffffff"


def _write_results(result: Any) -> list[Any]:
    """The WriteResults of a write: itself, or those of a long frame's batch."""
    if isinstance(result, pd.DataFrame):
        return list(result.attrs.get("results", {}).values())
    return [result]


def _datagrid() -> Any:
    try:
        import ipydatagrid
    except ImportError as exc:
        raise ImportError(
            "the editing grid needs ipydatagrid: pip install 'mddframes[notebooks]'"
        ) from exc
    return ipydatagrid


class EditGrid(Panel):
    """An editable grid of one table or mapping, with its diff, check and write.

    Parameters
    ----------
    client : Client
    object_id : str or None
        The table or mapping id; None for a long frame of ``read_tables`` or
        ``read_mappings``.
    frame : pandas.DataFrame, optional
        The frame as read; default: read now.
    kind : {"table", "mapping"}, optional
        Default: what the frame was read as.
    page_size : int, default 500
        Rows shown (and sent to the browser) at a time.
    backup_dir : path, optional
        Passed to the writer.

    Attributes
    ----------
    model : EditModel
        The edits; everything the buttons do, it does (scriptable and tested alone).
    grid : ipydatagrid.DataGrid
        The page of rows as text, editable.
    """

    def __init__(
        self,
        client: Any,
        object_id: str | None,
        frame: pd.DataFrame | None = None,
        *,
        kind: Kind | None = None,
        page_size: int = 500,
        backup_dir: str | os.PathLike[str] | None = None,
    ) -> None:
        if not isinstance(page_size, int) or page_size < 1:
            raise InvalidArgumentError(
                f"EditGrid: page_size must be a positive int, not {page_size!r}"
            )
        ipydatagrid = _datagrid()
        self.model = EditModel(client, object_id, frame, kind=kind, backup_dir=backup_dir)
        self.page_size = page_size
        self.page = 0
        self._labels: list[Hashable] = []
        self._syncing = False  # the grid's cells set from here, not typed
        self._reload_armed = False
        self.summary = widgets.HTML()
        self.summary.add_class("mdd-edit-summary")
        self.message = widgets.HTML()
        self.message.add_class("mdd-edit-message")
        self.grid = ipydatagrid.DataGrid(
            self._page_frame(),
            editable=True,
            selection_mode="cell",
            base_column_size=130,
            layout=widgets.Layout(height="340px", width="100%"),
        )
        self.grid.add_class("mdd-edit-grid")
        self.grid.on_cell_change(self._on_cell_change)
        self.grid.observe(lambda _: self._paint(), "_visible_rows")
        self.previous_button = widgets.Button(description="Previous rows", icon="arrow-left")
        self.next_button = widgets.Button(description="Next rows", icon="arrow-right")
        self.page_label = widgets.Label()
        self.page_label.add_class("mdd-edit-page")
        self.previous_button.on_click(lambda _: self.show_page(self.page - 1))
        self.next_button.on_click(lambda _: self.show_page(self.page + 1))
        self.changes_output = widgets.Output(
            layout=widgets.Layout(max_height="220px", overflow="auto")
        )
        self.changes_output.add_class("mdd-edit-changes")
        self.check_output = widgets.Output(
            layout=widgets.Layout(max_height="260px", overflow="auto")
        )
        self.check_output.add_class("mdd-edit-check")
        buttons = self._make_buttons()
        side = widgets.VBox(
            [
                widgets.HTML("<b>Edited cells</b>"),
                self.changes_output,
                widgets.HTML("<b>Preview: the write's diff and check</b>"),
                self.check_output,
            ],
            layout=widgets.Layout(width="38%", margin="0 0 0 8px"),
        )
        main = widgets.VBox(
            [self.grid, widgets.HBox([self.previous_button, self.next_button, self.page_label])],
            layout=widgets.Layout(width="62%"),
        )
        super().__init__(
            [self.summary, widgets.HBox([main, side]), buttons, self.message],
            css_class="mdd-edit-panel",
        )
        self._refresh()

    def _make_buttons(self) -> widgets.HBox:
        """The action buttons, wired to their handlers, in one row."""
        self.preview_button = widgets.Button(description="Preview", icon="search")
        self.write_button = widgets.Button(
            description="Write", button_style="danger", icon="upload"
        )
        self.revert_cell_button = widgets.Button(description="Revert cell")
        self.revert_all_button = widgets.Button(description="Revert all")
        self.undo_button = widgets.Button(description="Undo", icon="undo")
        self.reload_button = widgets.Button(description="Reload", icon="refresh")
        for name, button in [
            ("preview", self.preview_button),
            ("write", self.write_button),
            ("revert-cell", self.revert_cell_button),
            ("revert-all", self.revert_all_button),
            ("undo", self.undo_button),
            ("reload", self.reload_button),
        ]:
            button.add_class(f"mdd-edit-{name}")
        self._click_runs(self.preview_button, self.preview)
        self._click_runs(self.write_button, self.run)
        self._click_rereads(self.revert_cell_button, self.revert_selected, "Revert cell")
        self._click_rereads(self.revert_all_button, self.revert_all, "Revert all")
        self._click_rereads(self.undo_button, self.undo, "Undo")
        self._click_rereads(self.reload_button, self._reload_clicked, "Reload")
        return widgets.HBox(
            [
                self.preview_button,
                self.write_button,
                self.undo_button,
                self.revert_cell_button,
                self.revert_all_button,
                self.reload_button,
            ]
        )

    # -- the page --

    def _page_frame(self) -> pd.DataFrame:
        index = self.model.frame.index
        pages = max(1, -(-len(index) // self.page_size))
        self.page = min(max(self.page, 0), pages - 1)
        rows = index[self.page * self.page_size : (self.page + 1) * self.page_size]
        self._labels = list(rows)
        return self.model.texts(rows)

    def show_page(self, page: int) -> None:
        """Show a page of rows.

        Parameters
        ----------
        page : int
            From 0; clipped to the pages there are.
        """
        self.page = page
        self._syncing = True
        try:
            self.grid.data = self._page_frame()
        finally:
            self._syncing = False
        self._refresh()

    def _view_rows(self) -> dict[int, int]:
        """Page position -> row shown in the grid (sorting and filtering move rows)."""
        visible = list(getattr(self.grid, "_visible_rows", None) or [])
        if not visible:
            return {i: i for i in range(len(self._labels))}
        return {int(position): shown for shown, position in enumerate(visible)}

    def _paint(self) -> None:
        """Highlight the edited cells of the page (a renderer per column that has one)."""
        ipydatagrid = _datagrid()
        on_page = {label: i for i, label in enumerate(self._labels)}
        view = self._view_rows()
        marked: dict[str, list[int]] = {}
        for label, column in self.model.changed:
            if label in on_page and on_page[label] in view:
                marked.setdefault(column, []).append(view[on_page[label]])
        renderers = {}
        for column, rows in marked.items():
            expression = f"indexof({sorted(rows)}, cell.row) >= 0 ? '{HIGHLIGHT}' : '{_PLAIN}'"
            renderers[column] = ipydatagrid.TextRenderer(
                background_color=ipydatagrid.VegaExpr(expression)
            )
        self.grid.renderers = renderers

    def _set_grid_cell(self, label: Hashable, column: str) -> None:
        """Show the model's value of a cell in the grid, if its row is on the page."""
        try:
            position = self._labels.index(label)
        except ValueError:
            return
        self._syncing = True
        try:
            self.grid.set_cell_value_by_index(column, position, self.model.text(label, column))
        finally:
            self._syncing = False

    # -- edits --

    def _on_cell_change(self, change: dict[str, Any]) -> None:
        if self._syncing or not 0 <= int(change["row"]) < len(self._labels):
            return
        label, column = self._labels[int(change["row"])], str(change["column"])
        try:
            changed = self.model.set_cell(label, column, change["value"])
        except InvalidArgumentError as exc:
            self._tell(str(exc), error=True)
            self._set_grid_cell(label, column)  # the refused text is not left standing
            return
        if change["value"] != self.model.text(label, column):
            self._set_grid_cell(label, column)  # shown as it will be written: "1.50" is 1.5
        if changed:
            self._tell("")
        self._refresh()

    def edit(self, row: Hashable, column: str, text: Any) -> bool:
        """Type ``text`` into a cell, as the grid does.

        Parameters
        ----------
        row : hashable
            The row's index label.
        column : str
            The column's name.
        text : object
            Text as typed in the grid (or a Python value).

        Returns
        -------
        bool
            True when the cell changed.

        Raises
        ------
        InvalidArgumentError
            The column cannot hold the value; the grid still shows the cell's value.
        """
        changed = self.model.set_cell(row, column, text)
        self._set_grid_cell(row, column)
        self._refresh()
        return changed

    def undo(self) -> None:
        """Undo the last edit step."""
        self._show_cells([(e.row, e.column) for e in self.model.undo()])

    def revert_all(self) -> None:
        """Put every edited cell back as read (undoable)."""
        self._show_cells(self.model.revert_all())

    def revert_selected(self) -> None:
        """Put the cells selected in the grid back as read (undoable, one by one)."""
        view = {shown: position for position, shown in self._view_rows().items()}
        columns = [str(c) for c in self.model.frame.columns]
        cells = []
        for cell in self.grid.selected_cells:
            position = view.get(int(cell["r"]))
            if position is not None and 0 <= int(cell["c"]) < len(columns):
                cells.append((self._labels[position], str(columns[int(cell["c"])])))
        if not cells:
            self._tell("Select an edited cell in the grid first.", error=True)
            return
        self._show_cells([c for c in cells if self.model.revert_cell(*c)])

    def _show_cells(self, cells: list[tuple[Hashable, str]]) -> None:
        for label, column in cells:
            self._set_grid_cell(label, column)
        self._tell("")
        self._refresh()

    def _reload_clicked(self) -> None:
        if self.model.dirty and not self._reload_armed:
            self._reload_armed = True
            self._tell(
                f"{len(self.model.changed)} edited cell(s) are not written: Reload would drop "
                "them. Write or revert them, or click Reload again to drop them.",
                error=True,
            )
            return
        self.reload(discard=self._reload_armed)

    def reload(self, *, discard: bool = False) -> None:
        """Read the object again.

        Parameters
        ----------
        discard : bool, default False
            Drop unsaved edits; without it a reload with unsaved edits is refused
            (:class:`~mddframes.errors.InvalidArgumentError`).
        """
        self._reload_armed = False
        self.model.reload(discard=discard)
        self.check_output.outputs = ()
        self.show_page(self.page)
        self._tell("Read again from the service.")

    # -- preview and write --

    def preview(self) -> Any:
        """The write's own dry run of the edits, shown beside the grid.

        Returns
        -------
        WriteResult
        """
        return self._run_work(
            f"Preview of {self.model.what}",
            self.model.preview,
            self._show_preview,
        )

    def _show_preview(self, result: Any) -> None:
        self.check_output.outputs = ()
        results = _write_results(result)
        changed = [r for r in results if not r.diff.empty]
        what = "; ".join(f"{r.object_id}: {r.diff.summary}" for r in changed) or "no change"
        checks = "; ".join(r.report.summary for r in results)
        self.check_output.append_stdout(f"{what}. Check: {checks}.\n")
        for written in changed:
            self.check_output.append_display_data(written.diff)
            self.check_output.append_display_data(written.report)
        self._say(f"Preview: {what}; nothing was sent. Write sends exactly this.")

    def run(self) -> Any:
        """Write the edits, as the Write button does (after a Preview of them passed).

        Returns
        -------
        WriteResult

        Raises
        ------
        InvalidArgumentError
            No Preview passed for the edits as they are now.
        """
        return self._run_work(
            f"Writing {self.model.what}",
            self._checked_write,
            self._show_written,
        )

    def _checked_write(self) -> Any:
        if not self.model.previewed:
            raise InvalidArgumentError("press Preview first: Write sends what the Preview showed")
        return self.model.write()

    def _show_written(self, result: Any) -> None:
        for written in _write_results(result):
            if written.status == "written":
                self._say(
                    f"{written.kind} {written.object_id!r}: {written.status}; "
                    f"verified={written.verified}; backup: {written.backup}\n"
                    f"To undo it: client.restore({str(written.backup)!r})"
                )
        self.check_output.outputs = ()
        self._refresh()

    # -- state shown --

    def _tell(self, text: str, *, error: bool = False) -> None:
        colour = "#b91c1c" if error else "inherit"
        self.message.value = (
            f'<span style="color:{colour}">{html.escape(text)}</span>' if text else ""
        )

    def _refresh(self) -> None:
        model = self.model
        total = len(model.frame)
        first = self.page * self.page_size
        self.page_label.value = (
            f"rows {min(first + 1, total):,}-{min(first + self.page_size, total):,} of {total:,}"
        )
        state = f"{len(model.changed)} edited cell(s), not written" if model.dirty else "no edits"
        self.summary.value = f"<b>{html.escape(model.what)}</b>: {state}"
        self.changes_output.outputs = ()
        if model.dirty:
            self.changes_output.append_display_data(model.changes())
        self._paint()
        self._refresh_buttons()

    def _refresh_buttons(self) -> None:
        if not hasattr(self, "write_button"):
            return
        busy, model = self.busy, self.model
        self.previous_button.disabled = self.page == 0
        self.next_button.disabled = (self.page + 1) * self.page_size >= len(model.frame)
        self.preview_button.disabled = busy or not model.dirty
        self.write_button.disabled = busy or not (model.dirty and model.previewed)
        self.undo_button.disabled = busy or not model.can_undo
        self.revert_all_button.disabled = busy or not model.dirty
        self.revert_cell_button.disabled = busy or not model.dirty
        self.reload_button.disabled = busy


def edit(
    client: Any,
    table: str | pd.DataFrame,
    *,
    kind: Kind | None = None,
    page_size: int = 500,
    backup_dir: str | os.PathLike[str] | None = None,
) -> EditGrid:
    """An editable grid of a table or mapping: type, see the diff, Preview, Write.

    Parameters
    ----------
    client : Client
    table : str or pandas.DataFrame
        A table or mapping id (read now), or a frame read through ``client``
        (``read_table``/``read_mapping``, which names its object, or a long frame of
        ``read_tables``/``read_mappings``, written by ``write_tables``/``write_mappings``).
    kind : {"table", "mapping"}, optional
        For an id: default ``"table"``. For a frame: what it was read as.
    page_size : int, default 500
        Rows shown at a time.
    backup_dir : path, optional
        Passed to the writer.

    Returns
    -------
    EditGrid

    Raises
    ------
    InvalidArgumentError
        A frame that carries no read context (it names no object).

    Examples
    --------
    >>> grid = edit(client, "tbl-0109")  # in a notebook: type into cells, Preview, Write
    >>> grid.edit(56, "name", "Deutschland")  # or script it: the same model
    True
    """
    if isinstance(table, pd.DataFrame):
        if long_kind(table) is not None:
            return EditGrid(client, None, table, page_size=page_size, backup_dir=backup_dir)
        context = table.attrs.get(ATTRS_KEY)
        object_id = getattr(context, "object_id", None)
        if object_id is None:
            raise InvalidArgumentError(
                "edit: the frame carries no read context, so it names no table or mapping; "
                "pass the id too: EditGrid(client, object_id, frame)"
            )
        return EditGrid(
            client, object_id, table, kind=kind, page_size=page_size, backup_dir=backup_dir
        )
    return EditGrid(client, table, kind=kind, page_size=page_size, backup_dir=backup_dir)
