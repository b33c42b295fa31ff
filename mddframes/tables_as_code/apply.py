"""``apply``: write exactly what a plan showed, through the journal, or nothing.

Every object the plan changes is checked before anything is sent:

1. its files still have the digest the plan recorded (else: "the file changed since
   the plan"),
2. the service still holds the content the plan compared with (digest ``before``;
   else: "changed on the service since the plan"),
3. the writer's dry run of all of them, as one batch per kind, builds payloads with
   the digests the plan recorded (``after``).

Any failure refuses the whole apply and nothing is sent. Then tables and mappings go
through :func:`mddframes.writing.write_tables` / ``write_mappings`` (backups, the write
journal, PUT, read back), whose own conflict check refuses an object that changes
between these checks and its PUT. A plan with a refused or failed object is not
applied at all.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from mddframes.codec.values import digest
from mddframes.context import ATTRS_KEY, ContextGroup
from mddframes.doc_sections import documented
from mddframes.errors import InvalidArgumentError, MddError
from mddframes.frames.bulk_tables import long_frame
from mddframes.tables_as_code.files import ObjectFile, read_object
from mddframes.tables_as_code.plan import Plan, PlannedObject, read_current
from mddframes.writing import write_mappings, write_tables

if TYPE_CHECKING:
    from mddframes.api import Api

#: The columns of :func:`apply_plan`'s result.
APPLY_COLUMNS = (
    "kind", "id", "file", "status", "changed_cells", "added_rows", "deleted_rows",
    "verified", "backup", "batch", "error",
)  # fmt: skip


class _Refused(Exception):
    pass


_Checked = tuple[PlannedObject, ObjectFile, dict[str, Any]]
_Rows = dict[tuple[str, str, str], dict[str, Any]]


def _check(api: Api, folder: Path, entry: PlannedObject) -> tuple[ObjectFile, dict[str, Any]]:
    path = folder / entry.file
    try:
        held = read_object(path)
    except (MddError, OSError) as exc:
        raise _Refused(f"the file cannot be read any more: {exc}") from exc
    if held.digest != entry.files or (held.kind, held.object_id) != (entry.kind, entry.id):
        raise _Refused(f"{entry.file} changed since the plan: plan again")
    current = read_current(api, entry.kind, entry.id)
    if digest(current) != entry.before:
        raise _Refused(
            f"{entry.kind} {entry.id!r} changed on the service since the plan: plan again "
            "(the new plan shows what the service holds now)"
        )
    return held, current


def _long_frame(kind: str, items: list[tuple[ObjectFile, dict[str, Any]]]) -> pd.DataFrame:
    """The long frame ``write_tables`` takes, holding each object's context (what the
    service held at the check) in its ``attrs``: however many objects the plan changes,
    none depends on the client's registry, which keeps only its latest reads."""
    frames = [held.frame_for(current) for held, current in items]
    frame = long_frame(
        f"{kind}_id",
        [
            (held.object_id, ({c: f[c].array for c in f.columns}, f.index))
            for (held, _), f in zip(items, frames, strict=True)
        ],
    )
    frame.attrs[ATTRS_KEY] = ContextGroup(f.attrs[ATTRS_KEY] for f in frames)
    return frame


@documented
def apply_plan(
    api: Api,
    plan: Plan,
    *,
    backup_dir: str | os.PathLike[str] | None = None,
    max_workers: int | None = None,
    progress: bool | None = None,
) -> pd.DataFrame:
    """Apply a :class:`~mddframes.tables_as_code.plan.Plan` (see the module docstring).

    Parameters
    ----------
    api : Api
        The raw layer of a client of the plan's tenant.
    plan : Plan
        From :func:`~mddframes.tables_as_code.plan.plan_folder` or ``Plan.load``.
    backup_dir : path, optional
        Root folder of the backups and journals; default
        the ``backup_dir`` setting, else the user's data folder.
    {max_workers}
    {progress}

    Returns
    -------
    pandas.DataFrame
        One row per object of the plan: the columns of :data:`APPLY_COLUMNS`;
        ``status`` is written, unchanged, refused, failed (a PUT or its
        verification failed: ``batch`` names the journal to resume or roll back) or
        not sent (another object was refused). ``attrs["ok"]`` is True when every
        planned change was written and verified.

    Raises
    ------
    InvalidArgumentError
        The plan is of another tenant.

    Examples
    --------
    >>> from pathlib import Path
    >>> _ = mddframes.pull_folder(client.api, "DWH", "tables", progress=False)
    >>> currencies = Path("tables/tables/tbl-0110.csv")
    >>> _ = currencies.write_text(currencies.read_text("utf-8").replace("UAE Dirham", "UAE dirham"))
    >>> plan = mddframes.plan_folder(client.api, "tables", progress=False)
    >>> applied = mddframes.apply_plan(client.api, plan, progress=False)  # through the journal
    >>> applied.loc[applied["id"] == "tbl-0110", ["status", "verified"]].values.tolist()
    [['written', True]]
    """
    tenant = getattr(api, "tenant", None)
    if plan.tenant and tenant and plan.tenant != tenant:
        raise InvalidArgumentError(
            f"the plan was made against tenant {plan.tenant!r}, this client is connected to "
            f"{tenant!r}; nothing was sent"
        )
    rows = {
        (o.kind, o.id, o.file): {
            "kind": o.kind, "id": o.id, "file": o.file,
            "status": "unchanged" if o.status == "unchanged" else "not sent",
            "changed_cells": o.changedCells, "added_rows": o.addedRows,
            "deleted_rows": o.deletedRows, "verified": None, "backup": None, "batch": None,
            "error": o.detail if o.status in ("refused", "failed") else None,
        }
        for o in plan.objects
    }  # fmt: skip
    refused = False
    for o in plan.objects:
        if o.status in ("refused", "failed"):
            rows[(o.kind, o.id, o.file)]["status"] = o.status
            refused = True
    pending = [o for o in plan.objects if o.status == "changes"]
    checked: dict[str, list[_Checked]] = {}
    if not refused:
        for entry in pending:
            try:
                held, current = _check(api, Path(plan.folder), entry)
            except _Refused as exc:
                rows[(entry.kind, entry.id, entry.file)].update(status="refused", error=str(exc))
                refused = True
                continue
            checked.setdefault(entry.kind, []).append((entry, held, current))
    if not refused:
        refused = _dry_run(api, plan, checked, rows, max_workers)
    if not refused:
        for kind, items in checked.items():
            _write(api, kind, items, rows, plan, backup_dir, max_workers, progress)
    return _frame(list(rows.values()), pending)


def _dry_run(
    api: Api, plan: Plan, checked: dict[str, list[_Checked]], rows: _Rows,
    max_workers: int | None,
) -> bool:  # fmt: skip
    """True when the writer would send something other than what the plan recorded."""
    refused = False
    for kind, items in checked.items():
        pairs = [(held, current) for _, held, current in items]
        writer = write_tables if kind == "table" else write_mappings
        try:
            result = writer(api, _long_frame(kind, pairs), dry_run=True,
                            allow_deletes=plan.allow_deletes, max_workers=max_workers,
                            progress=False)  # fmt: skip
        except MddError as exc:
            for entry, _, _ in items:
                rows[(entry.kind, entry.id, entry.file)].update(status="refused", error=str(exc))
            refused = True
            continue
        results = result.attrs["results"]
        for entry, _, _ in items:
            if digest(results[entry.id].payload) != entry.after:
                rows[(entry.kind, entry.id, entry.file)].update(
                    status="refused",
                    error="the payload built now differs from the planned one: plan again",
                )
                refused = True
    return refused


def _write(
    api: Api, kind: str, items: list[_Checked], rows: _Rows, plan: Plan, backup_dir: Any,
    max_workers: int | None, progress: bool | None,
) -> None:  # fmt: skip
    """Send one kind's objects as one batch; record each one's outcome in ``rows``."""
    pairs = [(held, current) for _, held, current in items]
    writer = write_tables if kind == "table" else write_mappings
    try:
        result = writer(api, _long_frame(kind, pairs), allow_deletes=plan.allow_deletes,
                        backup_dir=backup_dir, max_workers=max_workers, progress=progress)  # fmt: skip
    except MddError as exc:  # nothing of this kind was sent
        for entry, _, _ in items:
            rows[(entry.kind, entry.id, entry.file)].update(status="refused", error=str(exc))
        return
    by_id = {record[f"{kind}_id"]: record for record in result.to_dict("records")}
    for entry, _, _ in items:
        record = by_id[entry.id]
        rows[(entry.kind, entry.id, entry.file)].update(
            status=record["status"], verified=record["verified"],
            backup=None if pd.isna(record["backup"]) else record["backup"],
            batch=result.attrs.get("batch"),
            error=None if pd.isna(record["error"]) else record["error"],
        )  # fmt: skip


def _frame(rows: list[dict[str, Any]], pending: list[PlannedObject]) -> pd.DataFrame:
    frame = pd.DataFrame(rows, columns=list(APPLY_COLUMNS))
    frame = frame.astype(
        {"kind": "string", "id": "string", "file": "string", "status": "string",
         "changed_cells": "Int64", "added_rows": "Int64", "deleted_rows": "Int64",
         "verified": "boolean", "backup": "string", "batch": "string", "error": "string"}
    )  # fmt: skip
    wanted = {(o.kind, o.id) for o in pending}
    done = frame[[(k, i) in wanted for k, i in zip(frame["kind"], frame["id"], strict=True)]]
    frame.attrs["ok"] = bool(
        not frame["status"].isin(["refused", "failed", "not sent"]).any()
        and (done["status"] == "written").all()
        and done["verified"].fillna(False).all()
    )
    return frame
