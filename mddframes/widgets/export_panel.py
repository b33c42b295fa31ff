"""ExportPanel: pick elements and an object type, export their scripts.

The button runs :meth:`ExportPanel.run`, which calls ``client.export_batch`` (one zip
through an asynchronous task, with the single-export fallback of an older service) or
``client.export_scripts`` (one file per element), both tested on their own.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import ipywidgets as widgets
import pandas as pd

from mddframes.archive import ExportArchive
from mddframes.errors import ExportTimeoutError, InvalidArgumentError
from mddframes.exports import ExportTask, Script
from mddframes.widgets._panel import Panel
from mddframes.widgets.picker import ElementPicker

BATCH = "batch"
SINGLE = "single"


def covering_object_types(object_types: pd.DataFrame, element_types: set[str]) -> pd.DataFrame:
    """The object types whose element types include every one of ``element_types``.

    Parameters
    ----------
    object_types : pandas.DataFrame
        From ``client.read_object_types()`` (``id``, ``name``, ``element_types``).
    element_types : set of str
        The types of the selected elements (empty: every object type qualifies).

    Returns
    -------
    pandas.DataFrame
        The qualifying rows, in the service's order.
    """
    if not element_types:
        return object_types
    served = object_types["element_types"].map(
        lambda types: isinstance(types, list | tuple) and element_types <= set(types)
    )
    return object_types[served.astype(bool)]


class ExportPanel(Panel):
    """Export the scripts of picked elements, as one zip or as single files.

    Parameters
    ----------
    client : Client
    system : str
        The system whose elements are offered.
    dest : path, default "."
        The folder the zip (``export-<task id>.zip``) or the single files go to.
    timeout : float, optional
        Seconds to wait for a batch task before offering to re-attach; None waits as
        long as it takes.
    poll_interval : float, default 0.5
        The first wait between status polls of a batch task (it grows up to 5 s).
    picker : ElementPicker, optional
        A picker to reuse (default: a new one over ``system``).

    Attributes
    ----------
    picker : ElementPicker
    object_type : ipywidgets.Dropdown
        Value: the object type id; offers only object types that serve every selected
        element's type.
    mode : ipywidgets.ToggleButtons
        ``"batch"`` (one zip through a task) or ``"single"`` (one file per element).
    button, reattach_button : ipywidgets.Button
    pending_task_id : str or None
        The task that timed out, to re-attach to.
    """

    def __init__(
        self,
        client: Any,
        system: str,
        *,
        dest: str | os.PathLike[str] = ".",
        timeout: float | None = None,
        poll_interval: float = 0.5,
        picker: ElementPicker | None = None,
    ) -> None:
        self.client = client
        self.system = system
        self.dest = Path(dest)
        self.timeout = timeout
        self.poll_interval = poll_interval
        self.picker = picker if picker is not None else ElementPicker(client, system)
        self.object_types = client.read_object_types()
        self.pending_task_id: str | None = None
        self._pending_ids: list[str] = []

        self.object_type = widgets.Dropdown(description="Object type", options=[])
        self.object_type.add_class("mdd-export-object-type")
        self.mode = widgets.ToggleButtons(
            options=[("one zip (batch task)", BATCH), ("single files", SINGLE)], value=BATCH
        )
        self.mode.style.button_width = "auto"  # the labels are longer than the default width
        self.mode.add_class("mdd-export-mode")
        self.button = widgets.Button(description="Export", button_style="primary", icon="download")
        self.button.add_class("mdd-export-button")
        self.reattach_button = widgets.Button(
            description="Re-attach", layout=widgets.Layout(display="none")
        )
        self.reattach_button.add_class("mdd-export-reattach")
        self.coverage = widgets.Label()
        super().__init__(
            [
                self.picker,
                widgets.HBox([self.object_type, self.coverage]),
                self.mode,
                widgets.HBox([self.button, self.reattach_button]),
            ],
            css_class="mdd-export-panel",
        )
        self.picker.observe(self._on_selection, "selection")
        self._click_runs(self.button, self.run)
        self._click_runs(self.reattach_button, self.reattach)
        self._on_selection()

    def _on_selection(self, _: Any = None) -> None:
        types = set(self.picker.selected_frame["type"].dropna().astype(str))
        eligible = covering_object_types(self.object_types, types)
        options = list(zip(eligible["name"].astype(str), eligible["id"].astype(str), strict=True))
        current = self.object_type.value
        self.object_type.options = options
        values = [value for _, value in options]
        if values:
            self.object_type.value = current if current in values else values[0]
        if types and not options:
            self.coverage.value = f"No object type serves all of: {', '.join(sorted(types))}"
        else:
            self.coverage.value = ""
        self._refresh_buttons()

    def _refresh_buttons(self) -> None:
        self.button.disabled = (
            self.busy or not self.picker.selected or self.object_type.value is None
        )

    def run(self) -> ExportArchive | pd.DataFrame:
        """Export the selected elements, as the Export button does.

        Returns
        -------
        ExportArchive or pandas.DataFrame
            The zip (batch mode) or the files frame of ``client.export_scripts``
            (single mode).

        Raises
        ------
        InvalidArgumentError
            Nothing is selected, or no object type is chosen.
        ExportTimeoutError
            The batch task outlived ``timeout``; ``reattach()`` waits for it again.
        MddError
            What the export raised (also written into the Output in words).
        """
        ids = self.picker.selected
        object_type = self.object_type.value
        action = f"Export of {len(ids)} element(s) as {object_type!r}"
        if self.mode.value == BATCH:
            return self._run_work(action, lambda: self._batch(ids, object_type), self._show_zip)
        return self._run_work(action, lambda: self._single(ids, object_type), self._show_files)

    def reattach(self) -> ExportArchive:
        """Wait again for the batch task that timed out, then download its zip.

        Returns
        -------
        ExportArchive

        Raises
        ------
        InvalidArgumentError
            No task timed out.
        """
        task_id = self.pending_task_id
        if task_id is None:
            raise InvalidArgumentError("ExportPanel.reattach: no export task timed out")
        task = self.client.export_task(task_id)
        task.structure_ids = self._pending_ids or None  # makes files() name each element
        return self._run_work(
            f"Re-attaching to export task {task_id}", lambda: self._finish(task), self._show_zip
        )

    def _check_inputs(self, ids: list[str], object_type: Any) -> None:
        if not ids:
            raise InvalidArgumentError("no elements are selected: pick some in the list first")
        if object_type is None:
            raise InvalidArgumentError(
                "no object type is chosen (none serves every selected element's type)"
            )

    def _batch(self, ids: list[str], object_type: str) -> ExportArchive:
        self._check_inputs(ids, object_type)
        self.dest.mkdir(parents=True, exist_ok=True)
        self.pending_task_id = None
        self.reattach_button.layout.display = "none"
        try:
            archive: ExportArchive = self.client.export_batch(
                ids,
                object_type,
                self.dest,
                timeout=self.timeout,
                poll_interval=self.poll_interval,
                progress=False,
                on_progress=self._on_progress,
            )
        except ExportTimeoutError as exc:
            self._offer_reattach(exc.task_id, ids)
            raise
        return archive

    def _finish(self, task: ExportTask) -> ExportArchive:
        try:
            task.wait(
                self.timeout,
                poll_interval=self.poll_interval,
                progress=False,
                on_progress=self._on_progress,
            )
        except ExportTimeoutError:
            self._offer_reattach(task.task_id, self._pending_ids)
            raise
        self.pending_task_id = None
        self.reattach_button.layout.display = "none"
        return task.download(self.dest)

    def _offer_reattach(self, task_id: str, ids: list[str]) -> None:
        self.pending_task_id = task_id
        self._pending_ids = list(ids)
        self.reattach_button.layout.display = None
        self.reattach_button.tooltip = f"Wait again for export task {task_id}"

    def _single(self, ids: list[str], object_type: str) -> pd.DataFrame:
        self._check_inputs(ids, object_type)
        scripts: pd.DataFrame = self.client.export_scripts(
            ids, object_type, self.dest, progress=False, on_progress=self._on_progress
        )
        return scripts

    def _show_zip(self, archive: ExportArchive) -> None:
        files = archive.list_files()
        origin = f"task {archive.task_id}" if archive.task_id else "single exports (fallback)"
        self.progress.value = self.progress.max
        self._say(f"Wrote {archive.path} with {len(files)} file(s) from {origin}.")
        self._show(files)
        if len(files):
            name = str(files["name"].iloc[0])
            self._show(Script(file_name=name, text=archive.read_text(name)))

    def _show_files(self, files: pd.DataFrame) -> None:
        failed = int((~files["ok"].fillna(False)).sum())
        self._say(
            f"Wrote {len(files) - failed} file(s) to {self.dest}"
            + (f"; {failed} failed (see the 'error' column)." if failed else ".")
        )
        self._show(files)
        written = files[files["ok"].fillna(False)]
        if len(written):
            first = written.iloc[0]
            text = Path(str(first["path"])).read_text(encoding="utf-8")
            self._show(Script(file_name=str(first["file_name"]), text=text))
