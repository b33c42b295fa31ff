"""Raw data and script generation: looks records up in the store and hands them to the
content modules ``rawdata.build_raw_data`` and ``rendering.render_script``.

Until those modules exist, small private fallbacks with the same contracts stand in,
so the machinery can be used and tested on its own.
"""

from __future__ import annotations

import importlib
import json
from functools import lru_cache
from types import ModuleType
from typing import Any

from mddframes.emulator.store import InvalidInput, Store

JSON = dict[str, Any]


def _content_module(name: str) -> ModuleType | None:
    qualified = f"mddframes.emulator.{name}"
    try:
        return importlib.import_module(qualified)
    except ModuleNotFoundError as exc:
        if exc.name != qualified:  # a missing dependency inside the module is a real error
            raise
        return None


def raw_data(store: Store, structure_id: str) -> JSON:
    """The ``getRawData`` answer: what a template receives for one element."""
    element = store.element(structure_id)
    path = store.element_path(element)
    children = store.children(structure_id)
    table = json.loads(store.table_json(element["tableId"])) if element.get("tableId") else None
    mappings = []
    for mapping in store.mappings_targeting(structure_id):
        source_id = mapping.get("sourceId")
        source_name = None
        if isinstance(source_id, str) and not store.missing_elements([source_id]):
            source_name = store.element(source_id)["name"]
        mappings.append({**mapping, "sourceName": source_name})
    module = _content_module("rawdata")
    build = module.build_raw_data if module else _fallback_raw_data
    return build(element, path=path, children=children, table=table, mappings=mappings)


def applies(object_type: JSON, element: JSON) -> bool:
    """Whether ``object_type`` can render an element of ``element``'s type."""
    types = object_type.get("elementTypes")
    return not types or element.get("type") in types


def render(store: Store, structure_id: str, object_type_id: str) -> tuple[str, str]:
    """Render one element with one object type -> (file name, script text).

    Raises
    ------
    UnknownObject
        No such element or object type.
    InvalidInput
        The object type does not apply to the element's type.
    """
    object_type = store.object_type(object_type_id)
    data = raw_data(store, structure_id)
    module = _content_module("rendering")
    render_script = module.render_script if module else _fallback_render
    try:
        return render_script(object_type, data)
    except ValueError as exc:
        raise InvalidInput(str(exc)) from None


def _fallback_raw_data(
    element: JSON,
    *,
    path: list[str],
    children: list[JSON],
    table: JSON | None,
    mappings: list[JSON],
) -> JSON:
    return {
        "element": element,
        "path": path,
        "children": children,
        "table": None if table is None else {k: v for k, v in table.items() if k != "data"},
        "mappings": mappings,
    }


@lru_cache(maxsize=64)
def _compile(source: str) -> Any:
    import jinja2

    environment = jinja2.Environment(undefined=jinja2.StrictUndefined, autoescape=False)
    return environment.from_string(source)


def _fallback_render(object_type: JSON, raw: JSON) -> tuple[str, str]:
    element = raw["element"]
    if not applies(object_type, element):
        raise ValueError(
            f"object type {object_type['id']!r} does not apply to element type {element.get('type')!r}"
        )
    text = _compile(object_type.get("template") or "{{ element.name }}\n").render(**raw)
    safe_name = "".join(ch if ch.isalnum() or ch in "._-" else "_" for ch in element["name"])
    return f"{safe_name}.{object_type.get('fileExtension') or 'txt'}", text
