"""Script generation: renders an object type's jinja2 template over an element's raw data.

Templates run with ``StrictUndefined`` (a misspelt name fails loudly instead of
printing nothing) and without autoescaping (the output is SQL, YAML, Markdown,
not HTML). Compiled templates are cached by their source text, so a changed
template is compiled afresh and an unchanged one once.

File names
----------
``<element name>.<fileExtension>``, made safe for any common file system:

1. the name is NFC-normalised;
2. each of ``\\ / : * ? " < > |`` and each control character becomes ``_``;
3. each leading or trailing dot or space becomes ``_`` (so ``.``, ``..`` and
   hidden or Windows-trailing names cannot occur; ``..`` becomes ``__``);
4. an empty name becomes ``_``; a Windows device name (``CON``, ``PRN``, ``AUX``,
   ``NUL``, ``COM1``-``COM9``, ``LPT1``-``LPT9``, any case) gets ``_`` appended;
5. the result is cut to 200 characters; then ``.`` and the extension (itself made
   safe the same way, ``txt`` when the object type has none) are appended.

Distinct names can still meet (``a/b`` and ``a_b``); whoever puts several files
in one folder must make the names unique.

Template helpers (jinja2 filters): ``ident`` (a SQL identifier, double-quoted
unless plain), ``sql_str`` (a SQL string literal), ``sql_type`` (a column's SQL
type from its ``dataType``), ``sql_expression`` (a column mapping's SELECT
expression), ``yaml_str`` (any JSON value as a YAML flow scalar), ``md`` (text
safe in a Markdown table cell), ``one_line`` (newlines folded), ``having(key)``
(items whose ``key`` is set).
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Iterable, Mapping
from functools import lru_cache
from typing import Any

import jinja2

JSON = dict[str, Any]

_PLAIN_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_UNSAFE_FILE_CHARACTERS = re.compile(r'[\\/:*?"<>|\x00-\x1f\x7f]')
_WINDOWS_DEVICES = frozenset(
    {"CON", "PRN", "AUX", "NUL"}
    | {f"COM{i}" for i in range(1, 10)}
    | {f"LPT{i}" for i in range(1, 10)}
)
_MAX_STEM = 200

_SQL_TYPES = {
    "STRING": "VARCHAR",
    "INTEGER": "INTEGER",
    "BIGINT": "BIGINT",
    "DOUBLE": "DOUBLE PRECISION",
    "BOOLEAN": "BOOLEAN",
    "DATE": "DATE",
    "TIMESTAMP": "TIMESTAMP",
    "JSON": "JSON",
}


class TemplateNotApplicableError(ValueError):
    """The object type does not apply to the element's type."""


class TemplateRenderError(RuntimeError):
    """The template failed on this raw data (names the object type and the element)."""


def render_script(object_type: Mapping[str, Any], raw_data: Mapping[str, Any]) -> tuple[str, str]:
    """Render one element's script with one object type.

    Parameters
    ----------
    object_type : mapping
        ``{"id", "name", "fileExtension", "elementTypes", "template", ...}``.
    raw_data : mapping
        What :func:`mddframes.emulator.rawdata.build_raw_data` returns.

    Returns
    -------
    (str, str)
        The file name (see the module's rule) and the script text.

    Raises
    ------
    TemplateNotApplicableError
        (a ``ValueError``) The element's type is not in ``elementTypes``.
    TemplateRenderError
        The template source does not compile or fails on this raw data.
    """
    element = raw_data["element"]
    element_type = element.get("type")
    allowed = object_type.get("elementTypes") or []
    type_id = object_type.get("id")
    if element_type not in allowed:
        raise TemplateNotApplicableError(
            f"object type {type_id!r} does not apply to element type {element_type!r} "
            f"(element {element.get('id')!r}); it applies to: {', '.join(allowed) or 'nothing'}"
        )
    source = object_type.get("template")
    if not isinstance(source, str):
        raise TemplateRenderError(f"object type {type_id!r} has no template source")
    try:
        text = _compile(source).render(**raw_data)
    except jinja2.TemplateError as exc:
        raise TemplateRenderError(
            f"object type {type_id!r} failed to render element {element.get('id')!r}: "
            f"{type(exc).__name__}: {exc}"
        ) from exc
    return file_name(element.get("name"), object_type.get("fileExtension")), text


def file_name(name: Any, extension: Any) -> str:
    """``<name>.<extension>`` made safe for a file system (rule in the module docstring)."""
    return f"{_safe_part(name)[:_MAX_STEM]}.{_safe_part(extension or 'txt')}"


def _safe_part(text: Any) -> str:
    part = unicodedata.normalize("NFC", "" if text is None else str(text))
    part = _UNSAFE_FILE_CHARACTERS.sub("_", part)
    leading = len(part) - len(part.lstrip(". "))
    trailing = len(part) - len(part.rstrip(". "))
    if leading == len(part):
        part = "_" * len(part) or "_"
    else:
        part = "_" * leading + part[leading : len(part) - trailing] + "_" * trailing
    if part.split(".")[0].upper() in _WINDOWS_DEVICES:
        part += "_"
    return part


@lru_cache(maxsize=128)
def _compile(source: str) -> jinja2.Template:
    return _environment().from_string(source)


@lru_cache(maxsize=1)
def _environment() -> jinja2.Environment:
    environment = jinja2.Environment(
        undefined=jinja2.StrictUndefined,
        autoescape=False,
        keep_trailing_newline=True,
    )
    environment.filters.update(
        ident=ident,
        sql_str=sql_str,
        sql_type=sql_type,
        sql_expression=sql_expression,
        yaml_str=yaml_str,
        md=md,
        one_line=one_line,
        having=having,
    )
    return environment


def ident(name: Any) -> str:
    """A SQL identifier: as is when plain (``[A-Za-z_][A-Za-z0-9_]*``), else double-quoted."""
    text = "" if name is None else str(name)
    if _PLAIN_IDENTIFIER.match(text):
        return text
    return '"' + text.replace('"', '""') + '"'


def sql_str(value: Any) -> str:
    """A SQL string literal (single quotes doubled); ``NULL`` for None."""
    if value is None:
        return "NULL"
    return "'" + str(value).replace("'", "''") + "'"


def sql_type(column: Mapping[str, Any]) -> str:
    """The SQL type of a column from its ``dataType`` (``VARCHAR`` when unknown)."""
    data_type = str(column.get("dataType") or "STRING").upper()
    if data_type == "DECIMAL":
        return f"DECIMAL({column.get('precision') or 18},{column.get('scale') or 0})"
    if data_type == "STRING" and isinstance(column.get("length"), int):
        return f"VARCHAR({column['length']})"
    return _SQL_TYPES.get(data_type, "VARCHAR")


def sql_expression(entry: Mapping[str, Any]) -> str:
    """A column mapping's SELECT expression: its transformation, else ``src.<source>``."""
    transformation = entry.get("transformation")
    if isinstance(transformation, str) and transformation.strip():
        return transformation
    source = entry.get("source")
    if source is None or source == "":
        return "NULL"
    return f"src.{ident(source)}"


def yaml_str(value: Any) -> str:
    """Any JSON value as a YAML flow value (JSON is valid YAML flow syntax)."""
    return json.dumps(value, ensure_ascii=False)


def md(value: Any) -> str:
    """Text safe inside a Markdown table cell: pipes escaped, newlines folded."""
    return one_line(value).replace("|", "\\|")


def one_line(value: Any) -> str:
    """The text on one line (CR and LF become spaces), so it cannot end a comment."""
    return str(value).replace("\r\n", " ").replace("\n", " ").replace("\r", " ")


def having(items: Iterable[Any], key: str) -> list[Any]:
    """The mappings among ``items`` whose ``key`` is present and neither None, False nor ""."""
    return [
        item
        for item in items
        if isinstance(item, Mapping) and item.get(key) not in (None, False, "")
    ]
