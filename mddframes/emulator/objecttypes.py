"""The element types and the object types (script templates) of the emulator.

The same object types serve the sample and the scale data, so that exports work
on both. Template sources live in ``templates/*.j2`` beside this module and are
read with :mod:`importlib.resources`.
"""

from __future__ import annotations

from functools import cache
from importlib import resources
from typing import Any

#: Every element type the emulator's data uses.
ELEMENT_TYPES: tuple[str, ...] = (
    "FOLDER",
    "SOURCE_TABLE",
    "STAGE_TABLE",
    "HUB",
    "LINK",
    "SATELLITE",
    "VIEW",
    "REFERENCE_TABLE",
)

#: Element types that own a table (its columns and rows).
TABLE_TYPES: frozenset[str] = frozenset(
    {"SOURCE_TABLE", "STAGE_TABLE", "HUB", "LINK", "SATELLITE", "REFERENCE_TABLE"}
)

#: Element types that are loaded from another element, so they may own a mapping.
MAPPED_TYPES: frozenset[str] = frozenset({"STAGE_TABLE", "HUB", "LINK", "SATELLITE", "VIEW"})

# (id, name, description, fileExtension, elementTypes, template file)
_OBJECT_TYPES: tuple[tuple[str, str, str, str, tuple[str, ...], str], ...] = (
    (
        "sql-ddl",
        "SQL DDL",
        "CREATE TABLE statement built from the element's table columns.",
        "sql",
        ("SOURCE_TABLE", "STAGE_TABLE", "HUB", "LINK", "SATELLITE", "REFERENCE_TABLE"),
        "ddl.sql.j2",
    ),
    (
        "sql-load",
        "SQL load statement",
        "INSERT ... SELECT statements from the mappings that target the element.",
        "sql",
        ("STAGE_TABLE", "HUB", "LINK", "SATELLITE"),
        "load.sql.j2",
    ),
    (
        "dbt-model",
        "dbt model YAML",
        "A dbt-style model properties file (columns, descriptions, tests).",
        "yml",
        ("STAGE_TABLE", "HUB", "LINK", "SATELLITE", "VIEW", "REFERENCE_TABLE"),
        "model.yml.j2",
    ),
    (
        "markdown-doc",
        "Markdown documentation",
        "A documentation page for any element: path, attributes, children, columns.",
        "md",
        ELEMENT_TYPES,
        "doc.md.j2",
    ),
)


@cache
def template_source(file_name: str) -> str:
    """The jinja2 source of ``templates/<file_name>`` shipped with the package."""
    return (
        resources.files("mddframes.emulator")
        .joinpath("templates", file_name)
        .read_text(encoding="utf-8")
    )


def build_object_types() -> list[dict[str, Any]]:
    """The object types in the dataset shape (``getObjectTypes`` entry plus ``template``).

    Returns
    -------
    list of dict
        ``{"id", "name", "description", "fileExtension", "elementTypes", "template"}``;
        a fresh list of fresh dicts on every call, so callers may mutate it.
    """
    return [
        {
            "id": type_id,
            "name": name,
            "description": description,
            "fileExtension": extension,
            "elementTypes": list(element_types),
            "template": template_source(template_file),
        }
        for type_id, name, description, extension, element_types, template_file in _OBJECT_TYPES
    ]
