"""The LAB system of the sample: awkward ids next to their pieces (``data/sample_lab.json``).

Each id is an element, a table and a mapping at once, whose content names that id, so
a test can prove a request reached its own resource and no other.
"""

from __future__ import annotations

from typing import Any

from mddframes.emulator import records
from mddframes.emulator.sample.builder import SystemBuilder
from mddframes.emulator.sample.files import read_json

JSON = dict[str, Any]

LAB = "LAB"

_IDS = read_json("sample_lab.json")
#: Ids containing ``/``, ``%``, ``?``, ``#``, ``+``, spaces, non-ASCII, or ``.``/``..``.
LAB_AWKWARD_IDS: tuple[str, ...] = tuple(_IDS["awkward_ids"])
#: The pieces a wrongly quoted path would reach instead (``tbl``, ``with``...).
LAB_PIECE_IDS: tuple[str, ...] = tuple(_IDS["piece_ids"])


def _id_columns() -> list[JSON]:
    return [
        records.column("id", "STRING", nullable=False, primary_key=True),
        records.column("label", "STRING"),
    ]


def build_lab() -> tuple[list[JSON], list[JSON], list[JSON], list[JSON]]:
    """The LAB system: awkward ids and their pieces, each a distinct resource.

    Returns
    -------
    tuple of list of dict
        Its elements, tables, mappings and packages.
    """
    b = SystemBuilder(LAB, "lab")
    root = b.add(
        "Lab", "FOLDER", None, {"description": "Ids that break naive URL building"}, id="lab"
    )
    source = b.add(
        "lab_source",
        "SOURCE_TABLE",
        root,
        {"schema": "lab", "description": "Where every lab mapping reads from"},
        id="lab-source",
    )
    b.add_table(
        source,
        id="lab-source",
        description="The lab's source table",
        columns=_id_columns(),
        data=[{"id": "x", "label": "the lab source"}],
        schema="lab",
    )
    awkward = b.add(
        "awkward ids",
        "FOLDER",
        root,
        {"description": "Ids with reserved characters, and the ids of their pieces"},
        id="lab-awkward",
    )
    for resource_id in LAB_AWKWARD_IDS + LAB_PIECE_IDS:
        element = b.add(
            resource_id,
            "STAGE_TABLE",
            awkward,
            {
                "schema": "lab",
                "description": f"The element whose id is {resource_id!r}",
                "owner": "lab@example.com",
            },
            id=resource_id,
        )
        b.add_table(
            element,
            id=resource_id,
            description=f"The table whose id is {resource_id!r}",
            columns=_id_columns(),
            data=[{"id": resource_id, "label": f"row of table {resource_id}"}],
            schema="lab",
        )
        b.add_mapping(
            source,
            element,
            id=resource_id,
            description=f"The mapping whose id is {resource_id!r}",
            column_mappings=[
                {"source": "id", "target": "id", "transformation": None},
                {"source": "label", "target": "label"},
            ],
        )
    elements = b.finish({"tbl": "lab-deploy-1", "..": "lab-deploy-1"})
    packages: list[JSON] = read_json("sample_lab.json")["packages"]
    return elements, b.tables, b.mappings, packages
