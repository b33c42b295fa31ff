"""The emulator's deterministic sample data: a data-vault warehouse and a lab system.

:func:`build_sample` returns a :class:`~mddframes.emulator.dataset.Dataset` with three
systems. Two builds are equal (no clock, no unseeded randomness).

``DWH``
    A data-vault 2.0 warehouse, 155 elements on 4 levels: root folders (Sources,
    Staging, Raw Vault, Business Vault, Marts, Reference), source-system and
    subject-area folders, SOURCE_TABLE, STAGE_TABLE, HUB, LINK, SATELLITE (under
    their hub or link), VIEW and REFERENCE_TABLE elements. Element ids are
    ``"dwh-0001"``... in tree order, table ids ``"tbl-0001"``..., mapping ids
    ``"map-0001"``.... Every element of a table type owns a table; every loaded
    element (stage, hub, link, satellite, most views) owns the mapping that loads it,
    so the mapping's ``targetId`` is its owner. The 24 source tables and the 4
    reference tables carry rows: the full ISO 3166-1 country list and ISO 4217
    currency list (``data/*.csv``), and rows with every hard case (see below).

``LAB``
    A small system whose ids are awkward on purpose: element, table and mapping
    ids containing ``/``, ``%``, ``?``, ``#``, ``+``, spaces, non-ASCII, or being
    ``.`` or ``..``, next to resources whose ids are the pieces (``tbl``, ``with``,
    ``slash``, ``100``, ``name``, ``Zürich``, ``a``...) and an id that looks
    already percent-encoded. Each awkward element owns a table and a mapping with
    the same id, whose content names that id, so a test can prove a request
    reached its own resource and no other.

``FLOW``
    A small shop (10 elements) whose mappings give lineage every shape: a multi-hop
    path, a fan-in, a fan-out, column transformations and one cycle
    (:mod:`.flow`). A mapping is owned by its target, except the second feed of a
    target that already owns its load, which its source owns.

Column ``dataType`` vocabulary and the JSON value each type carries in rows:

=========  ==================================================================
STRING     a string (codes keep leading zeros: ``"0000123"``, ``"004"``)
INTEGER    a JSON integer within 32 bits
BIGINT     a JSON integer within 64 bits, possibly above 2**53 (exact in JSON)
HUGEINT    a JSON integer of up to 128 bits, above 2**64 too (``external_ref``)
DECIMAL    a string holding a decimal number (``"12.50"``), to keep precision;
           columns also carry ``precision`` and ``scale``
DOUBLE     a JSON number, possibly inexact in binary (``0.1``)
BOOLEAN    ``true`` / ``false``
DATE       a string ``YYYY-MM-DD``
TIMESTAMP  a string, ISO-8601 date-time (``2024-03-04T08:00:00Z``)
JSON       any nested JSON value: an object or a list
=========  ==================================================================

Hard cases in rows (mostly in the tables of ``crm_customer`` and
``erp_sales_order``): keys absent from some rows, nulls, nested objects, lists
(empty, mixed), integers above 2**53 (9007199254740993) and 2**64, decimals as
strings, floats such as 0.1 and 0.30000000000000004, ISO dates and date-times
with and without fractions and offsets, booleans, non-ASCII and astral-plane
text, codes with leading zeros, strings that look like spreadsheet formulas
(``"=SUM(A1:A3)"``, ``"+1"``, ``"-2"``, ``"@x"``), empty strings, a row whose
keys come in another order, and undeclared columns (present in rows, absent
from the metadata: ``legacy_id``, ``_meta``).

Every value fits its column's declared type: reading the sample raises no
``DeclaredTypeWarning``. ``build_sample(misfits=True)`` (``serve(misfits=True)``,
``mddframes emulator --misfits``) declares ``external_ref`` ``BIGINT``, so that its
integers beyond 64 bits do not fit (docs/guide/reading.md shows what that does).

The literal data (names, descriptions, column specs, the hard-case rows, reference
rows, the LAB ids) lives in ``data/sample_*.json`` and ``data/*.csv``; the modules
of this package hold the rules that turn it into records: :mod:`.builder` (ids,
column specs, generated rows), :mod:`.warehouse` and :mod:`.loads` (DWH),
:mod:`.lab` (LAB), :mod:`.flow` (FLOW), :mod:`.files` (reading the data files).
"""

from __future__ import annotations

from mddframes.emulator.dataset import JSON, Dataset
from mddframes.emulator.objecttypes import build_object_types
from mddframes.emulator.sample.builder import generic_rows, generic_value, parse_columns
from mddframes.emulator.sample.files import iso_countries, iso_currencies
from mddframes.emulator.sample.flow import FLOW, build_flow
from mddframes.emulator.sample.lab import LAB, LAB_AWKWARD_IDS, LAB_PIECE_IDS, build_lab
from mddframes.emulator.sample.loads import add_mappings
from mddframes.emulator.sample.warehouse import DWH, Warehouse, deployments, packages

__all__ = [
    "DWH",
    "FLOW",
    "LAB",
    "LAB_AWKWARD_IDS",
    "LAB_PIECE_IDS",
    "build_sample",
    "generic_rows",
    "generic_value",
    "iso_countries",
    "iso_currencies",
    "parse_columns",
]


#: The column that ``build_sample(misfits=True)`` declares with a type its values do not
#: fit: (table name, column name, the misfit declaration).
MISFIT_COLUMN = ("crm_customer", "external_ref", "BIGINT")


def build_sample(*, misfits: bool = False) -> Dataset:
    """The deterministic sample data of the emulator (systems ``DWH``, ``LAB`` and ``FLOW``).

    Parameters
    ----------
    misfits : bool, default False
        Declare ``external_ref`` of ``crm_customer``'s table ``BIGINT`` while it holds
        integers beyond 64 bits: a column whose values do not fit its declared type
        (:data:`MISFIT_COLUMN`). The default sample has no such column.

    Returns
    -------
    Dataset
        Fresh records on every call (callers may mutate them); two calls return
        equal datasets.
    """
    warehouse = Warehouse()
    warehouse.build()
    add_mappings(warehouse)  # the loads read the built warehouse, never the other way
    dwh = warehouse.b
    dwh_elements = dwh.finish(deployments(dwh.elements))
    lab_elements, lab_tables, lab_mappings, lab_packages = build_lab()
    flow_elements, flow_tables, flow_mappings = build_flow()
    if misfits:
        _declare_misfit(dwh.tables)
    return Dataset(
        systems=[
            {"name": DWH, "description": "Enterprise data warehouse (data vault 2.0)"},
            {"name": LAB, "description": "Lab system with awkward identifiers"},
            {"name": FLOW, "description": "A shop's data flow: lineage of every shape"},
        ],
        elements=dwh_elements + lab_elements + flow_elements,
        tables=dwh.tables + lab_tables + flow_tables,
        mappings=dwh.mappings + lab_mappings + flow_mappings,
        object_types=build_object_types(),
        packages=packages(dwh_elements) + lab_packages,
    )


def _declare_misfit(tables: list[JSON]) -> None:
    table_name, column_name, data_type = MISFIT_COLUMN
    for table in tables:
        if table.get("name") != table_name:
            continue
        for column in table["metadata"]["columns"]:
            if column["name"] == column_name:
                column["dataType"] = data_type
                return
    raise ValueError(f"the sample has no column {column_name!r} in a table {table_name!r}")
