"""The ``mddframes`` command line: the demo, the emulator, and commands for pipelines.

Pipeline commands connect with :func:`mddframes.connect`: settings come from ``--tenant``,
``--base-url`` and ``--profile``, then the ``MDD_*`` environment variables, then the
profile file. The client secret is never taken from the command line (other users of the
machine can read process arguments); set ``MDD_CLIENT_SECRET`` or use a profile.

Modules: ``_output`` (formats, stderr messages, a closed stdout), ``_service`` (reads,
packages, exports, deployment, doctor), ``_code`` (pull, plan, apply), ``_journal``
(writes, resume, roll-back), ``_lineage`` (lineage, search).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, TypeAlias, cast

import pandas as pd

from mddframes.cli._code import add_commands as add_code_commands
from mddframes.cli._history import add_commands as add_history_commands
from mddframes.cli._journal import add_commands as add_journal_commands
from mddframes.cli._lineage import add_commands as add_lineage_commands
from mddframes.cli._output import (
    EXIT_STDOUT_CLOSED,
    Messages,
    StdoutClosed,
    emit,
    log_level,
    progress_wanted,
)
from mddframes.cli._record import add_commands as add_record_commands
from mddframes.cli._record import split_recorded
from mddframes.cli._service import add_commands as add_service_commands
from mddframes.cli._snapshot import add_commands as add_snapshot_commands
from mddframes.config import PROFILE_VARIABLE, SETTINGS

if TYPE_CHECKING:
    from mddframes.client import Client
    from mddframes.config import SettingArguments

#: What a command's handler returns: a frame to print, an exit code, both, or nothing.
Outcome: TypeAlias = "pd.DataFrame | tuple[pd.DataFrame, int] | int | None"

EXIT_OK = 0
#: An error (its message on stderr), or a refused or failed write.
EXIT_ERROR = 1
#: ``plan``: changes are pending; ``writes``: a batch is unfinished; ``doctor``: would break.
EXIT_PENDING = 2
#: A bulk command whose result has failed rows (the result is still printed).
EXIT_PARTIAL_FAILURE = 3
#: Bad usage (sysexits' EX_USAGE; not argparse's 2, which ``plan`` means as "changes").
EXIT_USAGE = 64
EXIT_INTERRUPTED = 130
__all__ = [
    "EXIT_ERROR", "EXIT_INTERRUPTED", "EXIT_OK", "EXIT_PARTIAL_FAILURE", "EXIT_PENDING",
    "EXIT_STDOUT_CLOSED", "EXIT_USAGE", "build_parser", "main",
]  # fmt: skip

EXIT_CODES = f"""\
exit codes:
  0    success (plan: nothing would change; apply, resume, roll-back: all done)
  1    an error (message on stderr), or something refused or failed
  2    plan: changes pending; writes: a batch is unfinished; doctor: would break
  3    deploy, package-add, confirm-deployed: some rows failed (the result is printed)
  64   bad usage
  130  interrupted
  {EXIT_STDOUT_CLOSED}  stdout was closed by its reader (e.g. '| head -1')
"""


def _connection_epilog() -> str:
    """The connection settings' options and variables (from the settings' declarations)."""
    # the variable first: a line that starts with an option is an option list to the
    # docs' reStructuredText (the command line page shows this epilog)
    lines = ["connection (each from its option, else its variable, else the profile):"]
    for setting in SETTINGS:
        if setting.option:
            lines.append(f"  {setting.variable:<24}{setting.option}")
    lines += [
        f"  {'MDD_CLIENT_SECRET':<24}no option: a command line is visible to other users",
        f"  {PROFILE_VARIABLE:<24}--profile: the profile of ~/.config/mddframes/config.toml",
        "  every setting, its variable and its profile key: the settings page of the docs",
    ]
    return "\n".join(lines) + "\n"


CONNECTION = _connection_epilog()


class _Parser(argparse.ArgumentParser):
    """argparse with exit code 64 for bad usage (2 means "changes pending" to plan)."""

    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message}\n")


def _common(parser: argparse.ArgumentParser, *, top: bool) -> None:
    """-q, -v and --progress, accepted before and after the command name."""
    default = (lambda value: value) if top else (lambda value: argparse.SUPPRESS)
    parser.add_argument(
        "-q", "--quiet", action="store_true", default=default(False),
        help="only errors on stderr (the exit code says the rest)",
    )  # fmt: skip
    parser.add_argument(
        "-v", "--verbose", action="count", default=default(0),
        help="more logging (-vv: debug)",
    )  # fmt: skip
    parser.add_argument(
        "--progress", action=argparse.BooleanOptionalAction, default=default(None),
        help="progress bars on stderr (default: only when stderr is a terminal)",
    )  # fmt: skip


def build_parser(*, emulator_options: bool = True) -> argparse.ArgumentParser:
    """Build the argument parser with one sub-command per job.

    Parameters
    ----------
    emulator_options : bool, default True
        Give ``emulator`` its options. They import the emulator (FastAPI and its
        models: most of a second), so ``main`` asks for them only when the command
        line names ``emulator``; without them its one line in ``--help`` stays.
    """
    parser = _Parser(
        prog="mddframes",
        description="pandas DataFrames over a metadata-management service.",
        epilog=CONNECTION + "\n" + EXIT_CODES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _common(parser, top=True)
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    demo = commands.add_parser("demo", help="run the demo against the embedded emulator")
    demo.set_defaults(handler=_run_demo)

    emulator = commands.add_parser("emulator", help="run the local emulator in the foreground")
    if emulator_options:
        from mddframes.emulator.cli import add_arguments as add_emulator_arguments
        from mddframes.emulator.cli import run as run_emulator

        add_emulator_arguments(emulator)
        emulator.set_defaults(handler=run_emulator)

    add_service_commands(commands, _service_command)
    add_code_commands(commands, _service_command)
    add_journal_commands(commands, _service_command)
    add_lineage_commands(commands, _service_command)
    add_snapshot_commands(commands, _service_command)
    add_history_commands(commands, _local_command)
    add_record_commands(commands)
    return parser


def _service_command(
    commands: Any,
    name: str,
    help: str,
    handler: Callable[[Client, argparse.Namespace], Outcome],
    *,
    frame: bool = True,
) -> argparse.ArgumentParser:
    """A command that connects; ``frame``: it prints a frame (-o and --format csv|json|text)."""
    command: argparse.ArgumentParser = commands.add_parser(
        name, help=help, description=help, epilog=CONNECTION + "\n" + EXIT_CODES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )  # fmt: skip
    _common(command, top=False)
    group = command.add_argument_group("connection (else MDD_* variables, else the profile file)")
    for setting in SETTINGS:
        if setting.option:
            group.add_argument(
                setting.option, dest=setting.name, default=None,
                help=f"{setting.help} ({setting.variable})".replace("`", "").replace("%", "%%"),
            )  # fmt: skip
    group.add_argument("--profile", help="profile of ~/.config/mddframes/config.toml (MDD_PROFILE)")
    if frame:
        _output_options(command)
    command.set_defaults(handler=lambda args: _with_client(args, handler), parser=command)
    return command


def _output_options(command: argparse.ArgumentParser) -> None:
    """-o and --format csv|json|text: how a command's frame is printed."""
    out = command.add_argument_group("output")
    out.add_argument(
        "--format", choices=("csv", "json", "text"),
        help="how the frame is printed (default: text on a terminal, else csv; with -o "
        "by its suffix)",
    )  # fmt: skip
    out.add_argument(
        "-o", "--output", type=Path, help="write the frame to this file instead of stdout"
    )


def _local_command(
    commands: Any, name: str, help: str, handler: Callable[[argparse.Namespace], Outcome]
) -> argparse.ArgumentParser:
    """A command that reads local files only (no connection) and prints a frame."""
    command: argparse.ArgumentParser = commands.add_parser(
        name, help=help, description=help, epilog=EXIT_CODES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )  # fmt: skip
    _common(command, top=False)
    _output_options(command)
    command.set_defaults(handler=lambda args: _finish(handler(args), args), parser=command)
    return command


def _with_client(
    args: argparse.Namespace, handler: Callable[[Client, argparse.Namespace], Outcome]
) -> int:
    from mddframes import connect

    given = {s.name: getattr(args, s.name) for s in SETTINGS if s.option and s.name != "tenant"}
    settings = cast("SettingArguments", {k: v for k, v in given.items() if v is not None})
    with connect(args.tenant, profile=args.profile, **settings) as client:
        client.api.progress = progress_wanted(args)  # a paged list's bar too
        result = handler(client, args)
    return _finish(result, args)


def _finish(result: Outcome, args: argparse.Namespace) -> int:
    """A handler's outcome printed, and the exit code it means."""
    code: int | None = None
    if isinstance(result, tuple):
        result, code = result
    if isinstance(result, bool):  # an int to the type checker, but never an exit code
        raise TypeError(f"a command handler returned {result!r}, not a frame or an exit code")
    if isinstance(result, int):
        return result
    if result is None:
        return EXIT_OK if code is None else code
    emit(result, args)
    if code is not None:
        return code
    if (
        isinstance(result, pd.DataFrame)
        and "ok" in result.columns
        and not result["ok"].fillna(False).all()
    ):
        return EXIT_PARTIAL_FAILURE
    return EXIT_OK


def _run_demo(args: argparse.Namespace) -> int:
    from mddframes.demo import main as demo_main

    return demo_main()


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the process exit code."""
    arguments = sys.argv[1:] if argv is None else list(argv)
    arguments, recorded = split_recorded(arguments)
    parser = build_parser(emulator_options="emulator" in arguments)
    args = parser.parse_args(arguments)
    if recorded is not None:
        args.recorded = recorded
    messages = Messages(log_level(args)).install()
    args.messages = messages
    from mddframes.errors import MddError

    try:
        return int(args.handler(args) or 0)
    except KeyboardInterrupt:
        messages.say(None, interrupted_message(args))
        return EXIT_INTERRUPTED
    except StdoutClosed:
        _silence_stdout()
        return EXIT_STDOUT_CLOSED
    except MddError as exc:  # the CLI's one place that turns library errors into words
        messages.say("error", str(exc))
        return EXIT_ERROR
    except OSError as exc:  # a file named on the command line (ids, -o, a folder)
        messages.say(
            "error", f"{exc.strerror or exc}: {exc.filename}" if exc.filename else str(exc)
        )
        return EXIT_ERROR
    finally:
        messages.remove()


def interrupted_message(args: argparse.Namespace) -> str:
    """What Ctrl-C left behind and the command that resumes or cleans it up.

    A command that leaves something to resume names it through its ``interrupted``
    default (a function of the arguments); any other says that nothing was changed.
    """
    explain = getattr(args, "interrupted", None)
    if explain is not None:
        return f"interrupted: {explain(args)}"
    return f"interrupted: {args.command} stopped before it finished"


def _silence_stdout() -> None:
    """Point stdout at /dev/null, so the interpreter's last flush does not fail again."""
    import os

    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):
        pass  # not a real file (tests capture it): nothing to flush at exit


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
