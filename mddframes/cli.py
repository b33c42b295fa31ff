"""The ``mddframes`` command line: the demo, the emulator, and pipeline commands."""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Sequence


def build_parser() -> argparse.ArgumentParser:
    """Build the argument parser with one sub-command per job."""
    parser = argparse.ArgumentParser(
        prog="mddframes",
        description="pandas DataFrames over a metadata-management service.",
    )
    parser.add_argument("-v", "--verbose", action="count", default=0, help="more logging (-vv: debug)")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    demo = commands.add_parser("demo", help="run the demo against the embedded emulator")
    demo.set_defaults(handler=_run_demo)

    from mddframes.emulator.cli import add_arguments as add_emulator_arguments
    from mddframes.emulator.cli import run as run_emulator

    emulator = commands.add_parser("emulator", help="run the local emulator in the foreground")
    add_emulator_arguments(emulator)
    emulator.set_defaults(handler=run_emulator)
    return parser


def _run_demo(args: argparse.Namespace) -> int:
    from mddframes.demo import main as demo_main

    return demo_main()


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the process exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    level = {0: logging.WARNING, 1: logging.INFO}.get(args.verbose, logging.DEBUG)
    logging.basicConfig(level=level, format="%(levelname)s %(name)s: %(message)s")
    try:
        return int(args.handler(args) or 0)
    except KeyboardInterrupt:
        return 130
    except Exception as exc:  # the CLI's one place that turns errors into words
        from mddframes.errors import MddError

        if isinstance(exc, MddError):
            print(f"error: {exc}", file=sys.stderr)
            return 1
        raise


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
