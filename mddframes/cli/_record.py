"""``mddframes record OUT.har -- COMMAND ...``: run any command with every call recorded."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any


def add_commands(commands: Any) -> None:
    """Add ``record``."""
    record = commands.add_parser(
        "record",
        help="run a command and record its calls, scrubbed, into a HAR file",
        description="Run COMMAND (any mddframes command: doctor DWH, pull, export...) and "
        "record every request and answer of it into OUT.har (HAR 1.2). The client "
        "secret, every access token, the credential headers, cookies and the tenant's "
        "host are scrubbed before anything touches the disk; the file is owner-only. "
        "Replay it with 'mddframes emulator --replay OUT.har'; learn from it with "
        "'mddframes doctor --recording OUT.har'.",
    )
    record.add_argument("output", type=Path, metavar="OUT.har", help="the recording to write")
    record.add_argument(
        "--redact-values",
        action="store_true",
        help="also replace every string and number of table, mapping, element and raw-data "
        "bodies by a stable placeholder (for a public bug report)",
    )
    # what follows '--' is split off by split_recorded before parsing (argparse matches a
    # trailing positional too early when an option stands between)
    record.set_defaults(handler=_record, parser=record, recorded=[])
    record.usage = "mddframes record [-h] [--redact-values] OUT.har -- COMMAND ..."


def split_recorded(arguments: list[str]) -> tuple[list[str], list[str] | None]:
    """``record ... -- COMMAND ...`` -> (the arguments before ``--``, the command)."""
    if "record" in arguments and "--" in arguments:
        cut = arguments.index("--")
        if arguments.index("record") < cut:
            return arguments[:cut], arguments[cut + 1 :]
    return arguments, None


def _record(args: argparse.Namespace) -> int:
    from mddframes.cli import build_parser
    from mddframes.recording.active import recording_all

    command = list(args.recorded)
    if not command:
        args.parser.error("give the command to record after '--' (e.g. -- doctor DWH)")
    if command[0] in ("record", "emulator", "demo"):
        args.parser.error(f"'{command[0]}' cannot be recorded: record a command that connects")
    inner = build_parser(emulator_options=False).parse_args(command)
    inner.messages = args.messages
    with recording_all(args.output, redact_values=args.redact_values) as recorder:
        code = int(inner.handler(inner) or 0)
    args.messages.note(
        f"recorded {recorder.entries} call(s) into {args.output} (scrubbed: the client "
        "secret, access tokens, credential headers, cookies, the host"
        + ("; values redacted)" if args.redact_values else ")")
    )
    return code
