"""The DWH system of the sample: a data-vault 2.0 warehouse built from its data files.

``data/sample_warehouse.json`` names the source systems and tables, hubs, links,
business satellites, point-in-time tables and marts; ``data/sample_hard_cases.json``
holds the two source tables written out in full; ``data/sample_reference.json`` the
reference tables. :class:`Warehouse` turns them into the element tree (parents before
children), the tables, and (through :mod:`.loads`) the mappings.
"""

from __future__ import annotations

import copy
from typing import Any

from mddframes.emulator import records
from mddframes.emulator.sample.builder import (
    TYPE_DETAILS,
    SystemBuilder,
    generic_rows,
    parse_columns,
    technical_columns,
)
from mddframes.emulator.sample.files import ROW_FILES, read_json

JSON = dict[str, Any]

DWH = "DWH"

# The two deployments of the warehouse; packages are cut along them.
_APRIL = "deploy-2024-04-30.1"
_JUNE = "deploy-2024-06-14.1"


class Warehouse:
    """Builds the DWH system: tree first (parents before children), then mappings.

    Attributes
    ----------
    b : SystemBuilder
        The records built so far.
    spec : dict
        ``data/sample_warehouse.json``.
    source_columns, hubs_fed, links_fed : dict
        Per source table (``"crm.customer"``): its columns, the hubs and the links
        its stage feeds.
    """

    def __init__(self) -> None:
        self.b = SystemBuilder(DWH, "dwh")
        self.spec = read_json("sample_warehouse.json")
        self.systems: dict[str, JSON] = self.spec["systems"]
        self.hubs: dict[str, JSON] = self.spec["hubs"]
        self.links: dict[str, JSON] = self.spec["links"]
        self.source_columns: dict[str, list[JSON]] = {}  # "crm.customer" -> columns
        self.hubs_fed: dict[str, list[str]] = {}  # "crm.customer" -> hub entities
        self.links_fed: dict[str, list[str]] = {}  # "crm.contact" -> link names

    @property
    def source_tables(self) -> list[JSON]:
        """``{"system", "table", "description", "hub", "satellite_of"[, "columns"]}``."""
        tables: list[JSON] = self.spec["source_tables"]
        return tables

    # -- tree ---------------------------------------------------------------------

    def build(self) -> None:
        """Build every element, table and mapping of the system."""
        for source in self.source_tables:
            key = f"{source['system']}.{source['table']}"
            hub = source["hub"]
            self.hubs_fed[key] = [hub] if hub else []
            kind, _, name = source["satellite_of"].partition(":")
            if kind == "hub" and name not in self.hubs_fed[key]:
                self.hubs_fed[key].append(name)
            self.links_fed[key] = [
                link for link, spec in self.links.items() if spec["fed_by"] == key
            ]
            for link in self.links_fed[key]:
                for entity in self.links[link]["hubs"]:
                    if entity not in self.hubs_fed[key]:
                        self.hubs_fed[key].append(entity)
        self._sources()
        self._staging()
        self._raw_vault()
        self._business_vault()
        self._marts()
        self._reference()

    def _sources(self) -> None:
        b = self.b
        hard_cases = read_json("sample_hard_cases.json")
        root = b.add("Sources", "FOLDER", None, {"description": "Operational source systems"})
        folders = {}
        for key, info in self.systems.items():
            folders[key] = b.add(
                info["name"],
                "FOLDER",
                root,
                {"description": info["description"], "owner": info["owner"]},
            )
        for source in self.source_tables:
            system, table = source["system"], source["table"]
            key = f"{system}.{table}"
            info = self.systems[system]
            if key in hard_cases:
                columns, rows = hard_cases[key]["columns"], hard_cases[key]["rows"]
            else:
                columns = parse_columns(source.get("columns", ""))
                rows = generic_rows(columns, 3 + len(columns) % 3)
            has_timestamp = any(c["dataType"] == "TIMESTAMP" for c in columns)
            element = b.add(
                f"{system}_{table}",
                "SOURCE_TABLE",
                folders[system],
                {
                    "schema": f"src_{system}",
                    "description": source["description"],
                    "owner": info["owner"],
                    "loadType": "DELTA" if has_timestamp else "FULL",
                    "sourceSystem": {
                        "name": info["name"],
                        "vendor": info["vendor"],
                        "connection": {
                            "type": "jdbc",
                            "host": f"{system}.db.example.internal",
                            "port": info["port"],
                        },
                    },
                    "tags": ["source", system],
                },
            )
            self.source_columns[key] = columns
            # Copies: the table's records must not share objects with the columns the
            # later layers read (a caller may mutate the dataset).
            b.add_table(
                element,
                description=source["description"],
                columns=copy.deepcopy(columns),
                data=copy.deepcopy(rows),
                schema=f"src_{system}",
            )

    def _staging(self) -> None:
        b = self.b
        root = b.add("Staging", "FOLDER", None, {"description": "Staged, hashed copies"})
        folders = {
            key: b.add(f"stg_{key}", "FOLDER", root, {"description": f"Staging of {info['name']}"})
            for key, info in self.systems.items()
        }
        for source in self.source_tables:
            system, table = source["system"], source["table"]
            key = f"{system}.{table}"
            system_name = self.systems[system]["name"]
            element = b.add(
                f"stg_{system}_{table}",
                "STAGE_TABLE",
                folders[system],
                {
                    "schema": "stage",
                    "description": f"Staged copy of {system_name}.{table}",
                    "owner": "dwh-team@example.com",
                    "loadType": "TRUNCATE_INSERT",
                    "recordSource": f"{system_name}.{table}",
                    "hashAlgorithm": "MD5",
                },
            )
            columns = [_copy_column(c) for c in self.source_columns[key]]
            columns += [
                records.column(
                    f"hk_{hub}",
                    "STRING",
                    nullable=False,
                    length=32,
                    description=f"Hash key of hub_{hub}",
                )
                for hub in self.hubs_fed[key]
            ]
            columns += [
                records.column(
                    f"hk_lnk_{link}",
                    "STRING",
                    nullable=False,
                    length=32,
                    description=f"Hash key of lnk_{link}",
                )
                for link in self.links_fed[key]
            ]
            columns += technical_columns(with_hash_diff=True)
            b.add_table(
                element, description=f"Stage of {key}", columns=columns, data=[], schema="stage"
            )

    def _raw_vault(self) -> None:
        b = self.b
        root = b.add("Raw Vault", "FOLDER", None, {"description": "Hubs, links, satellites"})
        subject_areas: list[str] = self.spec["subject_areas"]
        areas = {
            area: b.add(area, "FOLDER", root, {"description": f"Subject area {area}"})
            for area in subject_areas
        }
        satellites_of: dict[str, list[str]] = {}  # "hub:x" / "link:y" -> source keys
        for source in self.source_tables:
            satellites_of.setdefault(source["satellite_of"], []).append(
                f"{source['system']}.{source['table']}"
            )
        for area in subject_areas:
            for entity, hub_spec in self.hubs.items():
                if hub_spec["subject_area"] != area:
                    continue
                business_key = hub_spec["business_key"]
                hub = b.add(
                    f"hub_{entity}",
                    "HUB",
                    areas[area],
                    {
                        "schema": "raw_vault",
                        "description": f"Hub of the business entity {entity.replace('_', ' ')}",
                        "owner": "dwh-team@example.com",
                        "businessKey": [business_key],
                        "hashKey": f"hk_{entity}",
                    },
                )
                b.add_table(
                    hub,
                    description=f"Hub {entity}",
                    columns=[
                        _hash_key_column(f"hk_{entity}"),
                        self._key_column(business_key),
                        *technical_columns(with_hash_diff=False),
                    ],
                    data=[],
                    schema="raw_vault",
                )
                for source_key in satellites_of.get(f"hub:{entity}", []):
                    self._satellite(hub, f"hk_{entity}", source_key)
            for link, link_spec in self.links.items():
                hub_a, hub_b = link_spec["hubs"]
                if self.hubs[hub_a]["subject_area"] != area:
                    continue
                element = b.add(
                    f"lnk_{link}",
                    "LINK",
                    areas[area],
                    {
                        "schema": "raw_vault",
                        "description": f"Relationship between {hub_a} and {hub_b}",
                        "owner": "dwh-team@example.com",
                        "hubs": [f"hub_{hub_a}", f"hub_{hub_b}"],
                        "hashKey": f"hk_lnk_{link}",
                    },
                )
                b.add_table(
                    element,
                    description=f"Link {link}",
                    columns=[
                        _hash_key_column(f"hk_lnk_{link}"),
                        records.column(f"hk_{hub_a}", "STRING", nullable=False, length=32),
                        records.column(f"hk_{hub_b}", "STRING", nullable=False, length=32),
                        *technical_columns(with_hash_diff=False),
                    ],
                    data=[],
                    schema="raw_vault",
                )
                for sat_source in satellites_of.get(f"link:{link}", []):
                    self._satellite(element, f"hk_lnk_{link}", sat_source)

    def _key_column(self, business_key: str) -> JSON:
        for columns in self.source_columns.values():
            for c in columns:
                if c["name"] == business_key and c["primaryKey"]:
                    return records.column(
                        business_key,
                        c["dataType"],
                        nullable=False,
                        description=f"Business key ({c['description']})",
                    )
        raise ValueError(
            f"data/sample_warehouse.json: no source table has the business key {business_key!r}"
            " as a primary-key column"
        )

    def _satellite(self, parent: JSON, hash_key: str, source_key: str) -> None:
        system, table = source_key.split(".")
        element = self.b.add(
            f"sat_{system}_{table}",
            "SATELLITE",
            parent,
            {
                "schema": "raw_vault",
                "description": f"Descriptive attributes of {parent['name']} from "
                f"{self.systems[system]['name']}.{table}",
                "owner": "dwh-team@example.com",
                "parent": parent["name"],
                "hashDiff": "hash_diff",
                "historization": {"type": "SCD2", "validFrom": "load_dts", "validTo": None},
            },
        )
        descriptive = [
            _copy_column(c) for c in self.source_columns[source_key] if not c["primaryKey"]
        ]
        self.b.add_table(
            element,
            description=f"Satellite of {parent['name']} from {source_key}",
            columns=[
                records.column(hash_key, "STRING", nullable=False, primary_key=True, length=32),
                records.column(
                    "load_dts",
                    "TIMESTAMP",
                    nullable=False,
                    primary_key=True,
                    description="Load date-time",
                ),
                records.column(
                    "hash_diff",
                    "STRING",
                    nullable=False,
                    length=32,
                    description="Hash of the descriptive columns",
                ),
                *descriptive,
            ],
            data=[],
            schema="raw_vault",
        )

    def _business_vault(self) -> None:
        b = self.b
        root = b.add("Business Vault", "FOLDER", None, {"description": "Derived structures"})
        computed = b.add("Computed Satellites", "FOLDER", root, {"description": "Business rules"})
        for name, spec in self.spec["business_satellites"].items():
            entity, description = spec["hub"], spec["description"]
            element = b.add(
                name,
                "SATELLITE",
                computed,
                {
                    "schema": "business_vault",
                    "description": description,
                    "owner": "analytics@example.com",
                    "parent": f"hub_{entity}",
                    "hashDiff": None,
                    "schedule": {"cron": "0 2 * * *", "timezone": "Europe/Berlin"},
                },
            )
            b.add_table(
                element,
                description=description,
                columns=[
                    records.column(
                        f"hk_{entity}", "STRING", nullable=False, primary_key=True, length=32
                    ),
                    records.column("load_dts", "TIMESTAMP", nullable=False, primary_key=True),
                    *[
                        records.column(
                            c["name"],
                            c["dataType"],
                            **_decimal_size(c["dataType"]),
                        )
                        for c in spec["columns"]
                    ],
                ],
                data=[],
                schema="business_vault",
            )
        pits = b.add("PIT and Bridges", "FOLDER", root, {"description": "Query helpers"})
        for name, spec in self.spec["pit_bridges"].items():
            b.add(
                name,
                "VIEW",
                pits,
                {
                    "schema": "business_vault",
                    "description": spec["description"],
                    "owner": "analytics@example.com",
                    "materialization": "view",
                },
            )

    def _marts(self) -> None:
        b = self.b
        root = b.add("Marts", "FOLDER", None, {"description": "Star schemas for reporting"})
        for mart, views in self.spec["marts"].items():
            schema = "mart_" + mart.split()[0].lower()
            folder = b.add(mart, "FOLDER", root, {"description": f"{mart} (schema {schema})"})
            for view in views:
                b.add(
                    view["name"],
                    "VIEW",
                    folder,
                    {
                        "schema": schema,
                        "description": view["description"],
                        "owner": "bi-team@example.com",
                        "materialization": "view",
                        "grain": view["description"],
                    },
                )

    def _reference(self) -> None:
        b = self.b
        spec = read_json("sample_reference.json")
        root = b.add("Reference", "FOLDER", None, {"description": "Reference and code lists"})
        folders = {
            f["name"]: b.add(f["name"], "FOLDER", root, {"description": f["description"]})
            for f in spec["folders"]
        }
        for ref in spec["tables"]:
            element = b.add(
                ref["name"],
                "REFERENCE_TABLE",
                folders[ref["folder"]],
                {
                    "schema": "reference",
                    "description": ref["description"],
                    "owner": "data-governance@example.com",
                    "standard": ref["standard"],
                    "refresh": {"frequency": "yearly", "lastRefresh": "2024-01-15"},
                },
            )
            rows = ROW_FILES[ref["rows_file"]]() if "rows_file" in ref else ref["rows"]
            b.add_table(
                element,
                description=ref["table_description"],
                columns=ref["columns"],
                data=rows,
                schema="reference",
                **({"source": ref["source"]} if "source" in ref else {}),
            )


def _copy_column(column: JSON) -> JSON:
    """``column`` for a later layer: nullable, not a key, same type details."""
    return records.column(
        column["name"],
        column["dataType"],
        description=column["description"],
        **{k: v for k, v in column.items() if k in TYPE_DETAILS},
    )


def _hash_key_column(name: str) -> JSON:
    return records.column(
        name, "STRING", nullable=False, primary_key=True, length=32, description="Hash key"
    )


def deployments(elements: list[JSON]) -> dict[str, str]:
    """Element id -> deployment id: most non-folder elements of the first layers."""
    deployed = {}
    layers = ("SOURCE_TABLE", "STAGE_TABLE", "HUB", "LINK", "SATELLITE", "REFERENCE_TABLE")
    for number, e in enumerate(elements, start=1):
        if e["type"] in layers and number % 5 != 0:
            deployed[e["id"]] = _APRIL if number % 2 else _JUNE
    return deployed


def packages(elements: list[JSON]) -> list[JSON]:
    """The DWH packages: two closed releases (deployed elements), an open one, an empty one."""
    ids = [e["id"] for e in elements if e["type"] != "FOLDER"]
    april = [e["id"] for e in elements if e["deploymentId"] == _APRIL]
    june = [e["id"] for e in elements if e["deploymentId"] == _JUNE]
    undeployed = [i for i in ids if i not in set(april) | set(june)]
    return [
        records.package(
            system=DWH,
            name="release-2024.04",
            description="April release",
            status="CLOSED",
            created_at="2024-04-22T07:00:00Z",
            structure_ids=april[:15],
        ),
        records.package(
            system=DWH,
            name="release-2024.06",
            description="June release",
            status="CLOSED",
            created_at="2024-06-03T07:00:00Z",
            structure_ids=june[:15],
        ),
        records.package(
            system=DWH,
            name="release-2024.07",
            description="July release: marts",
            status="OPEN",
            created_at="2024-07-01T07:00:00Z",
            structure_ids=undeployed[:10],
        ),
        records.package(
            system=DWH,
            name="hotfix-2024.07.1",
            description="Empty hotfix package",
            status="OPEN",
            created_at="2024-07-09T12:30:00Z",
            structure_ids=[],
        ),
    ]


def _decimal_size(data_type: str) -> JSON:
    """The precision and scale of a business-vault column (none unless DECIMAL)."""
    return {"precision": 18, "scale": 2} if data_type == "DECIMAL" else {}
