"""CSV text that tells a missing cell from an empty string (RFC 4180 plus one rule).

Python's :mod:`csv` reads ``,,`` and ``,"",`` alike (3.11 has no ``QUOTE_NOTNULL``
reader), but a table cell may be null or the empty string, and the plan must not
turn one into the other. The rule here: an empty *unquoted* field is missing (None),
a quoted one (``""``) is the empty string. Fields are quoted when they are empty
strings or hold a comma, a quote, a line break, or leading or trailing spaces;
quotes inside are doubled. Lines end with ``\\n``; ``\\r\\n`` and ``\\r`` are read too,
as is a UTF-8 byte-order mark (spreadsheet programs write one).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

_NEEDS_QUOTES = re.compile(r'[",\r\n]|^\s|\s$')
# one field: quoted (group 1) or unquoted (group 2), then what ends it (group 3)
_FIELD = re.compile(r'(?:"((?:[^"]|"")*)"|([^,"\r\n]*))(,|\r\n|\n|\r|$)')


class CsvSyntaxError(ValueError):
    """CSV text that does not parse; the message names the line."""


def format_field(value: str | None) -> str:
    """One field: None -> nothing, a string -> itself, quoted when it must be."""
    if value is None:
        return ""
    if value == "" or _NEEDS_QUOTES.search(value):
        return '"' + value.replace('"', '""') + '"'
    return value


def format_csv(rows: Iterable[Sequence[str | None]]) -> str:
    """CSV text of ``rows`` (header included by the caller), one line per row."""
    return "".join(",".join(format_field(v) for v in row) + "\n" for row in rows)


def parse_csv(text: str) -> list[tuple[int, list[str | None]]]:
    """The records of CSV text, each with its line number (1-based); blank lines skipped.

    Raises
    ------
    CsvSyntaxError
        A quote inside an unquoted field, text after a closing quote, or an
        unclosed quote.
    """
    if text.startswith("\ufeff"):
        text = text[1:]
    records: list[tuple[int, list[str | None]]] = []
    position, line, length = 0, 1, len(text)
    while position < length:
        start_line = line
        fields: list[str | None] = []
        while True:
            match = _FIELD.match(text, position)
            if match is None or (match.end() == position and position < length):
                raise CsvSyntaxError(_where(text, position, line))
            quoted, plain, end = match.groups()
            if quoted is not None:
                fields.append(quoted.replace('""', '"'))
                line += quoted.count("\n") + quoted.count("\r") - quoted.count("\r\n")
            else:
                fields.append(plain if plain else None)
            position = match.end()
            if end == ",":
                continue
            if end:
                line += 1
            break
        if fields != [None]:
            records.append((start_line, fields))
        if position >= length:
            break
    return records


def _where(text: str, position: int, line: int) -> str:
    snippet = text[position : position + 20].split("\n", 1)[0]
    if text.startswith('"', position):
        return f"line {line}: a quoted field is not closed, or text follows its closing quote"
    return f"line {line}: a quote inside an unquoted field near {snippet!r} (quote the field)"
