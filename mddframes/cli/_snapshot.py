"""`mddframes snapshot SYSTEM DIR`: a whole system to a folder of Parquet files."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mddframes.cli._output import progress_wanted

if TYPE_CHECKING:
    from mddframes.client import Client

#: The exit code when some objects could not be read (the CLI's EXIT_PARTIAL_FAILURE).
_PARTIAL_FAILURE = 3  # cli.EXIT_PARTIAL_FAILURE (importing cli from here would be a cycle)


def add_commands(commands: Any, service_command: Any) -> None:
    """Add ``snapshot``; ``service_command(commands, name, help, handler, frame)``."""
    command = service_command(
        commands,
        "snapshot",
        "write a whole system (tree, elements, tables, mappings, object types, open "
        "packages) to a folder of Parquet files with a manifest (exit 3 if some objects "
        "could not be read; they are listed in the manifest)",
        _snapshot,
        frame=False,
    )
    command.add_argument("system")
    command.add_argument(
        "dir", type=Path, nargs="?", help="the snapshot folder (must not exist yet)"
    )
    command.add_argument(
        "--history", type=Path, metavar="PATH",
        help="add the snapshot to this history store as its next version instead of "
        "writing a folder (stored at the cost of what changed; see `mddframes history`)",
    )  # fmt: skip
    command.add_argument(
        "--no-structures",
        dest="structures",
        action="store_false",
        help="leave out structures.parquet (one request per element)",
    )
    command.add_argument("--max-workers", type=int, default=None, help="concurrent requests")
    command.set_defaults(interrupted=_interrupted)


def _interrupted(args: argparse.Namespace) -> str:
    """What an interrupted snapshot left: its partial folder (if one was begun), resumed
    by the same command."""
    from mddframes.snapshot.layout import partial_folder

    if args.history is not None:
        return (
            f"the snapshot of {args.system!r} was not added to {args.history}: the store is "
            "as it was. Run the same command again to resume it (what was read is kept): "
            f"mddframes snapshot {args.system} --history {args.history}"
        )
    partial = partial_folder(args.dir)
    again = f"mddframes snapshot {args.system} {args.dir}"
    if not partial.is_dir():
        return (
            f"the snapshot of {args.system!r} stopped before anything was written ({args.dir} "
            f"was not created). Run the same command again to start it: {again}"
        )
    files, objects = _finished_files(partial)
    return (
        f"the snapshot of {args.system!r} is unfinished; {args.dir} was not written. "
        f"{partial} keeps the {files} file(s) finished so far ({objects} object(s)); any "
        f"other file in it is unfinished and is dropped on resuming. Run the same command "
        f"again to resume it (only the rest is read): {again}; or remove {partial} to "
        "drop it"
    )


def _finished_files(partial: Path) -> tuple[int, int]:
    """The files an interrupted snapshot's journal lists as finished, and their objects
    (the journal's first line is its header; a torn last line is not counted)."""
    import json

    files = objects = 0
    try:
        with open(partial / "journal.jsonl", encoding="utf-8") as journal:
            for line in journal:
                try:
                    entry = json.loads(line)
                except ValueError:
                    continue
                if isinstance(entry, dict) and "file" in entry:
                    files += 1
                    objects += len(entry.get("objects") or ())
    except OSError:
        pass
    return files, objects


def _snapshot(client: Client, args: argparse.Namespace) -> int:
    snap = client.snapshot(
        args.system, args.dir, max_workers=args.max_workers,
        progress=progress_wanted(args), structures=args.structures, history=args.history,
    )  # fmt: skip
    kinds = snap.objects["kind"].value_counts()
    where = args.dir if args.history is None else f"{args.history} (a new version)"
    args.messages.note(
        f"wrote {where}: {kinds.get('table', 0)} table(s), {kinds.get('mapping', 0)} "
        f"mapping(s) of system {args.system!r}"
    )
    failures = snap.failures
    for failure in failures.itertuples(index=False):
        args.messages.say("error", f"{failure.kind} {failure.id!r}: {failure.message}")
    if len(failures):
        args.messages.say(
            "error",
            f"{len(failures)} object(s) failed; see "
            + (f"{args.dir}/manifest.json" if args.history is None else "the version's failures"),
        )
        return _PARTIAL_FAILURE
    return 0
