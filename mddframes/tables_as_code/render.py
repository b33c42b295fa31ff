"""A plan in words: text for a terminal, Markdown for a pull-request comment.

(JSON is the plan file's document, :meth:`Plan.to_dict`.)
"""

from __future__ import annotations

import html
from typing import Any

from mddframes.codec import depth
from mddframes.tables_as_code.plan import Plan, PlannedObject

#: How many changed cells or problems the text and Markdown show per object.
SHOWN = 10

_MARK = {"changes": "~", "refused": "!", "failed": "x", "unchanged": "="}


def _value(value: Any, limit: int = 60) -> str:
    text = value if isinstance(value, str) else depth.dumps(value, ensure_ascii=False)
    text = text.replace("\n", "\\n")
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _lines(entry: PlannedObject) -> list[str]:
    """The detail lines of one object (changed cells, added/deleted rows, problems)."""
    lines = []
    for change in entry.changes[:SHOWN]:
        kind = change.get("change")
        if kind == "changed":
            lines.append(
                f"row {change['row']} {change['column']}: {_value(change['old'])} -> "
                f"{_value(change['new'])}"
            )
        elif kind == "added":
            lines.append(f"+ row {change['row']}: {_value(change['new'], 100)}")
        elif kind == "deleted":
            lines.append(f"- row {change['row']}: {_value(change['old'], 100)}")
    hidden = (
        entry.changedCells + entry.addedRows + entry.deletedRows - min(len(entry.changes), SHOWN)
    )
    if entry.changes and hidden > 0:
        lines.append(f"... and {hidden} more")
    for problem in entry.problems[:SHOWN]:
        where = ", ".join(
            f"{k} {problem[k]}" for k in ("row", "column") if problem.get(k) is not None
        )
        lines.append(f"{problem.get('problem')}" + (f" ({where})" if where else ""))
    lines.extend(entry.notes)
    return lines


def _summary(plan: Plan) -> str:
    counts = plan.counts
    return (
        f"{counts['changes']} to change, {counts['unchanged']} unchanged, "
        f"{counts['refused']} refused, {counts['failed']} failed"
    )


def _headline(entry: PlannedObject) -> str:
    what = entry.detail or entry.status
    if entry.status == "changes":
        parts = []
        if entry.changedCells:
            parts.append(f"{entry.changedCells} cell(s) changed")
        if entry.addedRows:
            parts.append(f"{entry.addedRows} row(s) added")
        if entry.deletedRows:
            parts.append(f"{entry.deletedRows} row(s) deleted")
        what = ", ".join(parts) or "changed outside the rows"
    return what


def plan_text(plan: Plan, *, verbose: bool = False) -> str:
    """The plan for a terminal: one block per object that is not unchanged, then counts."""
    out = []
    for entry in plan.objects:
        if entry.status == "unchanged" and not verbose:
            continue
        name = f"{entry.kind} {entry.id!r}" if entry.id else entry.kind
        out.append(
            f"{_MARK[entry.status]} {name} ({entry.file}): {entry.status}: {_headline(entry)}"
        )
        out.extend(f"    {line}" for line in _lines(entry))
    out.append(f"Plan: {_summary(plan)}.")
    return "\n".join(out) + "\n"


def _cell(text: Any) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def plan_markdown(plan: Plan) -> str:
    """The plan as Markdown (a pull-request comment): a table, then details per object."""
    out = [f"### mddframes plan: {_summary(plan)}", ""]
    shown = [e for e in plan.objects if e.status != "unchanged"]
    if not shown:
        out.append("Nothing would change.")
        return "\n".join(out) + "\n"
    out += ["| | kind | id | file | result |", "|---|---|---|---|---|"]
    for entry in shown:
        out.append(
            f"| {_MARK[entry.status]} | {entry.kind} | `{_cell(entry.id)}` | `{_cell(entry.file)}` "
            f"| {entry.status}: {_cell(_headline(entry))} |"
        )
    for entry in shown:
        lines = _lines(entry)
        if not lines:
            continue
        out += [
            "",
            f"<details><summary>{entry.kind} <code>{html.escape(entry.id)}</code></summary>",
            "",
        ]
        out += ["```", *lines, "```", "", "</details>"]
    return "\n".join(out) + "\n"
