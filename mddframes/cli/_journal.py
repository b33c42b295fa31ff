"""The write journal's commands: ``writes`` (``--prune DAYS``), ``resume BATCH``,
``roll-back BATCH``."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from mddframes.cli._output import progress_wanted

if TYPE_CHECKING:
    from mddframes.client import Client

#: ``writes``: some batch is unfinished.
EXIT_PENDING = 2


def add_commands(commands: Any, service_command: Any) -> None:
    """Add the journal commands."""
    writes = service_command(
        commands,
        "writes",
        "the batches of writes that did not finish (exit 0 none, 2 some are pending)",
        _writes,
    )
    _backup_dir(writes)
    writes.add_argument(
        "--all", action="store_true", help="also list batches that finished or were rolled back"
    )
    writes.add_argument(
        "--prune",
        type=float,
        metavar="DAYS",
        help=(
            "remove backups and finished journals older than DAYS days instead; unfinished "
            "batches are refused and kept (exit 2 when some were)"
        ),
    )
    writes.add_argument(
        "--dry-run", action="store_true", help="with --prune: list what would go, remove nothing"
    )
    for name, handler, what in (
        ("resume", _resume, "finish an interrupted batch: send what the service does not hold yet"),
        ("roll-back", _roll_back, "undo a batch: put back what each object held before it"),
    ):
        command = service_command(
            commands, name, f"{what} (exit 0 when every object got there, 1 otherwise)", handler
        )
        command.add_argument("batch", help="the batch id (from 'writes') or its journal file")
        _backup_dir(command)


def _backup_dir(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--backup-dir",
        type=Path,
        help=(
            "root folder of the backups and journals (default: the MDD_BACKUP_DIR setting, "
            "else the user's data folder)"
        ),
    )


def _writes(client: Client, args: argparse.Namespace) -> tuple[pd.DataFrame, int]:
    if args.prune is not None:
        # here, not at the top: the writing package would double `mddframes --help`'s start
        from mddframes.writing.pruning import prune_backups

        pruned = prune_backups(
            client.api, args.prune, backup_dir=args.backup_dir, dry_run=args.dry_run
        )
        return pruned, EXIT_PENDING if pruned.attrs["refused"] else 0
    frame = client.pending_writes(backup_dir=args.backup_dir, include_finished=args.all)
    pending = frame["state"].isin(["interrupted", "failed", "rolling back"]).any()
    return frame, EXIT_PENDING if pending else 0


def _recovery(frame: pd.DataFrame) -> tuple[pd.DataFrame, int]:
    return frame, 0 if frame.attrs.get("finished") else 1


def _resume(client: Client, args: argparse.Namespace) -> tuple[pd.DataFrame, int]:
    return _recovery(
        client.resume(args.batch, backup_dir=args.backup_dir, progress=progress_wanted(args))
    )


def _roll_back(client: Client, args: argparse.Namespace) -> tuple[pd.DataFrame, int]:
    return _recovery(
        client.roll_back(args.batch, backup_dir=args.backup_dir, progress=progress_wanted(args))
    )
