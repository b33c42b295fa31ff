"""Tables as code on the command line: ``pull``, ``plan``, ``apply``."""

from __future__ import annotations

import argparse
import json
import re
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from mddframes.cli._output import in_command_words, output_file, progress_wanted, write_stdout
from mddframes.cli._service import read_ids

if TYPE_CHECKING:
    from mddframes.client import Client

#: ``apply``'s exit code when something was refused or failed (0: all written and verified).
EXIT_APPLY_FAILED = 1


def add_commands(commands: Any, service_command: Any) -> None:
    """Add pull, plan and apply."""
    pull = service_command(
        commands,
        "pull",
        "write every table and mapping of a system into a folder, one file per object",
        _pull,
    )
    pull.add_argument("system")
    pull.add_argument("folder", type=Path, metavar="DIR")
    pull.add_argument(
        "--ids-file",
        type=Path,
        help="only these tables, mappings or elements (one id per line, '-' for stdin)",
    )
    pull.set_defaults(interrupted=_pull_interrupted)
    pull.add_argument(
        "--file-format",
        choices=("csv", "json", "xlsx"),
        help="format of the files (default: each object's existing format, else csv)",
    )

    plan = service_command(
        commands,
        "plan",
        "compare a folder with the service and print what apply would change; sends nothing "
        "(exit 0 nothing would change, 2 changes pending, 1 something refused or failed)",
        _plan,
        frame=False,
    )
    plan.add_argument("folder", type=Path, metavar="DIR")
    plan.add_argument(
        "--format",
        choices=("text", "markdown", "json"),
        default="text",
        help="text (default), markdown (a pull-request comment) or json (the plan file)",
    )
    plan.add_argument("--out", type=Path, help="also write the plan file, for 'apply PLANFILE'")
    _allow_deletes(plan)

    apply = service_command(
        commands,
        "apply",
        "write the changes of a folder (planned afresh) or of a plan file, through the write "
        "journal; refuses objects changed since the plan (exit 0 only when all were written "
        "and verified, else 1)",
        _apply,
    )
    apply.add_argument("target", type=Path, metavar="DIR|PLANFILE")
    apply.add_argument(
        "--dir", type=Path, help="with a plan file: the folder, if it moved since the plan"
    )
    apply.add_argument(
        "--backup-dir",
        type=Path,
        help=(
            "root folder of the backups and journals (default: the MDD_BACKUP_DIR setting, "
            "else the user's data folder)"
        ),
    )
    _allow_deletes(apply)
    apply.set_defaults(interrupted=_apply_interrupted)


def _pull_interrupted(args: argparse.Namespace) -> str:
    """What an interrupted pull left: a folder part written, finished by pulling again."""
    ids = f" --ids-file {args.ids_file}" if args.ids_file is not None else ""
    again = f"mddframes pull {args.system} {args.folder}{ids}"
    if not args.folder.is_dir():
        return f"nothing was pulled ({args.folder} was not created). Run it again: {again}"
    return (
        f"{args.folder} holds only the objects pulled so far; the others are missing or "
        f"old. Run the same command again to finish it (each object is written whole): "
        f"{again}"
    )


def _apply_interrupted(args: argparse.Namespace) -> str:
    """What an interrupted apply left: the batches it began (named), or nothing written."""
    where = f" --backup-dir {args.backup_dir}" if args.backup_dir is not None else ""
    batches: pd.DataFrame | None = getattr(args, "interrupted_batches", None)
    if batches is None:  # stopped before the apply's writes began (or they cannot be told)
        return (
            "some objects may be written and others not. 'mddframes writes"
            f"{where}' lists the unfinished batch; 'mddframes resume BATCH{where}' finishes "
            f"it, 'mddframes roll-back BATCH{where}' undoes it (nothing listed: nothing was "
            "written)"
        )
    if batches.empty:
        return (
            "no write was begun: the service holds what it held. Run the same command "
            "again to apply the folder"
        )
    said = []
    for row in batches.itertuples(index=False):
        said.append(
            f"batch {row.batch} ({row.objects} object(s): {row.verified} written and "
            f"verified, {row.unfinished} not known to be written; journal {row.journal}) did "
            f"not finish: 'mddframes resume {row.batch}{where}' finishes it, 'mddframes "
            f"roll-back {row.batch}{where}' undoes it"
        )
    return "; ".join(said)


def _allow_deletes(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--allow-deletes",
        action="store_true",
        help="allow rows (and undeclared columns) to be deleted; else such an object is refused",
    )


def _pull(client: Client, args: argparse.Namespace) -> pd.DataFrame:
    from mddframes.tables_as_code import pull_folder

    ids = read_ids(args, required=False) if args.ids_file is not None else None
    frame = pull_folder(client.api, args.system, args.folder, ids=ids, fmt=args.file_format,
                 progress=progress_wanted(args))  # fmt: skip
    counts = Counter(frame["action"])
    args.messages.note(
        f"pull: {len(frame)} object(s) in {args.folder}: "
        + ", ".join(f"{n} {a}" for a, n in sorted(counts.items())),
    )  # fmt: skip
    return frame


def _plan(client: Client, args: argparse.Namespace) -> int:
    from mddframes.tables_as_code import plan_folder
    from mddframes.tables_as_code.render import plan_markdown, plan_text

    plan = plan_folder(client.api, args.folder, allow_deletes=args.allow_deletes,
                     progress=progress_wanted(args))  # fmt: skip
    if args.out is not None:
        plan.save(output_file(args.out))
    if args.format == "json":
        text = json.dumps(plan.to_dict(), ensure_ascii=False, indent=1) + "\n"
    elif args.format == "markdown":
        text = plan_markdown(plan)
    else:
        text = plan_text(plan, verbose=args.verbose > 0)
    if not args.quiet or args.format != "text":
        write_stdout(_plan_words(text))
    return plan.exit_code


#: A refusal's words are the write's ("was not written ... Nothing was sent"); a plan
#: sends nothing in any case, so it says what apply would do instead.
_REFUSAL = re.compile(r"(\w+ '[^']*') was not written: (.*?) Nothing was sent\.")


def _plan_words(text: str) -> str:
    """A plan's text in the command line's words, its refusals as what apply would do."""
    return _REFUSAL.sub(r"apply would refuse \1: \2", in_command_words(text))


def _apply(client: Client, args: argparse.Namespace) -> tuple[pd.DataFrame, int]:
    from mddframes.tables_as_code import Plan, apply_plan, plan_folder

    if args.target.is_file():
        # a plan file applies as planned: its own --allow-deletes decided what it deletes
        plan = Plan.load(args.target, folder=args.dir)
    else:
        plan = plan_folder(client.api, args.target, allow_deletes=args.allow_deletes,
                         progress=progress_wanted(args))  # fmt: skip
    before = set(client.pending_writes(backup_dir=args.backup_dir)["batch"])
    try:
        result = apply_plan(client.api, plan, backup_dir=args.backup_dir,
                            progress=progress_wanted(args))  # fmt: skip
    except KeyboardInterrupt:
        # the batches this run began and did not finish: the message names them
        pending = client.pending_writes(backup_dir=args.backup_dir)
        args.interrupted_batches = pending[~pending["batch"].isin(before)]
        raise
    counts = Counter(result["status"])
    args.messages.note("apply: " + ", ".join(f"{n} {s}" for s, n in sorted(counts.items())))
    shown = result[result["status"] != "unchanged"].reset_index(drop=True)
    if not result.attrs.get("ok"):
        _say_how_to_finish(result, args)
    return shown, 0 if result.attrs.get("ok") else EXIT_APPLY_FAILED


def _say_how_to_finish(result: pd.DataFrame, args: argparse.Namespace) -> None:
    """Name the command that finishes or undoes each batch a failure left unfinished."""
    unfinished = result[result["status"] == "failed"]["batch"].dropna().unique()
    where = f" --backup-dir {args.backup_dir}" if args.backup_dir is not None else ""
    for batch in unfinished:
        args.messages.say(
            "error",
            f"apply: batch {batch} did not finish: run 'mddframes resume {batch}{where}' to "
            f"finish it, or 'mddframes roll-back {batch}{where}' to undo it "
            f"('mddframes writes{where}' lists unfinished batches)",
        )
