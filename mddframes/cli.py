"""The ``mddframes`` command line: the demo, the emulator, and commands for pipelines.

Pipeline commands connect with :func:`mddframes.connect`: settings come from ``--tenant``,
``--base-url`` and ``--profile``, then the ``MDD_*`` environment variables, then the
profile file. The client secret is never taken from the command line (other users of the
machine can read process arguments); set ``MDD_CLIENT_SECRET`` or use a profile.

Exit codes: 0 success; 1 an error (its message on stderr); 2 bad usage; 3 a bulk command
whose result has failed rows (the result is still printed).
"""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

EXIT_PARTIAL_FAILURE = 3


def build_parser() -> argparse.ArgumentParser:
    """Build the argument parser with one sub-command per job."""
    parser = argparse.ArgumentParser(
        prog="mddframes",
        description="pandas DataFrames over a metadata-management service.",
    )
    parser.add_argument(
        "-v", "--verbose", action="count", default=0, help="more logging (-vv: debug)"
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    demo = commands.add_parser("demo", help="run the demo against the embedded emulator")
    demo.set_defaults(handler=_run_demo)

    from mddframes.emulator.cli import add_arguments as add_emulator_arguments
    from mddframes.emulator.cli import run as run_emulator

    emulator = commands.add_parser("emulator", help="run the local emulator in the foreground")
    add_emulator_arguments(emulator)
    emulator.set_defaults(handler=run_emulator)

    _add_service_commands(commands)
    return parser


def _connection_arguments(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("connection (else MDD_* variables, else the profile file)")
    group.add_argument("--tenant", help="tenant name (MDD_TENANT)")
    group.add_argument("--base-url", help="base URL, may contain {tenant} (MDD_BASE_URL)")
    group.add_argument("--profile", help="profile of ~/.config/mddframes/config.toml (MDD_PROFILE)")


def _output_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "-o",
        "--output",
        type=Path,
        help="write the frame to this file (.csv or .json); default CSV on stdout",
    )


def _ids_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("ids", nargs="*", metavar="ID", help="element ids")
    parser.add_argument(
        "--ids-file", type=Path, help="a file with one element id per line ('-' for stdin)"
    )


def _service_command(
    commands: Any, name: str, help: str, handler: Callable[[Any, argparse.Namespace], Any]
) -> argparse.ArgumentParser:
    command = commands.add_parser(name, help=help, description=help)
    _connection_arguments(command)
    command.set_defaults(handler=lambda args: _with_client(args, handler))
    return command


def _add_service_commands(commands: Any) -> None:
    tree = _service_command(commands, "tree", "the element tree of a system", _tree)
    tree.add_argument("system")
    tree.add_argument("--types", help="comma-separated element types to keep")
    _output_argument(tree)

    table = _service_command(commands, "table", "the rows of a table", _table)
    table.add_argument("table_id")
    _output_argument(table)

    mapping = _service_command(commands, "mapping", "the column mappings of a mapping", _mapping)
    mapping.add_argument("mapping_id")
    _output_argument(mapping)

    object_types = _service_command(commands, "object-types", "the object types", _object_types)
    _output_argument(object_types)

    packages = _service_command(
        commands, "packages", "the open deployment packages of a system", _packages
    )
    packages.add_argument("system")
    _output_argument(packages)

    add = _service_command(
        commands, "package-add", "add elements to an open deployment package", _package_add
    )
    add.add_argument("system")
    add.add_argument("package")
    _ids_argument(add)
    _output_argument(add)

    export = _service_command(
        commands,
        "export",
        "generate scripts for elements as one zip (batch export; single exports on an older service)",
        _export,
    )
    export.add_argument("object_type", help="object type id (selects the template)")
    _ids_argument(export)
    export.add_argument("--dest", type=Path, required=True, help="zip file to write")
    export.add_argument("--timeout", type=float, default=None, help="seconds to wait for the task")
    export.add_argument("--extract", type=Path, help="also extract the scripts into this folder")

    deploy = _service_command(commands, "deploy", "mark elements as deployed", _deploy)
    deploy.add_argument("deployment_id")
    _ids_argument(deploy)
    _output_argument(deploy)

    confirm = _service_command(
        commands,
        "confirm-deployed",
        "mark elements as deployed from a deployment info file ('push to git')",
        _confirm_deployed,
    )
    confirm.add_argument("info_file", type=Path)
    _output_argument(confirm)


# -- handlers -----------------------------------------------------------------------


def _tree(client: Any, args: argparse.Namespace) -> pd.DataFrame:
    types = [t.strip() for t in args.types.split(",") if t.strip()] if args.types else None
    return client.read_tree(args.system, types=types)


def _table(client: Any, args: argparse.Namespace) -> pd.DataFrame:
    return client.read_table(args.table_id)


def _mapping(client: Any, args: argparse.Namespace) -> pd.DataFrame:
    return client.read_mapping(args.mapping_id)


def _object_types(client: Any, args: argparse.Namespace) -> pd.DataFrame:
    return client.read_object_types()


def _packages(client: Any, args: argparse.Namespace) -> pd.DataFrame:
    return client.read_packages(args.system)


def _package_add(client: Any, args: argparse.Namespace) -> pd.DataFrame:
    return client.add_to_package(args.system, args.package, _read_ids(args))


def _export(client: Any, args: argparse.Namespace) -> None:
    archive = client.export_batch(
        _read_ids(args), args.object_type, args.dest, timeout=args.timeout
    )
    print(f"wrote {args.dest}", file=sys.stderr)
    if args.extract is not None:
        archive.extract(args.extract)
        print(f"extracted into {args.extract}", file=sys.stderr)
    return None


def _deploy(client: Any, args: argparse.Namespace) -> pd.DataFrame:
    return client.deploy_many(_read_ids(args), args.deployment_id)


def _confirm_deployed(client: Any, args: argparse.Namespace) -> pd.DataFrame:
    return client.confirm_deployed(args.info_file)


# -- plumbing -----------------------------------------------------------------------


def _read_ids(args: argparse.Namespace) -> list[str]:
    ids = list(args.ids)
    if args.ids_file is not None:
        text = sys.stdin.read() if str(args.ids_file) == "-" else args.ids_file.read_text("utf-8")
        ids.extend(line.strip() for line in text.splitlines() if line.strip())
    if not ids:
        raise SystemExit("error: give element ids as arguments or with --ids-file")
    return ids


def _with_client(
    args: argparse.Namespace, handler: Callable[[Any, argparse.Namespace], Any]
) -> int:
    from mddframes import connect

    with connect(args.tenant, base_url=args.base_url, profile=args.profile) as client:
        result = handler(client, args)
    if result is None:
        return 0
    _emit(result, getattr(args, "output", None))
    if (
        isinstance(result, pd.DataFrame)
        and "ok" in result.columns
        and not result["ok"].fillna(False).all()
    ):
        return EXIT_PARTIAL_FAILURE
    return 0


def _emit(frame: pd.DataFrame, output: Path | None) -> None:
    """Write a frame as CSV (stdout or .csv) or JSON records (.json)."""
    if output is not None and output.suffix.lower() == ".json":
        output.write_text(frame.to_json(orient="records", force_ascii=False, indent=1), "utf-8")
    elif output is not None:
        frame.to_csv(output, index=False)
    else:
        frame.to_csv(sys.stdout, index=False)


def _run_demo(args: argparse.Namespace) -> int:
    from mddframes.demo import main as demo_main

    return demo_main()


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the process exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    level = {0: logging.WARNING, 1: logging.INFO}.get(args.verbose, logging.DEBUG)
    logging.basicConfig(level=level, format="%(levelname)s %(name)s: %(message)s")
    from mddframes.errors import MddError

    try:
        return int(args.handler(args) or 0)
    except KeyboardInterrupt:
        return 130
    except MddError as exc:  # the CLI's one place that turns library errors into words
        print(f"error: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
