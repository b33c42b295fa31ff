"""The report of the completeness check, and the order of its lines.

A :class:`CheckReport` is made from problem records, dicts with the keys of
:data:`REPORT_COLUMNS` and, from the stages of :mod:`mddframes.codec.check`, two more:
``rank`` (the stage's rank) and ``at`` (where in the payload, a tuple of positions the
stage defines). The lines are sorted by :func:`report_order`, never by the order the
records were made in: the check of a whole document and the check of a large table
batch by batch (:mod:`mddframes.codec.streamed_overlay`) make the same records in
different orders and must give the same report.
"""

from __future__ import annotations

import functools
import html
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from itertools import chain
from typing import Any

import pandas as pd

from mddframes.codec.values import ABSENT

#: The columns of every report frame, in this order.
REPORT_COLUMNS = ("level", "table", "row", "column", "problem", "old", "new")

_HTML_LIMIT = 200

#: A problem record, keyed by column name. The key type is ``Any`` because records also
#: come back from a report frame's ``to_dict("records")``, which pandas-stubs types
#: ``dict[Hashable, Any]``, and a ``Mapping`` is invariant in its key type.
ProblemRecord = Mapping[Any, Any]


def report_order(record: ProblemRecord) -> tuple[bool, int, tuple[int, ...]]:
    """The sort key of a problem record: errors first, then by stage rank, then by place.

    Records without ``rank`` and ``at`` (lines taken back from a report's frame, as
    :meth:`CheckReport.concat` does) keep their order among themselves.
    """
    return record["level"] != "error", record.get("rank", 0), record.get("at", ())


@functools.cache
def _empty_frame() -> pd.DataFrame:
    frame = pd.DataFrame(columns=list(REPORT_COLUMNS), dtype=object)
    return frame.astype({"level": "string", "problem": "string"})


@dataclass(frozen=True)
class CheckReport:
    """The problems of a payload, one per line.

    Attributes
    ----------
    records : list of dict
        The problems in report order (errors first, then :func:`report_order`), each
        with the keys of ``REPORT_COLUMNS`` (and, from the check's stages, the ``rank``
        and ``at`` that ordered it).
    frame : pandas.DataFrame
        ``records`` as a frame, made the first time it is asked for: columns ``level``
        ("error" or "warning"), ``table`` (object id), ``row`` (the row's frame index
        label: its original position, or the label of a new row), ``column``,
        ``problem``, ``old``, ``new``.
    """

    records: list[ProblemRecord]

    @classmethod
    def from_records(cls, records: Iterable[ProblemRecord]) -> CheckReport:
        """A report from problem records.

        Parameters
        ----------
        records : iterable of dict
            One dict per problem, with the keys of ``REPORT_COLUMNS``, optionally
            ``rank`` and ``at`` (see :func:`report_order`).

        Returns
        -------
        CheckReport
            The report, its problems in report order.
        """
        return cls(sorted(records, key=report_order))  # stable

    @functools.cached_property
    def frame(self) -> pd.DataFrame:
        """The problems as a frame (see the class's attributes)."""
        if not self.records:
            return _empty_frame().copy()
        frame = pd.DataFrame(
            [[r[c] for c in REPORT_COLUMNS] for r in self.records],
            columns=list(REPORT_COLUMNS),
            dtype=object,
        )
        frame["level"] = frame["level"].astype("string")
        frame["problem"] = frame["problem"].astype("string")
        return frame

    @classmethod
    def concat(cls, reports: Iterable[CheckReport]) -> CheckReport:
        """One report of several objects' reports (errors still first).

        Parameters
        ----------
        reports : iterable of CheckReport
            The reports to join, in order.
        """
        # without their rank and place, each report's lines keep their order
        lines = chain.from_iterable(r.records for r in reports)
        return cls.from_records({c: line[c] for c in REPORT_COLUMNS} for line in lines)

    @property
    def errors(self) -> pd.DataFrame:
        """The error lines."""
        return self.frame[self.frame["level"] == "error"]

    @property
    def warnings(self) -> pd.DataFrame:
        """The warning lines."""
        return self.frame[self.frame["level"] == "warning"]

    @property
    def ok(self) -> bool:
        """True when the report has no errors (warnings allowed)."""
        return all(record["level"] != "error" for record in self.records)

    def __len__(self) -> int:
        return len(self.records)

    @property
    def summary(self) -> str:
        """One paragraph: counts, then the first five errors in words (:meth:`summarize`)."""
        return self.summarize()

    def summarize(self, limit: int = 5) -> str:
        """One paragraph: counts, then the first ``limit`` errors in words.

        Parameters
        ----------
        limit : int, default 5
            How many errors to name.

        Returns
        -------
        str
            The paragraph.
        """
        errors = [r for r in self.records if r["level"] == "error"]
        warnings = sum(r["level"] == "warning" for r in self.records)
        text = f"{len(errors)} error(s), {warnings} warning(s)"
        lines = [_describe_line(r) for r in errors[:limit]]
        if lines:
            text += ": " + "; ".join(lines)
            if len(errors) > limit:
                text += f"; and {len(errors) - limit} more"
        return text

    def __repr__(self) -> str:
        return f"<CheckReport {'ok' if self.ok else 'NOT ok'}: {self.summary}>"

    def _repr_html_(self) -> str:
        status = "ok" if self.ok else "errors: nothing may be sent"
        head = (
            f"<p><b>Completeness check: {html.escape(status)}</b> "
            f"({len(self.errors)} error(s), {len(self.warnings)} warning(s))</p>"
        )
        if not len(self.frame):
            return head
        rows = []
        for record in self.frame.head(_HTML_LIMIT).to_dict("records"):
            colour = "#fdd" if record["level"] == "error" else "#ffd"
            cells = "".join(f"<td>{html.escape(_short(record[c]))}</td>" for c in REPORT_COLUMNS)
            rows.append(f'<tr style="background:{colour}">{cells}</tr>')
        header = "".join(f"<th>{c}</th>" for c in REPORT_COLUMNS)
        more = len(self.frame) - _HTML_LIMIT
        tail = f"<p>... and {more} more line(s)</p>" if more > 0 else ""
        return f"{head}<table><tr>{header}</tr>{''.join(rows)}</table>{tail}"


def _short(value: Any, limit: int = 80) -> str:
    if value is None or value is pd.NA:
        return ""
    if isinstance(value, dict | list):
        text = json.dumps(value, ensure_ascii=False, default=str)
    else:
        text = repr(value) if isinstance(value, str) or value is ABSENT else str(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _describe_line(record: ProblemRecord) -> str:
    where = [f"{record['problem']}"]
    if record["table"] is not None:
        where.append(f"table {record['table']!r}")
    if record["row"] is not None:
        where.append(f"row {record['row']!r}")
    if record["column"] is not None:
        where.append(f"column {record['column']!r}")
    text = " at ".join([where[0], ", ".join(where[1:])]) if len(where) > 1 else where[0]
    if record["old"] is not None or record["new"] is not None:
        text += f" (old {_short(record['old'], 40)}, new {_short(record['new'], 40)})"
    return text
