"""What one doctor check found, the report frame, and the exit code it means."""

from __future__ import annotations

import textwrap
from dataclasses import astuple, dataclass

import pandas as pd

COLUMNS: tuple[str, ...] = ("check", "row", "result", "evidence", "action")
"""The columns of the doctor's report."""

RESULTS: tuple[str, ...] = ("ok", "unknown", "differs", "breaks")
"""Every result, mildest first."""

EXIT_CODES: dict[str, int] = {"ok": 0, "unknown": 1, "differs": 1, "breaks": 2}
"""The exit code of each result; a report's code is the largest of its rows'."""


@dataclass(frozen=True)
class Finding:
    """One row of the doctor's report.

    Attributes
    ----------
    check : str
        What was checked (``"tree"``, ``"token realm"``...).
    row : str
        The row(s) of docs/wire-format.md holding the assumption (``"11"``, ``"2, 3"``).
    result : str
        ``ok`` (the assumption holds), ``differs`` (it does not, and mddframes copes),
        ``unknown`` (it could not be checked) or ``breaks`` (mddframes would fail).
    evidence : str
        What the service answered, in words (never a token or a secret).
    action : str
        What mddframes does about it, or what the user should do.
    """

    check: str
    row: str
    result: str
    evidence: str
    action: str = ""

    def __post_init__(self) -> None:
        if self.result not in RESULTS:
            raise ValueError(f"result must be one of {RESULTS}, got {self.result!r}")


def worst(results: list[str]) -> str:
    """The most serious of ``results`` (``ok`` for none)."""
    return max(results, key=RESULTS.index, default="ok")


def report_frame(findings: list[Finding], secrets: list[str]) -> pd.DataFrame:
    """The findings as the report frame, with every ``secrets`` value masked.

    The checks never put a credential in their words; masking here as well means a
    server that echoes one (in an error message, say) cannot leak it into the report.
    """
    rows = [tuple(_masked(str(value), secrets) for value in astuple(f)) for f in findings]
    return pd.DataFrame(rows, columns=list(COLUMNS)).astype("string")


def _masked(text: str, secrets: list[str]) -> str:
    for secret in secrets:
        if secret:
            text = text.replace(secret, "***")
    return text


def doctor_exit_code(report: pd.DataFrame) -> int:
    """The exit code a doctor report means.

    Parameters
    ----------
    report : pandas.DataFrame
        The frame of :func:`~mddframes.doctor.run_doctor`.

    Returns
    -------
    int
        0 when every check holds, 1 when something differs or could not be checked
        but mddframes copes, 2 when something would break.

    Raises
    ------
    ValueError
        If ``report`` has no ``result`` column or holds an unknown result.
    """
    if "result" not in report.columns:
        raise ValueError("a doctor report has a 'result' column; this frame has none")
    unknown = set(report["result"]) - set(RESULTS)
    if unknown:
        raise ValueError(f"unknown doctor results {sorted(unknown)}; known: {RESULTS}")
    return EXIT_CODES[worst(list(report["result"]))]


def doctor_text(report: pd.DataFrame) -> str:
    """A doctor report as a terminal reads it: one block per check, worst result first.

    Parameters
    ----------
    report : pandas.DataFrame
        The frame of :func:`~mddframes.doctor.run_doctor`.

    Returns
    -------
    str
        Lines such as ``differs  API prefix (wire-format row 2)``, the evidence and the
        action indented below, and a last line with the count of each result.
    """
    order = sorted(range(len(report)), key=lambda i: -RESULTS.index(report["result"].iloc[i]))
    width = max(map(len, RESULTS))
    indent = " " * (width + 2)
    lines: list[str] = []
    for i in order:
        row = report.iloc[i]
        lines.append(f"{row['result']:<{width}}  {row['check']} (wire-format row {row['row']})")
        lines.extend(_wrapped(str(row["evidence"]), indent, indent))
        if row["action"]:
            lines.extend(_wrapped(str(row["action"]), indent[:-3] + "-> ", indent))
    counts = report["result"].value_counts()
    lines.append(", ".join(f"{counts[r]} {r}" for r in reversed(RESULTS) if r in counts))
    return "\n".join(lines) + "\n"


def _wrapped(text: str, first: str, rest: str) -> list[str]:
    # hyphens stay joined: paths and ids such as '/api/mdd-backend' read whole
    return textwrap.wrap(text, 96, initial_indent=first, subsequent_indent=rest,
                         break_on_hyphens=False)  # fmt: skip
