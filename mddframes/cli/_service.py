"""The commands that read from and act on the service (tree, table, ..., deploy, doctor)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from mddframes.cli._output import frame_format, output_file, progress_wanted, write_stdout
from mddframes.errors import ExportTimeoutError

if TYPE_CHECKING:
    from mddframes.client import Client


def add_commands(commands: Any, service_command: Any) -> None:
    """Add the service commands; ``service_command(commands, name, help, handler, frame)``."""
    _add_read_commands(commands, service_command)
    _add_element_commands(commands, service_command)
    _add_doctor(commands, service_command)


def _add_read_commands(commands: Any, service_command: Any) -> None:
    tree = service_command(commands, "tree", "the element tree of a system", _tree)
    tree.add_argument("system")
    tree.add_argument("--types", help="comma-separated element types to keep")

    table = service_command(commands, "table", "the rows of a table", _table)
    table.add_argument("table_id")

    mapping = service_command(commands, "mapping", "the column mappings of a mapping", _mapping)
    mapping.add_argument("mapping_id")

    service_command(commands, "object-types", "the object types", _object_types)


def _add_element_commands(commands: Any, service_command: Any) -> None:
    packages = service_command(
        commands, "packages", "the open deployment packages of a system", _packages
    )
    packages.add_argument("system")

    add = service_command(
        commands, "package-add", "add elements to an open deployment package", _package_add
    )
    add.add_argument("system")
    add.add_argument("package")
    ids_argument(add)

    export = service_command(
        commands,
        "export",
        "generate scripts for elements as one zip (batch export; single exports on an older "
        "service)",
        _export,
        frame=False,
    )
    export.add_argument("object_type", help="object type id (selects the template)")
    ids_argument(export)
    export.add_argument("--dest", type=Path, required=True, help="zip file to write")
    export.set_defaults(interrupted=_export_interrupted)
    export.add_argument("--timeout", type=float, default=None, help="seconds to wait for the task")
    export.add_argument("--extract", type=Path, help="also extract the scripts into this folder")
    export.add_argument(
        "--task",
        metavar="TASK_ID",
        help="attach to a batch export task started earlier (an interrupted or timed-out "
        "export prints its id) and download its zip; no ids needed",
    )

    deploy = service_command(
        commands, "deploy", "mark elements as deployed (exit 3 if some failed)", _deploy
    )
    deploy.add_argument("deployment_id")
    ids_argument(deploy)

    service_command(
        commands,
        "confirm-deployed",
        "mark elements as deployed from a deployment info file ('push to git')",
        _confirm_deployed,
    ).add_argument("info_file", type=Path)


def _add_doctor(commands: Any, service_command: Any) -> None:
    doctor = service_command(
        commands,
        "doctor",
        "check the tenant, read-only, against the wire format mddframes assumes "
        "(exit 0 all hold, 1 differs but copes or could not be checked, 2 would break)",
        _doctor,
    )
    doctor.add_argument(
        "system",
        nargs="?",
        metavar="SYSTEM",
        help="also read this system's tree, an element, a table, a mapping and its packages",
    )
    offline = doctor.add_argument_group("a recording instead of the tenant (offline)")
    offline.add_argument(
        "--recording",
        type=Path,
        metavar="HAR",
        help="run the checks on a recording (mddframes record), offline; SYSTEM defaults "
        "to the first system it read",
    )
    offline.add_argument(
        "--write-profile",
        type=Path,
        metavar="FILE",
        help="with --recording: write what it learned (realm, API prefix, the dialect) "
        "as a profile of the configuration file to FILE",
    )
    offline.add_argument(
        "--profile-name",
        default="recorded",
        help="the name of the profile --write-profile writes (default: recorded)",
    )
    connected = doctor.get_default("handler")
    doctor.set_defaults(
        handler=lambda args: _doctor_offline(args) if args.recording else connected(args)
    )


def ids_argument(parser: argparse.ArgumentParser) -> None:
    """Element ids as arguments and/or ``--ids-file``."""
    parser.add_argument("ids", nargs="*", metavar="ID", help="element ids")
    parser.add_argument("--ids-file", type=Path, help="a file with one id per line ('-' for stdin)")


def read_ids(args: argparse.Namespace, *, required: bool = True) -> list[str]:
    """The ids of the arguments and of ``--ids-file``; usage error when none and required."""
    ids = list(getattr(args, "ids", None) or [])
    if args.ids_file is not None:
        text = sys.stdin.read() if str(args.ids_file) == "-" else args.ids_file.read_text("utf-8")
        ids.extend(line.strip() for line in text.splitlines() if line.strip())
    if not ids and required:
        args.parser.error("give ids as arguments or with --ids-file")
    return ids


def _tree(client: Client, args: argparse.Namespace) -> pd.DataFrame:
    types = [t.strip() for t in args.types.split(",") if t.strip()] if args.types else None
    return client.read_tree(args.system, types=types)


def _table(client: Client, args: argparse.Namespace) -> pd.DataFrame:
    return client.read_table(args.table_id)


def _mapping(client: Client, args: argparse.Namespace) -> pd.DataFrame:
    return client.read_mapping(args.mapping_id)


def _object_types(client: Client, args: argparse.Namespace) -> pd.DataFrame:
    return client.read_object_types()


def _packages(client: Client, args: argparse.Namespace) -> pd.DataFrame:
    return client.read_packages(args.system)


def _package_add(client: Client, args: argparse.Namespace) -> pd.DataFrame:
    return client.add_to_package(args.system, args.package, read_ids(args))


def _export(client: Client, args: argparse.Namespace) -> None:
    output_file(args.dest)  # its folder made like every output's
    if args.task is not None:
        task = client.export_task(args.task)
        task.wait(args.timeout, progress=progress_wanted(args))
        archive = task.download(args.dest)
    else:
        try:
            archive = client.export_batch(
                read_ids(args), args.object_type, args.dest, timeout=args.timeout,
                progress=progress_wanted(args),
            )  # fmt: skip
        except KeyboardInterrupt as exc:
            task_id = getattr(exc, "export_task_id", None)
            if task_id is not None:
                args.messages.say(None, _reattach(args, task_id, "interrupted"))
            raise
        except ExportTimeoutError as exc:
            args.messages.say(None, _reattach(args, exc.task_id, "timed out"))
            raise
    args.messages.note(f"wrote {args.dest}")
    if args.extract is not None:
        archive.extract(args.extract)
        args.messages.note(f"extracted into {args.extract}")


def _export_interrupted(args: argparse.Namespace) -> str:
    """What an interrupted export left: no zip (a batch task says above how to fetch it)."""
    return f"no zip was written to {args.dest}. Run the same command again to start over" + (
        f" (or fetch task {args.task} with --task)" if args.task else ""
    )


def _reattach(args: argparse.Namespace, task_id: str, what: str) -> str:
    """The command that picks up a batch export task where this run left it."""
    return (
        f"export {what}: task {task_id} still runs on the service; download its zip later "
        f"with: mddframes export {args.object_type} --task {task_id} --dest {args.dest}"
    )


def _deploy(client: Client, args: argparse.Namespace) -> pd.DataFrame:
    return client.deploy_many(read_ids(args), args.deployment_id, progress=progress_wanted(args))


def _confirm_deployed(client: Client, args: argparse.Namespace) -> pd.DataFrame:
    return client.confirm_deployed(args.info_file)


def _doctor(client: Client, args: argparse.Namespace) -> tuple[pd.DataFrame, int] | int:
    from mddframes.doctor import doctor_exit_code, doctor_text, run_doctor

    frame = run_doctor(client.api, args.system)
    code = int(doctor_exit_code(frame))
    if frame_format(args) == "text" and getattr(args, "output", None) is None:
        write_stdout(doctor_text(frame))  # a block per check reads better than a wide table
        return code
    return frame, code


def _doctor_offline(args: argparse.Namespace) -> int:
    from mddframes.cli._doctor_offline import doctor_recording
    from mddframes.cli._output import emit
    from mddframes.doctor import doctor_exit_code, doctor_text
    from mddframes.recording.offline import SEND_ADVICE, write_profile

    frame, learned, recording = doctor_recording(args.recording, args.system)
    code = int(doctor_exit_code(frame))
    if frame_format(args) == "text" and getattr(args, "output", None) is None:
        write_stdout(doctor_text(frame))
    else:
        emit(frame, args)
    for line in learned.uncovered:
        args.messages.say("not covered", f"{line}; {SEND_ADVICE}")
    if args.write_profile is not None:
        write_profile(learned, recording, args.write_profile, args.profile_name)
        args.messages.note(
            f"wrote the profile {args.profile_name!r} (dialect {learned.dialect}) to "
            f"{args.write_profile}: copy its table into the configuration file and "
            f"connect with --profile {args.profile_name}"
        )
    return code
