"""Scale data for benchmarks: a system of N elements, and single big tables.

:func:`build_scale` (or :func:`scale_records`, streamed) builds one system shaped like the sample warehouse (the same
element types, depth 4 to 6), with a table for about 1 element in 20 (8-12
columns, 15-25 rows) and a mapping for about 1 in 40, plus the sample's object
types so exports work. It is seeded (``seed``) and reads no clock, so equal
arguments give equal data. :func:`big_table` builds one table payload of any
size (about 270 bytes of JSON per row at 12 columns).

Ids: elements ``"<system>-000001"``..., tables ``"<system>-tbl-000001"``...,
mappings ``"<system>-map-000001"``... (``<system>`` in lower case, numbers
zero-padded to at least 6 digits).
"""

from __future__ import annotations

import gc
import random
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from mddframes.emulator import records
from mddframes.emulator.dataset import Dataset
from mddframes.emulator.objecttypes import MAPPED_TYPES, TABLE_TYPES, build_object_types

JSON = dict[str, Any]

TABLE_EVERY = 20
MAPPING_EVERY = 40

# (root folder, schema, leaf pattern); see _layer_elements
_LAYERS: tuple[tuple[str, str, str], ...] = (
    ("Sources", "src", "sources"),
    ("Staging", "stage", "staging"),
    ("Raw Vault", "raw_vault", "vault"),
    ("Business Vault", "business_vault", "business"),
    ("Marts", "mart", "marts"),
    ("Reference", "reference", "reference"),
)

# (name, dataType, nullable) cycled to build a table's columns after its "id" column
_COLUMN_CYCLE: tuple[tuple[str, str, bool], ...] = (
    ("code", "STRING", False),
    ("name", "STRING", True),
    ("amount", "DECIMAL", True),
    ("ratio", "DOUBLE", True),
    ("active", "BOOLEAN", False),
    ("valid_from", "DATE", True),
    ("changed_at", "TIMESTAMP", False),
    ("quantity", "INTEGER", True),
    ("attributes", "JSON", True),
    ("note", "STRING", True),
    ("external_ref", "BIGINT", True),
)

# (element name stem, element type, depth below the layer's area folder)
_Spec = tuple[str, str, int]


def build_scale(n_elements: int, *, system: str = "SCALE", seed: int = 0) -> Dataset:
    """Build a system of ``n_elements`` elements with proportional tables and mappings.

    Parameters
    ----------
    n_elements : int
        Number of elements, at least 1.
    system : str, default "SCALE"
        The system's name.
    seed : int, default 0
        Seed of the pseudo-random choices (table sizes, mapping sources).

    Returns
    -------
    Dataset
        One system; elements in tree order (parents first), about
        ``n_elements / 20`` tables and ``n_elements / 40`` mappings, the sample's
        object types, one open and one closed deployment package.

    Raises
    ------
    ValueError
        ``n_elements`` is not a positive int, or ``system`` is not a non-empty string.
    """
    records = scale_records(n_elements, system=system, seed=seed)
    with _cyclic_gc_paused():
        return Dataset.from_records(records)


def scale_records(
    n_elements: int, *, system: str = "SCALE", seed: int = 0
) -> Iterator[tuple[str, JSON]]:
    """The records of :func:`build_scale`, one at a time, for a store to load as they come.

    Nothing is kept but what later records refer to (a few ids and names), so a
    million elements stream into the emulator's store without a million dicts in memory.

    Parameters
    ----------
    n_elements : int
        Number of elements, at least 1.
    system : str, default "SCALE"
        The system's name.
    seed : int, default 0
        Seed of the pseudo-random choices.

    Returns
    -------
    iterator of (str, dict)
        ``(kind, record)`` with kind one of :data:`~mddframes.emulator.dataset.KINDS`:
        the system, then each element followed by its table or mapping, then the
        object types and packages (the arguments are checked at the call).

    Raises
    ------
    ValueError
        ``n_elements`` is not a positive int, or ``system`` is not a non-empty string.

    Examples
    --------
    >>> kinds = [kind for kind, _ in scale_records(3)]
    >>> kinds[:4]
    ['system', 'element', 'element', 'element']
    """
    if isinstance(n_elements, bool) or not isinstance(n_elements, int) or n_elements < 1:
        raise ValueError(f"n_elements must be a positive int, got {n_elements!r}")
    if not isinstance(system, str) or not system.strip():
        raise ValueError(f"system must be a non-empty string, got {system!r}")
    return _build(n_elements, system, seed)


@contextmanager
def _cyclic_gc_paused() -> Iterator[None]:
    # Building makes millions of small containers and no cycles; the cyclic
    # collector would rescan them again and again (half the build time).
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def _build(n_elements: int, system: str, seed: int) -> Iterator[tuple[str, JSON]]:
    rng = random.Random(seed)
    prefix = system.strip().lower().replace(" ", "-")
    width = max(6, len(str(n_elements)))
    n_tables = n_mappings = 0
    # what a mapping reads from: (id, name) of the elements it may read, not the elements
    sources: list[tuple[str, str]] = []
    leaves: list[str] = []  # the first 200 non-folders, for the packages
    stamps = [records.timestamp(step) for step in range(1000)]

    yield "system", {"name": system, "description": f"Scale data: {n_elements} elements"}
    for number, (name, element_type, parent_index, schema) in enumerate(_tree(n_elements), start=1):
        element_id = f"{prefix}-{number:0{width}d}"
        table_id = mapping_id = None
        if element_type in TABLE_TYPES and n_tables < number // TABLE_EVERY:
            n_tables += 1
            table_id = f"{prefix}-tbl-{n_tables:0{width}d}"
        if element_type in MAPPED_TYPES and sources and n_mappings < number // MAPPING_EVERY:
            n_mappings += 1
            mapping_id = f"{prefix}-map-{n_mappings:0{width}d}"
        deployed = number % 3 != 0 and element_type != "FOLDER"
        element = records.element(
            id=element_id,
            name=name,
            type=element_type,
            # an element's id follows from its position: no list of ids is kept
            parent_id=f"{prefix}-{parent_index + 1:0{width}d}"
            if parent_index is not None
            else None,
            system=system,
            version=1 + number % 4,
            modified_at=stamps[number % len(stamps)],
            deployment_id=f"deploy-{prefix}-{number % 7 + 1}" if deployed else None,
            attributes={
                "schema": schema,
                "description": f"{element_type.lower().replace('_', ' ')} {name}",
                "owner": f"team-{number % 7 + 1}@example.com",
            },
            table_id=table_id,
            mapping_id=mapping_id,
        )
        yield "element", element
        if table_id is not None:
            yield "table", _table(table_id, element, rng)
        if mapping_id is not None:
            yield "mapping", _mapping(mapping_id, rng.choice(sources), element, rng)
        if element_type in ("SOURCE_TABLE", "STAGE_TABLE", "HUB"):
            sources.append((element_id, name))
        if element_type != "FOLDER" and len(leaves) < 200:
            leaves.append(element_id)

    for object_type in build_object_types():
        yield "object_type", object_type
    yield from _packages(system, leaves)


def _packages(system: str, leaves: list[str]) -> Iterator[tuple[str, JSON]]:
    """The scale data's two packages: an open one and a closed one of 100 leaves each."""
    yield (
        "package",
        records.package(
            system=system,
            name="scale-open",
            description="Open package of the scale data",
            status="OPEN",
            created_at=records.timestamp(0),
            structure_ids=leaves[:100],
        ),
    )
    yield (
        "package",
        records.package(
            system=system,
            name="scale-closed",
            description="Closed package of the scale data",
            status="CLOSED",
            created_at=records.timestamp(1),
            structure_ids=leaves[100:200],
        ),
    )


def _tree(n_elements: int) -> Iterator[tuple[str, str, int | None, str]]:
    """``(name, type, parent index, schema)`` in tree order until ``n_elements`` are made."""
    produced = 0
    roots: list[int] = []
    for root_name, schema, _pattern in _LAYERS:
        if produced == n_elements:
            return
        roots.append(produced)
        yield root_name, "FOLDER", None, schema
        produced += 1
    area = 0
    while True:
        layer = area % len(_LAYERS)
        _root, schema, pattern = _LAYERS[layer]
        # A stack of the latest element index at each depth below the layer root.
        parents = {1: roots[layer]}
        for name, element_type, depth in _area(pattern, area):
            if produced == n_elements:
                return
            yield name, element_type, parents[depth], schema
            parents[depth + 1] = produced
            produced += 1
        area += 1


def _area(pattern: str, area: int) -> Iterator[_Spec]:
    """The elements of one area folder of a layer, with their depth (root = 0)."""
    tag = f"{area:05d}"
    yield f"area_{tag}", "FOLDER", 1
    if pattern == "sources":
        for s in range(2):
            yield f"schema_{tag}_{s}", "FOLDER", 2
            for m in range(2):
                yield f"module_{tag}_{s}{m}", "FOLDER", 3
                for t in range(6):
                    yield f"src_{tag}_{s}{m}{t}", "SOURCE_TABLE", 4
                yield f"archive_{tag}_{s}{m}", "FOLDER", 4
                for t in range(2):
                    yield f"src_old_{tag}_{s}{m}{t}", "SOURCE_TABLE", 5
    elif pattern == "staging":
        for s in range(3):
            yield f"stg_{tag}_{s}", "FOLDER", 2
            for t in range(8):
                yield f"stg_{tag}_{s}{t}", "STAGE_TABLE", 3
    elif pattern == "vault":
        for s in range(2):
            yield f"model_{tag}_{s}", "FOLDER", 2
            for h in range(4):
                yield f"hub_{tag}_{s}{h}", "HUB", 3
                for t in range(2):
                    yield f"sat_{tag}_{s}{h}{t}", "SATELLITE", 4
            for lk in range(3):
                yield f"lnk_{tag}_{s}{lk}", "LINK", 3
                yield f"sat_lnk_{tag}_{s}{lk}", "SATELLITE", 4
    elif pattern == "business":
        yield f"computed_{tag}", "FOLDER", 2
        for t in range(6):
            yield f"bsat_{tag}_{t}", "SATELLITE", 3
        yield f"pit_{tag}", "FOLDER", 2
        for t in range(4):
            yield f"pit_{tag}_{t}", "VIEW", 3
    elif pattern == "marts":
        for s in range(2):
            yield f"mart_{tag}_{s}", "FOLDER", 2
            for g in range(2):
                yield f"group_{tag}_{s}{g}", "FOLDER", 3
                for t in range(5):
                    yield f"view_{tag}_{s}{g}{t}", "VIEW", 4
    else:
        for t in range(10):
            yield f"ref_{tag}_{t}", "REFERENCE_TABLE", 2


def _columns(n_cols: int) -> list[JSON]:
    columns = [records.column("id", "BIGINT", nullable=False, primary_key=True)]
    for i in range(n_cols - 1):
        base, data_type, nullable = _COLUMN_CYCLE[i % len(_COLUMN_CYCLE)]
        name = base if i < len(_COLUMN_CYCLE) else f"{base}_{i // len(_COLUMN_CYCLE)}"
        extra: JSON = {"precision": 14, "scale": 2} if data_type == "DECIMAL" else {}
        columns.append(records.column(name, data_type, nullable=nullable, **extra))
    return columns


def _value(data_type: str, seq: int) -> Any:
    # Cheap arithmetic rather than random draws: this runs for millions of cells.
    if data_type == "STRING":
        return f"{seq % 1000000:06d}"
    if data_type == "DECIMAL":
        return f"{seq % 100000}.{seq % 100:02d}"
    if data_type == "DOUBLE":
        return (seq % 1000) / 8
    if data_type == "BOOLEAN":
        return seq % 2 == 0
    if data_type == "DATE":
        return f"2024-{seq % 12 + 1:02d}-{seq % 28 + 1:02d}"
    if data_type == "TIMESTAMP":
        return f"2024-{seq % 12 + 1:02d}-{seq % 28 + 1:02d}T{seq % 24:02d}:{seq % 60:02d}:00Z"
    if data_type == "INTEGER":
        return seq % 100000
    if data_type == "JSON":
        return {"seq": seq, "tags": ["a", "b"][: seq % 3]}
    if data_type == "BIGINT":
        return 9007199254740993 + seq
    return None


_POOL_SIZE = 1009  # prime, so pool positions do not line up with the null patterns


def _pool(data_type: str) -> list[Any]:
    return [_value(data_type, k * 31) for k in range(_POOL_SIZE)]


_POOLS: dict[str, list[Any]] = {}


def _rows(columns: list[JSON], n_rows: int, start: int) -> list[JSON]:
    # Values come from per-type pools of immutable values (JSON values are made
    # fresh: they are mutable): this runs for millions of cells.
    plan = []
    for position, c in enumerate(columns[1:], start=1):
        data_type = c["dataType"]
        if data_type not in _POOLS:
            _POOLS[data_type] = _pool(data_type)
        plan.append((position, c["name"], _POOLS[data_type], c["nullable"], data_type == "JSON"))
    id_name = columns[0]["name"]
    rows = []
    for seq in range(start, start + n_rows):
        row: JSON = {id_name: seq}
        for position, name, pool, nullable, fresh in plan:
            key = seq + position
            if nullable and key % 11 == 0:
                continue  # an absent key, as real rows have
            if nullable and key % 13 == 0:
                row[name] = None
            elif fresh:
                row[name] = {"seq": key, "tags": ["a", "b"][: key % 3]}
            else:
                row[name] = pool[(seq * 7 + position) % _POOL_SIZE]
        rows.append(row)
    return rows


def _table(table_id: str, owner: JSON, rng: random.Random) -> JSON:
    columns = _columns(rng.randint(8, 12))
    return records.table(
        id=table_id,
        name=owner["name"],
        structure_id=owner["id"],
        description=f"Table of {owner['name']}",
        columns=columns,
        data=_rows(columns, rng.randint(15, 25), start=rng.randrange(1_000_000)),
        schema=owner["attributes"]["schema"],
    )


def _mapping(mapping_id: str, source: tuple[str, str], target: JSON, rng: random.Random) -> JSON:
    entries: list[JSON] = [{"source": "id", "target": "id", "transformation": None}]
    for base, _data_type, _nullable in _COLUMN_CYCLE[: rng.randint(3, 8)]:
        entries.append({"source": base, "target": base, "transformation": f"TRIM(src.{base})"})
    entries.append({"source": None, "target": "load_dts", "transformation": "CURRENT_TIMESTAMP"})
    source_id, source_name = source
    return records.mapping(
        id=mapping_id,
        name=f"{source_name} -> {target['name']}",
        source_id=source_id,
        target_id=target["id"],
        description=f"Load {target['name']} from {source_name}",
        column_mappings=entries,
    )


def big_table(
    table_id: str = "big-table",
    n_rows: int = 200_000,
    n_cols: int = 12,
    *,
    structure_id: str = "big-table-owner",
) -> JSON:
    """One table payload of ``n_rows`` rows and ``n_cols`` columns, for benchmarks.

    The rows hold every column type of the scale data, absent keys and nulls. At
    12 columns a row is about 270 bytes of JSON, so the default 200,000 rows make
    about 54 MB.

    Parameters
    ----------
    table_id : str, default "big-table"
    n_rows : int, default 200000
        Number of rows (0 or more).
    n_cols : int, default 12
        Number of columns, at least 1 (the first is the ``id`` primary key).
    structure_id : str, default "big-table-owner"
        The ``structureId`` of the payload.

    Raises
    ------
    ValueError
        ``n_rows`` is negative or ``n_cols`` is below 1.
    """
    if isinstance(n_rows, bool) or not isinstance(n_rows, int) or n_rows < 0:
        raise ValueError(f"n_rows must be an int of 0 or more, got {n_rows!r}")
    if isinstance(n_cols, bool) or not isinstance(n_cols, int) or n_cols < 1:
        raise ValueError(f"n_cols must be an int of 1 or more, got {n_cols!r}")
    columns = _columns(n_cols)
    with _cyclic_gc_paused():
        data = _rows(columns, n_rows, start=0)
    return records.table(
        id=table_id,
        name=table_id,
        structure_id=structure_id,
        description=f"Benchmark table: {n_rows} rows x {n_cols} columns",
        columns=columns,
        data=data,
    )
