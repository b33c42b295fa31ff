"""`mddframes history PATH`: what a history store's versions changed, one line per object."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

#: The exit codes of ``plan``: nothing changed, changes (cli.EXIT_OK, cli.EXIT_PENDING).
_NO_CHANGES, _CHANGES = 0, 2
#: The columns of the summary.
SUMMARY_COLUMNS = (
    "version", "taken_at", "kind", "id", "change", "old_rows", "new_rows", "changed_cells",
)  # fmt: skip


def add_commands(commands: Any, local_command: Any) -> None:
    """Add ``history``; ``local_command(commands, name, help, handler)``."""
    command = local_command(
        commands,
        "history",
        "what the versions of a history store changed (snapshot --history adds them): one "
        "line per object and version (exit 0: nothing changed, 2: changes, as plan)",
        _history,
    )
    command.add_argument("path", type=Path, help="the history store")
    command.add_argument(
        "--since",
        help="from the version in force then: a version number, a time (UTC without a "
        "zone) or a span back such as 7d, 12h (default: the first version)",
    )
    command.add_argument(
        "--until", help="up to the version in force then, as --since (default: the latest)"
    )
    command.add_argument(
        "--id", dest="ids", action="append", metavar="ID",
        help="only this object (repeat for more)",
    )  # fmt: skip
    command.add_argument(
        "--kind", choices=("element", "table", "mapping"), help="only this kind of object"
    )


def _when(text: str | None) -> int | str | None:
    return int(text) if text is not None and text.strip().isdigit() else text


def _history(args: argparse.Namespace) -> tuple[pd.DataFrame, int]:
    from mddframes.snapshot import read_history

    history = read_history(args.path)
    changes = history.read_changes(
        _when(args.since), _when(args.until), kind=args.kind, ids=args.ids
    )
    summary = summarize(changes.objects, changes.cells)
    args.messages.note(
        f"{len(summary)} change(s) in {summary['version'].nunique()} version(s) of {args.path}"
    )
    return summary, _CHANGES if len(summary) else _NO_CHANGES


def summarize(objects: pd.DataFrame, cells: pd.DataFrame) -> pd.DataFrame:
    """One line per changed object and version, with its count of changed cells.

    Parameters
    ----------
    objects : pandas.DataFrame
        ``History.read_changes(...).objects``.
    cells : pandas.DataFrame
        ``History.read_changes(...).cells``.

    Returns
    -------
    pandas.DataFrame
        The columns of :data:`SUMMARY_COLUMNS`.
    """
    counts = cells.groupby(["version", "kind", "id"]).size().to_dict() if len(cells) else {}
    summary = objects[[c for c in SUMMARY_COLUMNS if c in objects.columns]].copy()
    summary["changed_cells"] = [
        counts.get((v, k, i), 0)
        for v, k, i in zip(objects["version"], objects["kind"], objects["id"], strict=True)
    ]
    return summary.astype({"changed_cells": "int64"}).reset_index(drop=True)
