"""The ``mddframes emulator`` command: run the emulator in the foreground."""

from __future__ import annotations

import argparse
import os

from mddframes.emulator.state import DEMO_CLIENT_ID, EmulatorConfig
from mddframes.wire.dialects import DIALECTS


def _positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def _positive_float(text: str) -> float:
    value = float(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be greater than 0, got {value}")
    return value


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the emulator's options to ``parser``."""
    _add_server_arguments(parser)
    _add_data_arguments(parser)


def _add_server_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)"
    )
    parser.add_argument(
        "--port", type=int, default=0, help="port to listen on (default 0: a free port)"
    )
    parser.add_argument(
        "--db", metavar="PATH", help="SQLite file that keeps the state across restarts"
    )
    parser.add_argument(
        "--elements",
        type=_positive_int,
        metavar="N",
        help="serve scale data of N elements instead of the sample",
    )
    parser.add_argument(
        "--token-ttl",
        type=_positive_float,
        default=300,
        metavar="SECONDS",
        help="token lifetime (default 300)",
    )
    parser.add_argument(
        "--legacy", action="store_true", help="serve a service version without batch export"
    )
    parser.add_argument(
        "--tenant", default="acme", help="tenant name, also the token realm (default acme)"
    )
    parser.add_argument(
        "--client-id", default=DEMO_CLIENT_ID, help=f"API user id (default {DEMO_CLIENT_ID})"
    )
    parser.add_argument(
        "--client-secret",
        metavar="SECRET",
        help="the API user's secret (default: MDD_EMULATOR_CLIENT_SECRET, else random per "
        "start); the banner prints it only on a terminal",
    )


def _add_data_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--dialect",
        choices=list(DIALECTS),
        default="default",
        help="serve a variation of the wire format the real service might have: "
        + "; ".join(f"{name}: {entry.summary}" for name, entry in DIALECTS.items()),
    )
    parser.add_argument(
        "--replay",
        metavar="RECORDING",
        help="serve the state a recording saw (mddframes record), in its dialect, prefix "
        "and realm; writes, exports and package additions work on top of it",
    )
    parser.add_argument(
        "--dialect-from",
        metavar="RECORDING",
        help="serve the sample data in the dialect, prefix and realm learned from a recording",
    )
    parser.add_argument(
        "--misfits",
        action="store_true",
        help="serve the sample with a column whose values do not fit its declared type "
        "(external_ref of tbl-0001: BIGINT holding integers beyond 64 bits)",
    )
    parser.add_argument(
        "--export-seconds-per-element",
        type=float,
        default=0.002,
        metavar="SECONDS",
        help="time a batch export spends per element (default 0.002)",
    )


def run(args: argparse.Namespace) -> int:
    """Run the emulator until Ctrl-C; prints where it is and the API user's credentials.

    The client secret is ``--client-secret``, else ``MDD_EMULATOR_CLIENT_SECRET``, else
    random per run.
    """
    from mddframes.emulator.server import run_foreground

    config = EmulatorConfig(
        tenant=args.tenant,
        client_id=args.client_id,
        token_ttl=args.token_ttl,
        legacy=args.legacy,
        export_seconds_per_element=args.export_seconds_per_element,
        db=args.db,
        elements=args.elements,
        dialect=args.dialect,
        misfits=args.misfits,
    )
    secret = args.client_secret or os.environ.get("MDD_EMULATOR_CLIENT_SECRET")
    if secret:
        config.client_secret = secret
    return run_foreground(
        config, host=args.host, port=args.port, replay=args.replay, dialect_from=args.dialect_from
    )
