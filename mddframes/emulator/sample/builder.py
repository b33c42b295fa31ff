"""The pieces every system of the sample is built from.

:class:`SystemBuilder` accumulates one system's elements, tables and mappings and
gives them ids; :func:`parse_columns` reads the compact column specs of the data
files; :func:`generic_rows` invents deterministic rows for the tables whose rows are
not written out; the ``technical_*`` helpers are the data-vault columns every layer
repeats.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from mddframes.emulator import records

JSON = dict[str, Any]

#: Keys of a column that describe its type beyond ``dataType``; copied between layers.
TYPE_DETAILS = ("length", "precision", "scale")


def parse_columns(spec: str) -> list[JSON]:
    """Columns from a compact spec ``"name[:TYPE][*][?], ..."``.

    ``TYPE`` defaults to ``STRING``; ``*`` marks a primary-key column, ``?`` a nullable
    one (other columns are NOT NULL). A DECIMAL column gets precision 14, scale 2.

    Parameters
    ----------
    spec : str
        E.g. ``"contact_id*, email?, valid_from:DATE"``; empty items are skipped.

    Returns
    -------
    list of dict
        Column records (:func:`mddframes.emulator.records.column`).
    """
    columns = []
    for item in (part.strip() for part in spec.split(",")):
        if not item:
            continue
        primary_key = "*" in item
        nullable = "?" in item and not primary_key
        name, _, data_type = item.replace("*", "").replace("?", "").partition(":")
        data_type = data_type or "STRING"
        extra: JSON = {}
        if data_type == "DECIMAL":
            extra = {"precision": 14, "scale": 2}
        columns.append(
            records.column(name, data_type, nullable=nullable, primary_key=primary_key, **extra)
        )
    return columns


_COUNTRY_CYCLE = ("DE", "AT", "CH", "FR", "NL")
_CURRENCY_CYCLE = ("EUR", "EUR", "CHF", "EUR", "USD")


def generic_value(column: JSON, row: int) -> Any:
    """A plausible, deterministic value of ``column`` for row number ``row`` (0-based)."""
    name, data_type = column["name"], column["dataType"]
    if data_type == "STRING":
        if name.endswith(("_no", "_id", "_code")) and "currency" not in name:
            if "country" in name:
                return _COUNTRY_CYCLE[row % len(_COUNTRY_CYCLE)]
            return f"{row + 1:06d}"
        if "currency" in name:
            return _CURRENCY_CYCLE[row % len(_CURRENCY_CYCLE)]
        if "email" in name:
            return f"user{row + 1}@example.com"
        return f"{records.humanize(name)} {row + 1}"
    if data_type == "INTEGER":
        return (row + 1) * 3
    if data_type == "BIGINT":
        return 10**12 + row
    if data_type == "DECIMAL":
        return f"{(row + 1) * 17}.{(row * 37) % 100:02d}"
    if data_type == "DOUBLE":
        return (row + 1) * 0.25
    if data_type == "BOOLEAN":
        return row % 2 == 0
    if data_type == "DATE":
        return f"2024-{row % 9 + 1:02d}-{row * 7 % 28 + 1:02d}"
    if data_type == "TIMESTAMP":
        return records.timestamp(row * 11 + 3)
    if data_type == "JSON":
        return {"seq": row, "labels": ["x", "y"][: row % 3]}
    return None


def generic_rows(columns: list[JSON], count: int) -> list[JSON]:
    """``count`` rows; the third row holds nulls in every nullable column."""
    return [
        {
            c["name"]: (None if (row == 2 and c["nullable"]) else generic_value(c, row))
            for c in columns
        }
        for row in range(count)
    ]


@dataclass
class SystemBuilder:
    """Accumulates the records of one system; ids come from counters or are given."""

    system: str
    prefix: str
    elements: list[JSON] = field(default_factory=list)
    tables: list[JSON] = field(default_factory=list)
    mappings: list[JSON] = field(default_factory=list)
    by_name: dict[str, JSON] = field(default_factory=dict)
    table_of: dict[str, JSON] = field(default_factory=dict)  # element id -> table
    _table_ids: dict[str, str] = field(default_factory=dict)  # element id -> table id
    _mapping_ids: dict[str, str] = field(default_factory=dict)  # element id -> mapping id

    def add(
        self,
        name: str,
        type: str,
        parent: JSON | None,
        attributes: JSON,
        *,
        id: str | None = None,
    ) -> JSON:
        """Add an element under ``parent``; its id is ``id`` or the next ``<prefix>-NNNN``."""
        number = len(self.elements) + 1
        record = records.element(
            id=id or f"{self.prefix}-{number:04d}",
            name=name,
            type=type,
            parent_id=parent["id"] if parent else None,
            system=self.system,
            version=1 + (number * 7) % 5,
            modified_at=records.timestamp(number),
            deployment_id=None,
            attributes=attributes,
        )
        self.elements.append(record)
        self.by_name.setdefault(name, record)
        return record

    def add_table(
        self,
        owner: JSON,
        *,
        description: str,
        columns: list[JSON],
        data: list[JSON],
        id: str | None = None,
        **metadata: Any,
    ) -> JSON:
        """Give ``owner`` a table; its id is ``id`` or the next ``tbl-NNNN``."""
        table_id = id or f"tbl-{len(self.tables) + 1:04d}"
        record = records.table(
            id=table_id,
            name=owner["name"],
            structure_id=owner["id"],
            description=description,
            columns=columns,
            data=data,
            **metadata,
        )
        self.tables.append(record)
        self.table_of[owner["id"]] = record
        self._table_ids[owner["id"]] = table_id
        return record

    def add_mapping(
        self,
        source: JSON,
        target: JSON,
        *,
        description: str,
        column_mappings: list[JSON],
        id: str | None = None,
        owner: JSON | None = None,
    ) -> JSON:
        """Add the mapping that loads ``target`` from ``source`` (``owner``, default ``target``, owns it)."""
        mapping_id = id or f"map-{len(self.mappings) + 1:04d}"
        record = records.mapping(
            id=mapping_id,
            name=f"{source['name']} -> {target['name']}",
            source_id=source["id"],
            target_id=target["id"],
            description=description,
            column_mappings=column_mappings,
        )
        self.mappings.append(record)
        self._mapping_ids[(owner or target)["id"]] = mapping_id
        return record

    def columns_of(self, element_name: str) -> list[JSON]:
        """The columns of the table of the element named ``element_name`` (or none)."""
        table = self.table_of.get(self.by_name[element_name]["id"])
        return table["metadata"]["columns"] if table else []

    def finish(self, deployments: dict[str, str]) -> list[JSON]:
        """The elements with deployment state and owned ids, in contract key order."""
        finished = []
        for e in self.elements:
            finished.append(
                records.element(
                    id=e["id"],
                    name=e["name"],
                    type=e["type"],
                    parent_id=e["parentId"],
                    system=e["systemName"],
                    version=e["version"],
                    modified_at=e["modifiedAt"],
                    deployment_id=deployments.get(e["id"]),
                    attributes=e["attributes"],
                    table_id=self._table_ids.get(e["id"]),
                    mapping_id=self._mapping_ids.get(e["id"]),
                )
            )
        return finished


def md5(expression: str) -> str:
    """The SQL hash expression of the data vault over ``expression``."""
    return f"MD5(UPPER(TRIM(CAST({expression} AS VARCHAR))))"


def has_column(columns: Iterable[JSON], name: str) -> bool:
    """Whether one of ``columns`` is named ``name``."""
    return any(c["name"] == name for c in columns)


def technical_columns(*, with_hash_diff: bool) -> list[JSON]:
    """The data-vault bookkeeping columns: (``hash_diff``,) ``load_dts``, ``record_source``."""
    columns = []
    if with_hash_diff:
        columns.append(
            records.column(
                "hash_diff",
                "STRING",
                nullable=False,
                length=32,
                description="Hash of the descriptive columns",
            )
        )
    columns += [
        records.column("load_dts", "TIMESTAMP", nullable=False, description="Load date-time"),
        records.column(
            "record_source",
            "STRING",
            nullable=False,
            length=64,
            description="Where the row came from",
        ),
    ]
    return columns


def technical_entries() -> list[JSON]:
    """Column mappings that carry ``load_dts`` and ``record_source`` through unchanged."""
    return [
        {"source": "load_dts", "target": "load_dts", "transformation": None},
        {"source": "record_source", "target": "record_source", "transformation": None},
    ]
