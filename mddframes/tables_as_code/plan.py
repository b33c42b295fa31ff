"""``plan``: compare a tables-as-code folder with what the service holds, send nothing.

For each object file: read it (:mod:`.files`), read what the service holds now, and
dry-run the safe writer (:func:`mddframes.writing.write_table` / ``write_mapping``)
with the file's rows overlaid on that content: the writer's own overlay, completeness
check and diff decide, so the plan shows exactly what ``apply`` would send. The file
is the desired state: a cell that differs from the service is a change, whoever made
the difference.

The plan file (``mddframes-plan/1``, JSON)::

    {"format": "mddframes-plan/1", "createdAt": ..., "tenant": ..., "folder": <the
     folder, relative to the plan file>, "allowDeletes": false,
     "objects": [{"kind", "id", "file", "status", "changedCells", "addedRows",
                  "deletedRows", "before", "after", "files", "detail", "notes",
                  "changes": [...], "problems": [...]}]}

``status`` is unchanged, changes, refused (the check found errors, or a file names an
object twice) or failed (a file that does not parse, an object the service does not
have). ``before`` is the digest (:func:`mddframes.codec.values.digest`) of what the
service held, ``after`` of the payload to send, ``files`` the digest of the object's
files: ``apply`` refuses an object whose service content or files no longer match.
``changes`` and ``problems`` (the first :data:`DETAIL_LIMIT` diff lines and check
errors) are for reading; values there are shown, not sent.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from mddframes.bulk import run_bulk
from mddframes.codec.frame import payload_rows
from mddframes.codec.values import ABSENT, JsonObject, digest
from mddframes.doc_sections import documented
from mddframes.errors import (
    ConcurrentModificationError,
    DataShapeError,
    IncompletePayloadError,
    InvalidArgumentError,
    MddError,
    WriteRefusedError,
)
from mddframes.tables_as_code.csvedits import resaved_note
from mddframes.tables_as_code.files import ObjectFile, read_object
from mddframes.tables_as_code.folder import object_files
from mddframes.writing import write_mapping, write_table

if TYPE_CHECKING:
    from mddframes.api import Api

#: The format tag of plan files.
PLAN_FORMAT = "mddframes-plan/1"
#: How many diff lines and check errors a plan keeps per object, for reading.
DETAIL_LIMIT = 50
#: How many objects a plan's repr names (``plan.frame`` has them all).
REPR_LIMIT = 20
#: The columns of :meth:`Plan.frame`.
PLAN_COLUMNS = (
    "kind", "id", "file", "status", "changed_cells", "added_rows", "deleted_rows", "detail",
)  # fmt: skip

EXIT_NO_CHANGES, EXIT_REFUSED, EXIT_CHANGES = 0, 1, 2


@dataclass
class PlannedObject:
    """The plan of one object file (fields as in the module docstring)."""

    kind: str
    id: str
    file: str
    status: str
    changedCells: int = 0  # noqa: N815 - the plan file's own field names
    addedRows: int = 0  # noqa: N815
    deletedRows: int = 0  # noqa: N815
    before: str | None = None
    after: str | None = None
    files: str | None = None
    detail: str = ""
    notes: list[str] = field(default_factory=list)
    changes: list[dict[str, Any]] = field(default_factory=list)
    problems: list[dict[str, Any]] = field(default_factory=list)


@dataclass(repr=False)
class Plan:
    """What applying a folder would change, object by object.

    Attributes
    ----------
    folder : pathlib.Path
        The folder the plan was made from.
    objects : list of PlannedObject
    tenant : str or None
        The tenant it was compared with (``apply`` refuses another).
    allow_deletes : bool
        Whether deleted rows were allowed (else they are refused).
    created_at : str
        ISO time, UTC.
    """

    folder: Path
    objects: list[PlannedObject]
    tenant: str | None = None
    allow_deletes: bool = False
    created_at: str = field(
        default_factory=lambda: _dt.datetime.now(_dt.UTC).isoformat().replace("+00:00", "Z")
    )

    def __repr__(self) -> str:
        """A summary: a line for the plan, one per object to change (bounded)."""
        counts = ", ".join(f"{n} {status}" for status, n in sorted(self.counts.items()))
        lines = [
            f"<Plan of {len(self.objects)} object(s) in {str(self.folder)!r}"
            f" (tenant {self.tenant!r}): {counts or 'nothing'}; exit code {self.exit_code}>"
        ]
        shown = [o for o in self.objects if o.status != "unchanged"]
        for o in shown[:REPR_LIMIT]:
            lines.append(
                f"  {o.status:<9} {o.kind} {o.id} ({o.file}): {o.changedCells} changed "
                f"cell(s), {o.addedRows} added, {o.deletedRows} deleted row(s)"
            )
        if len(shown) > REPR_LIMIT:
            lines.append(f"  ... and {len(shown) - REPR_LIMIT} more (plan.frame lists all)")
        if shown:
            # render.plan_text is not a method: render imports this module
            lines.append("  render.plan_text(plan) shows the changes cell by cell")
        return "\n".join(lines)

    __str__ = __repr__

    @property
    def exit_code(self) -> int:
        """0 nothing would change, 2 changes are pending, 1 something is refused or failed."""
        statuses = {o.status for o in self.objects}
        if statuses & {"refused", "failed"}:
            return EXIT_REFUSED
        return EXIT_CHANGES if "changes" in statuses else EXIT_NO_CHANGES

    @property
    def counts(self) -> Counter[str]:
        """How many objects have each status (a ``collections.Counter``)."""
        return Counter(o.status for o in self.objects)

    @property
    def frame(self) -> pd.DataFrame:
        """One row per object: the columns of ``PLAN_COLUMNS`` (a new frame each time)."""
        rows = [
            {"kind": o.kind, "id": o.id, "file": o.file, "status": o.status,
             "changed_cells": o.changedCells, "added_rows": o.addedRows,
             "deleted_rows": o.deletedRows, "detail": o.detail}
            for o in self.objects
        ]  # fmt: skip
        frame = pd.DataFrame(rows, columns=list(PLAN_COLUMNS))
        return frame.astype(
            {"kind": "string", "id": "string", "file": "string", "status": "string",
             "changed_cells": "Int64", "added_rows": "Int64", "deleted_rows": "Int64",
             "detail": "string"}
        )  # fmt: skip

    def to_dict(self, relative_to: Path | None = None) -> JsonObject:
        """The plan file's document; ``folder`` relative to ``relative_to`` when given.

        Parameters
        ----------
        relative_to : pathlib.Path, optional
            The folder the plan's folder is written relative to.

        Returns
        -------
        JsonObject
            The document, as the plan file holds it.
        """
        folder = Path(self.folder).resolve()
        if relative_to is not None:
            folder = Path(os.path.relpath(folder, Path(relative_to).resolve()))
        return {
            "format": PLAN_FORMAT, "createdAt": self.created_at, "tenant": self.tenant,
            "folder": folder.as_posix(), "allowDeletes": self.allow_deletes,
            "objects": [asdict(o) for o in self.objects],
        }  # fmt: skip

    def save(self, path: str | os.PathLike[str]) -> Path:
        """Write the plan file (JSON); the folder is kept relative to the file's folder.

        Parameters
        ----------
        path : str or os.PathLike
            The plan file to write.

        Returns
        -------
        pathlib.Path
            The file written.
        """
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        document = self.to_dict(relative_to=path.parent)
        path.write_text(json.dumps(document, ensure_ascii=False, indent=1) + "\n", "utf-8")
        return path

    @classmethod
    def load(
        cls, path: str | os.PathLike[str], folder: str | os.PathLike[str] | None = None
    ) -> Plan:
        """Read a plan file; ``folder`` overrides the folder it names.

        Parameters
        ----------
        path : str or os.PathLike
            The plan file.
        folder : str or os.PathLike, optional
            The folder of object files to use instead of the one the plan names.

        Raises
        ------
        InvalidArgumentError
            The file is not a plan file of this version.
        """
        path = Path(path)
        try:
            document = json.loads(path.read_text("utf-8"))
        except (OSError, UnicodeDecodeError, ValueError) as exc:
            raise InvalidArgumentError(f"{path}: not a readable plan file ({exc})") from exc
        if not isinstance(document, dict) or document.get("format") != PLAN_FORMAT:
            raise InvalidArgumentError(
                f"{path}: not a {PLAN_FORMAT} file (make it with plan --out)"
            )
        try:
            objects = [PlannedObject(**o) for o in document["objects"]]
        except (KeyError, TypeError) as exc:
            raise InvalidArgumentError(f"{path}: the plan's objects do not parse ({exc})") from exc
        base = Path(folder) if folder is not None else path.parent / document["folder"]
        return cls(base, objects, document.get("tenant"), bool(document.get("allowDeletes")),
                   document.get("createdAt") or "")  # fmt: skip


def _plain(value: Any) -> Any:
    """A diff or report value as something JSON can show."""
    if value is ABSENT:
        return "<absent>"
    if value is None or value is pd.NA or isinstance(value, bool | int | str):
        return value
    if isinstance(value, float):
        return value if value == value and abs(value) != float("inf") else repr(value)
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return str(value)


def _problems(error: IncompletePayloadError) -> list[dict[str, Any]]:
    report = getattr(error, "report", None)
    if report is None:
        return []
    return [
        {k: _plain(v) for k, v in record.items() if k in ("level", "row", "column", "problem")}
        for record in report.errors.head(DETAIL_LIMIT).to_dict("records")
    ]


def read_current(api: Api, kind: str, object_id: str) -> dict[str, Any]:
    """What the service holds now (one GET)."""
    return api.get_table(object_id) if kind == "table" else api.get_mapping(object_id)


def dry_run(api: Api, held: ObjectFile, current: dict[str, Any], *, allow_deletes: bool) -> Any:
    """The writer's dry run of ``held`` over ``current``: a WriteResult (or it raises)."""
    writer = write_table if held.kind == "table" else write_mapping
    return writer(api, held.object_id, held.frame_for(current), dry_run=True,
                  allow_deletes=allow_deletes)  # fmt: skip


def _notes(held: ObjectFile, current: dict[str, Any]) -> list[str]:
    envelope = {k: v for k, v in current.items() if k != held.rows_key}
    if digest(envelope) != digest(held.envelope):
        keys = sorted(
            k for k in set(envelope) | set(held.envelope)
            if digest(envelope.get(k)) != digest(held.envelope.get(k))
        )  # fmt: skip
        return [
            f"outside the rows the service differs from the file ({', '.join(keys)}): apply "
            "keeps what the service holds there (it writes rows)"
        ]
    return []


def plan_object(api: Api, folder: Path, path: Path, *, allow_deletes: bool) -> PlannedObject:
    """The plan of one object file (never raises for the object's own problems)."""
    relative = path.relative_to(folder).as_posix()
    kind = "table" if relative.startswith("tables/") else "mapping"
    try:
        held = read_object(path)
    except DataShapeError as exc:
        return PlannedObject(kind, "", relative, "failed", detail=str(exc))
    entry = PlannedObject(held.kind, held.object_id, relative, "failed", files=held.digest)
    if held.kind != kind:
        entry.detail = f"the file holds a {held.kind} but is in the {kind}s folder"
        return entry
    try:
        current = read_current(api, held.kind, held.object_id)
        entry.before = digest(current)
        entry.notes = _notes(held, current)
        if path.suffix == ".csv":
            rows = payload_rows(current, held.kind)
            resaved = resaved_note(held.frame_for(current), rows, path.name)
            entry.notes[:0] = [resaved] if resaved else []
        result = dry_run(api, held, current, allow_deletes=allow_deletes)
    except IncompletePayloadError as exc:
        entry.status, entry.detail, entry.problems = "refused", exc.message, _problems(exc)
        return entry
    except (ConcurrentModificationError, WriteRefusedError) as exc:
        entry.status, entry.detail = "refused", exc.message
        return entry
    except MddError as exc:
        entry.detail = f"{type(exc).__name__}: {exc}"
        return entry
    diff = result.diff
    entry.after = digest(result.payload)
    entry.changedCells, entry.addedRows, entry.deletedRows = (
        len(diff.changed_cells), len(diff.added_rows), len(diff.deleted_rows),
    )  # fmt: skip
    entry.status = "unchanged" if result.status == "unchanged" else "changes"
    entry.detail = diff.summary if entry.status == "changes" else ""
    lines = diff.to_frame().head(DETAIL_LIMIT).to_dict("records")
    entry.changes = [{k: _plain(v) for k, v in line.items()} for line in lines]
    warnings = result.report.warnings
    entry.notes += [f"check warning: {p}" for p in warnings["problem"].head(5).tolist()]
    return entry


@documented
def plan_folder(
    api: Api,
    folder: str | os.PathLike[str],
    *,
    allow_deletes: bool = False,
    max_workers: int | None = None,
    progress: bool | None = None,
) -> Plan:
    """Compare every object file of ``folder`` with the service; send nothing.

    Parameters
    ----------
    {api}
    folder : path
        A tables-as-code folder (see :func:`mddframes.tables_as_code.pull_folder`).
    allow_deletes : bool, default False
        Plan deleted rows (else an object that deletes rows is refused).
    max_workers : int, optional
        Concurrent objects; default ``api.max_workers``.
    {progress}

    Returns
    -------
    Plan
        One :class:`PlannedObject` per file, in folder order; ``Plan.exit_code`` is
        0, 1 or 2 as the ``plan`` command exits.

    Examples
    --------
    >>> from pathlib import Path
    >>> _ = mddframes.pull_folder(client.api, "DWH", "tables", progress=False)
    >>> currencies = Path("tables/tables/tbl-0110.csv")  # a reviewer's edit
    >>> _ = currencies.write_text(currencies.read_text("utf-8").replace("UAE Dirham", "UAE dirham"))
    >>> plan = mddframes.plan_folder(client.api, "tables", progress=False)  # sends nothing
    >>> plan.counts
    Counter({'unchanged': 212, 'changes': 1})
    """
    folder = Path(folder)
    paths = [path for _, path in object_files(folder)]
    outcome = run_bulk(
        lambda path: plan_object(api, folder, path, allow_deletes=allow_deletes), paths,
        max_workers=max_workers or api.max_workers, progress=progress, desc="plan",
        label=lambda path: path.name,
    )  # fmt: skip
    objects = [entry for _path, entry in outcome.succeeded]  # all: errors="raise"
    twice = Counter((o.kind, o.id) for o in objects if o.id)
    for entry in objects:
        if entry.id and twice[(entry.kind, entry.id)] > 1:
            entry.status = "refused"
            entry.detail = (
                f"{twice[(entry.kind, entry.id)]} files hold {entry.kind} {entry.id!r}: keep one"
            )
    return Plan(folder, objects, getattr(api, "tenant", None), allow_deletes)
