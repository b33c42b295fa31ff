"""WriteReview: see what a write would change and what the check says, then write.

On creation it runs the writer as a dry run (``write_table``/``write_mapping`` with
``dry_run=True``: the full payload is built and checked, nothing is sent) and shows the
diff beside the check report. "Write" is enabled only when the check found no error, the
edit changes something, and the reviewer ticked the confirm box.

It also reads the write journal (:mod:`mddframes.writing.recovery`): when the object belongs to
a bulk write that did not finish (a crash, a failure), the summary names the batch and
how to finish or undo it, since writing the object now would make that batch refuse it.
After the write it says where the backup is and how to put it back.
"""

from __future__ import annotations

import html
import os
from typing import Any

import ipywidgets as widgets
import pandas as pd

from mddframes.codec.kinds import KINDS, Kind
from mddframes.context import ATTRS_KEY
from mddframes.errors import IncompletePayloadError, InvalidArgumentError, MddError
from mddframes.widgets._messages import describe_error
from mddframes.widgets._panel import Panel
from mddframes.writing.journal_file import read_journal


def kind_of(client: Any, object_id: str, frame: pd.DataFrame) -> str:
    """Whether ``frame`` of ``object_id`` is a table or a mapping (its read context, else
    the reads this client holds)."""
    # a polars frame has no attrs: its kind comes from the client's registry
    attrs = getattr(frame, "attrs", None)
    attached = getattr(attrs.get(ATTRS_KEY), "kind", None) if isinstance(attrs, dict) else None
    if attached in KINDS:
        return str(attached)
    registry = client.contexts
    found = [kind for kind in KINDS if registry.get(kind, object_id) is not None]
    if len(found) == 1:
        return found[0]
    raise InvalidArgumentError(
        f"WriteReview: cannot tell whether {object_id!r} is a table or a mapping "
        "(the frame carries no read context and this client holds no read of it): pass "
        "kind='table' or kind='mapping'"
    )


class WriteReview(Panel):
    """Review a table's or a mapping's edit (diff and check report), then write it.

    Parameters
    ----------
    client : Client
    object_id : str
        The table or mapping id.
    frame : pandas.DataFrame
        The edited frame (from ``read_table``/``read_mapping``).
    kind : {"table", "mapping"}, optional
        Default: what the frame was read as.
    allow_deletes : bool, default False
        Passed to the writer (rows deleted from the frame need it).
    backup_dir : path, optional
        Passed to the writer.

    Attributes
    ----------
    dry_run : WriteResult or None
        The dry run's result (None when the check or a concurrent change refused it).
    refusal : Exception or None
        Why the dry run was refused.
    unfinished : list of str
        The unfinished bulk-write batches (``client.pending_writes``) that include this
        object, oldest first; named in the summary.
    confirm : ipywidgets.Checkbox
    button : ipywidgets.Button
        "Write", enabled when the dry run passed, changes something, and confirm is ticked.
    """

    def __init__(
        self,
        client: Any,
        object_id: str,
        frame: pd.DataFrame,
        *,
        kind: Kind | None = None,
        allow_deletes: bool = False,
        backup_dir: str | os.PathLike[str] | None = None,
    ) -> None:
        if kind is not None and kind not in KINDS:
            raise InvalidArgumentError(
                f"WriteReview: kind must be 'table' or 'mapping', not {kind!r}"
            )
        self.client = client
        self.object_id = str(object_id)
        self.frame = frame
        self.kind = kind or kind_of(client, self.object_id, frame)
        self.allow_deletes = allow_deletes
        self.backup_dir = backup_dir
        self.dry_run: Any = None
        self.refusal: Exception | None = None
        self.unfinished: list[str] = []
        self.summary = widgets.HTML()
        self.diff_output = widgets.Output(layout=widgets.Layout(width="50%"))
        self.diff_output.add_class("mdd-review-diff")
        self.report_output = widgets.Output(layout=widgets.Layout(width="50%"))
        self.report_output.add_class("mdd-review-report")
        self.confirm = widgets.Checkbox(description="I reviewed the diff", indent=False)
        self.confirm.add_class("mdd-review-confirm")
        self.button = widgets.Button(description="Write", button_style="danger", icon="upload")
        self.button.add_class("mdd-review-write")
        self.recheck_button = widgets.Button(description="Check again")
        super().__init__(
            [
                self.summary,
                widgets.HBox([self.diff_output, self.report_output]),
                widgets.HBox([self.confirm, self.button, self.recheck_button]),
            ],
            css_class="mdd-write-review",
        )
        self.confirm.observe(lambda _: self._refresh_buttons(), "value")
        self._click_runs(self.button, self.run)
        self.recheck_button.on_click(lambda _: self.review())
        self.review()

    def _write(self, **options: Any) -> Any:
        writer = self.client.write_table if self.kind == "table" else self.client.write_mapping
        return writer(
            self.object_id,
            self.frame,
            allow_deletes=self.allow_deletes,
            backup_dir=self.backup_dir,
            **options,
        )

    def review(self) -> Any:
        """Run the dry run again and show its diff and check report.

        Returns
        -------
        WriteResult or None
            The dry run's result, or None when it was refused (see ``refusal``).
        """
        self.dry_run, self.refusal = None, None
        self.diff_output.outputs = ()
        self.report_output.outputs = ()
        self.confirm.value = False
        label = f"{self.kind} {self.object_id!r}"
        try:
            self.dry_run = self._write(dry_run=True)
        except IncompletePayloadError as exc:
            self.refusal = exc
            self.summary.value = (
                f"<b>{label}</b>: the check found errors; nothing can be sent until they are fixed."
            )
            self.report_output.append_display_data(exc.report)
        except Exception as exc:  # shown in words, never lost
            self.refusal = exc
            self.summary.value = f"<b>{label}</b>: the dry run was refused."
            self.report_output.append_stderr(describe_error(f"The dry run of {label}", exc))
        else:
            diff, report = self.dry_run.diff, self.dry_run.report
            what = "no change" if diff.empty else diff.summary
            self.summary.value = f"<b>{label}</b>: {what}. Check: {report.summary}."
            self.diff_output.append_display_data(diff)
            self.report_output.append_display_data(report)
        self.summary.value += self._journal_note()
        self._refresh_buttons()
        return self.dry_run

    def _journal_note(self) -> str:
        """The unfinished bulk writes that include this object, in words (HTML)."""
        self.unfinished = []
        try:
            pending = self.client.pending_writes(backup_dir=self.backup_dir)
            for batch, path in zip(pending["batch"], pending["journal"], strict=True):
                journal = read_journal(path)
                if journal is not None and any(
                    item.kind == self.kind and item.id == self.object_id for item in journal.objects
                ):
                    self.unfinished.append(str(batch))
        except MddError as exc:  # a damaged journal: say so, the review itself still works
            return f"<br>Write journal: {html.escape(exc.message)}"
        if not self.unfinished:
            return ""
        last = html.escape(repr(self.unfinished[-1]))
        names = ", ".join(html.escape(b) for b in self.unfinished)
        return (
            f"<br><b>Unfinished bulk write</b>: this {self.kind} is in batch {names} (see "
            f"<code>client.pending_writes()</code>). Finish it with "
            f"<code>client.resume({last})</code> or undo it with "
            f"<code>client.roll_back({last})</code> first: once this write changes the "
            f"{self.kind}, the batch refuses it."
        )

    @property
    def writable(self) -> bool:
        """True when the dry run passed and changes something."""
        return self.dry_run is not None and not self.dry_run.diff.empty

    def _refresh_buttons(self) -> None:
        self.button.disabled = self.busy or not (self.writable and self.confirm.value)

    def run(self) -> Any:
        """Write the frame, as the Write button does (only once confirmed).

        Returns
        -------
        WriteResult
            ``verified`` and ``backup`` say what happened.

        Raises
        ------
        InvalidArgumentError
            The dry run was refused, changes nothing, or ``confirm`` is not ticked.
        """
        return self._run_work(
            f"Writing {self.kind} {self.object_id!r}", self._checked_write, self._show_written
        )

    def _checked_write(self) -> Any:
        if self.dry_run is None:
            raise InvalidArgumentError(f"the dry run was refused ({self.refusal}); nothing is sent")
        if self.dry_run.diff.empty:
            raise InvalidArgumentError("the edit changes nothing; nothing is sent")
        if not self.confirm.value:
            raise InvalidArgumentError("tick 'I reviewed the diff' first")
        result = self._write()
        self._on_progress(1, 1)
        return result

    def _show_written(self, result: Any) -> None:
        self._say(
            f"{self.kind} {self.object_id!r}: {result.status}; verified={result.verified}; "
            f"backup: {result.backup}\n"
            f"To undo it: client.restore({str(result.backup)!r}). Bulk writes "
            "(write_tables, write_mappings, restore_backups) also keep a journal per batch "
            "in the backup folder: client.pending_writes() lists those that did not finish, "
            "client.resume(batch) / client.roll_back(batch) finish or undo them."
        )
        self.confirm.value = False
