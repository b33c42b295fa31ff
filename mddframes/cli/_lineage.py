"""Lineage and search on the command line (``mddframes lineage``, ``mddframes search``)."""

from __future__ import annotations

import argparse
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from mddframes.cli._output import output_file, progress_wanted, write_stdout

if TYPE_CHECKING:
    from mddframes.client import Client

#: The formats of ``lineage``: the frame's three, and the graph's two.
GRAPH_FORMATS = ("dot", "mermaid")


def add_commands(commands: Any, service_command: Any) -> None:
    """Add ``lineage`` and ``search``; ``service_command(commands, name, help, handler, frame)``."""
    lineage = service_command(
        commands,
        "lineage",
        "where an element or column comes from, what it feeds, or what a change to a "
        "column would reach (from the system's mappings)",
        _lineage,
        frame=False,
    )
    lineage.set_defaults(interrupted=_read_only_interrupted)
    lineage.add_argument("system")
    lineage.add_argument(
        "element", metavar="ELEMENT[.COLUMN]", help="an element id or name, or element_id.column"
    )
    way = lineage.add_mutually_exclusive_group()
    way.add_argument(
        "--upstream", dest="question", action="store_const", const="upstream",
        help="what feeds it (the default)",
    )  # fmt: skip
    way.add_argument(
        "--downstream", dest="question", action="store_const", const="downstream",
        help="what it feeds",
    )  # fmt: skip
    way.add_argument(
        "--impact", dest="question", action="store_const", const="impact",
        help="every column that depends on this column, with the transformations on the way",
    )  # fmt: skip
    lineage.add_argument("--depth", type=int, help="how many mappings away to go (default: all)")
    out = lineage.add_argument_group("output")
    out.add_argument(
        "--format", choices=("csv", "json", "text", *GRAPH_FORMATS),
        help="csv, json or text: the frame of what was found; dot (Graphviz) or mermaid: "
        "the graph (default: text on a terminal, else csv; with -o by its suffix)",
    )  # fmt: skip
    out.add_argument("-o", "--output", type=Path, help="write to this file instead of stdout")

    search = service_command(
        commands,
        "search",
        "where a text occurs in a system: element names, table cells, mapping columns",
        _search,
    )
    search.set_defaults(interrupted=_read_only_interrupted)
    search.add_argument("system")
    search.add_argument("text", help="plain text, any case (a regular expression with --regex)")
    search.add_argument("--regex", action="store_true", help="TEXT is a regular expression")
    search.add_argument(
        "--in", dest="places", default="names,tables,mappings",
        help="comma-separated places to look: names, tables, mappings (default: all)",
    )  # fmt: skip


def _read_only_interrupted(args: argparse.Namespace) -> str:
    """An interrupted read-only command: nothing to resume or clean up."""
    return (
        f"{args.command} stopped before it read the whole system {args.system!r}; it "
        "changes nothing, so nothing is left behind: run it again for the answer"
    )


def _lineage(client: Client, args: argparse.Namespace) -> pd.DataFrame | int:
    from mddframes.lineage import Lineage, to_dot, to_mermaid

    graph = Lineage(client.read_lineage(args.system, progress=progress_wanted(args)))
    question = args.question or "upstream"
    if question == "impact":
        if args.depth is not None:
            args.parser.error("--depth does not apply to --impact (it follows every hop)")
        answer = graph.impact(args.element)
    elif question == "downstream":
        answer = graph.downstream(args.element, depth=args.depth)
    else:
        answer = graph.upstream(args.element, depth=args.depth)
    fmt = args.format or _graph_format_of(args.output)
    if fmt in GRAPH_FORMATS:
        text = to_dot(answer) if fmt == "dot" else to_mermaid(answer)
        if args.output is not None:
            output_file(args.output).write_text(text, "utf-8")
        else:
            write_stdout(text)
        return 0
    return answer.to_frame()


def _graph_format_of(output: Path | None) -> str | None:
    suffix = output.suffix.lower() if output is not None else ""
    return {".dot": "dot", ".gv": "dot", ".mmd": "mermaid"}.get(suffix)


def _search(client: Client, args: argparse.Namespace) -> pd.DataFrame:
    places = tuple(p.strip() for p in args.places.split(",") if p.strip())
    pattern: str | re.Pattern[str] = args.text
    if args.regex:
        try:
            pattern = re.compile(args.text)
        except re.error as exc:
            args.parser.error(f"TEXT is not a regular expression: {exc}")
    return client.search(args.system, pattern, in_=places, progress=progress_wanted(args))
