"""The FLOW system of the sample: a small shop whose mappings give lineage every shape.

A multi-hop path (``shop_orders`` -> ``stg_sales`` -> ``sales_by_customer`` ->
``customer_value``), a fan-in (``stg_sales`` is fed by ``shop_orders`` and
``shop_returns``), a fan-out (``stg_sales`` feeds ``sales_by_customer`` and
``sales_by_day``), column transformations, and one cycle (``shop_customers`` ->
``stg_customers`` -> ``customer_score`` -> ``shop_customers``, a reverse-ETL feed).
The literal data lives in ``data/sample_flow.json``.
"""

from __future__ import annotations

from typing import Any

from mddframes.emulator.sample.builder import SystemBuilder, generic_rows, parse_columns
from mddframes.emulator.sample.files import read_json

JSON = dict[str, Any]

FLOW = "FLOW"

_SOURCE_ROWS = 4  # enough rows for a search to find values in cells


def build_flow() -> tuple[list[JSON], list[JSON], list[JSON]]:
    """The FLOW system: a lineage graph with multi-hop, fan-in, fan-out and a cycle.

    Returns
    -------
    tuple of list of dict
        Its elements, tables and mappings (it has no packages).
    """
    spec = read_json("sample_flow.json")
    b = SystemBuilder(FLOW, "flow")
    root = b.add("Flow", "FOLDER", None, {"description": "A shop's data flow"}, id="flow")
    for number, (name, type_, columns) in enumerate(spec["elements"], start=1):
        element = b.add(
            name,
            type_,
            root,
            {"schema": "flow", "description": name.replace("_", " ").capitalize()},
            id=f"flow-{number:02d}",
        )
        if columns is not None:
            parsed = parse_columns(columns)
            rows = generic_rows(parsed, _SOURCE_ROWS) if type_ == "SOURCE_TABLE" else []
            b.add_table(
                element,
                id=f"flow-tbl-{number:02d}",
                description=f"The table of {name}",
                columns=parsed,
                data=rows,
                schema="flow",
            )
    for number, m in enumerate(spec["mappings"], start=1):
        b.add_mapping(
            b.by_name[m["source"]],
            b.by_name[m["target"]],
            id=f"flow-map-{number:02d}",
            owner=b.by_name[m["owner"]],
            description=m["description"],
            column_mappings=[
                {"source": source, "target": target, "transformation": transformation}
                for source, target, transformation in m["columns"]
            ],
        )
    return b.finish({}), b.tables, b.mappings
