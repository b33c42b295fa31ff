"""The emulator's content: sample data, scale data, raw data and script rendering.

These are pure functions, tested without a server.
"""

from __future__ import annotations

import copy
import hashlib
import json
import re
from collections import Counter
from datetime import date, datetime
from decimal import Decimal, InvalidOperation
from typing import Any

import pytest

from mddframes.emulator.dataset import Dataset
from mddframes.emulator.objecttypes import ELEMENT_TYPES
from mddframes.emulator.rawdata import build_raw_data, raw_data_from_dataset
from mddframes.emulator.rendering import (
    TemplateNotApplicableError,
    TemplateRenderError,
    file_name,
    ident,
    render_script,
)
from mddframes.emulator.sample import (
    LAB_AWKWARD_IDS,
    LAB_PIECE_IDS,
    build_sample,
    iso_countries,
    iso_currencies,
)
from mddframes.emulator.scale import big_table, build_scale

# runs once, on the newest pandas: checks the service's wire, not pandas (tests/pandas_ends.py)
pytestmark = pytest.mark.pandas_free

DATA_TYPES = {
    "STRING",
    "INTEGER",
    "BIGINT",
    "HUGEINT",  # 128 bits: external_ref, whose values go beyond 64 (issue 44: no misfits)
    "DECIMAL",
    "DOUBLE",
    "BOOLEAN",
    "DATE",
    "TIMESTAMP",
    "JSON",
}
ELEMENT_KEYS = [
    "id",
    "name",
    "type",
    "parentId",
    "systemName",
    "version",
    "modifiedAt",
    "deployed",
    "deploymentId",
]


@pytest.fixture(scope="module")
def sample() -> Dataset:
    return build_sample()


@pytest.fixture(scope="module")
def scale() -> Dataset:
    return build_scale(3000, seed=7)


def _dwh(sample: Dataset) -> list[dict]:
    return [e for e in sample.elements if e["systemName"] == "DWH"]


def _levels(elements: list[dict]) -> dict[str, int]:
    by_id = {e["id"]: e for e in elements}
    levels: dict[str, int] = {}
    for e in elements:  # parents come first, so a parent's level is known
        levels[e["id"]] = 1 if e["parentId"] is None else levels[by_id[e["parentId"]]["id"]] + 1
    return levels


def assert_integrity(dataset: Dataset) -> None:
    """Every reference in the dataset points at a record that exists, of the right kind."""
    systems = {s["name"] for s in dataset.systems}
    element_ids = [e["id"] for e in dataset.elements]
    assert len(element_ids) == len(set(element_ids)), "duplicate element ids"
    tables = {t["id"]: t for t in dataset.tables}
    mappings = {m["id"]: m for m in dataset.mappings}
    assert len(tables) == len(dataset.tables), "duplicate table ids"
    assert len(mappings) == len(dataset.mappings), "duplicate mapping ids"
    seen: dict[str, dict] = {}
    table_owners: Counter[str] = Counter()
    mapping_owners: Counter[str] = Counter()
    for e in dataset.elements:
        assert list(e)[: len(ELEMENT_KEYS)] == ELEMENT_KEYS, e["id"]
        assert list(e)[-1] == "attributes" and isinstance(e["attributes"], dict), e["id"]
        assert e["systemName"] in systems, e["id"]
        assert e["type"] in ELEMENT_TYPES, e["id"]
        assert e["deployed"] == (e["deploymentId"] is not None), e["id"]
        datetime.fromisoformat(e["modifiedAt"])
        if e["parentId"] is not None:
            parent = seen.get(e["parentId"])
            assert parent is not None, f"{e['id']}: parent {e['parentId']} missing or listed later"
            assert parent["systemName"] == e["systemName"], e["id"]
        if "tableId" in e:
            table = tables[e["tableId"]]
            assert table["structureId"] == e["id"], e["id"]
            table_owners[e["tableId"]] += 1
        if "mappingId" in e:
            mapping = mappings[e["mappingId"]]
            # Its target owns a mapping; in FLOW a second feed's source owns it.
            assert e["id"] in (mapping["targetId"], mapping["sourceId"]), e["id"]
            mapping_owners[e["mappingId"]] += 1
        seen[e["id"]] = e
    assert set(table_owners) == set(tables) and max(table_owners.values(), default=1) == 1
    assert set(mapping_owners) == set(mappings) and max(mapping_owners.values(), default=1) == 1
    for t in dataset.tables:
        assert list(t) == ["id", "name", "structureId", "metadata", "data"], t["id"]
        assert list(t["metadata"])[0] == "description" and list(t["metadata"])[-1] == "columns"
        for c in t["metadata"]["columns"]:
            assert list(c)[:5] == ["name", "dataType", "nullable", "primaryKey", "description"]
            assert c["dataType"] in DATA_TYPES, (t["id"], c)
    for m in dataset.mappings:
        assert list(m) == ["id", "name", "sourceId", "targetId", "description", "columnMappings"]
        assert m["sourceId"] in seen and m["targetId"] in seen, m["id"]
        assert seen[m["sourceId"]]["systemName"] == seen[m["targetId"]]["systemName"], m["id"]
    for p in dataset.packages:
        assert p["systemName"] in systems and p["status"] in ("OPEN", "CLOSED")
        for sid in p["structureIds"]:
            assert sid in seen and seen[sid]["systemName"] == p["systemName"], (p["name"], sid)
    names = [(p["systemName"], p["name"]) for p in dataset.packages]
    assert len(names) == len(set(names)), "duplicate package names in a system"


def _plain_json(value: Any, where: str = "$") -> None:
    if isinstance(value, dict):
        for k, v in value.items():
            assert isinstance(k, str), where
            _plain_json(v, f"{where}.{k}")
    elif isinstance(value, list):
        for i, v in enumerate(value):
            _plain_json(v, f"{where}[{i}]")
    else:
        assert value is None or type(value) in (str, int, float, bool), (where, type(value))


# -- sample: shape and integrity ---------------------------------------------------


def test_sample_dwh_is_a_realistic_warehouse(sample):
    dwh = _dwh(sample)
    types = Counter(e["type"] for e in dwh)
    assert len(dwh) >= 150
    assert len(types) >= 6
    assert {"FOLDER", "SOURCE_TABLE", "STAGE_TABLE", "HUB", "LINK", "SATELLITE", "VIEW"} <= set(
        types
    )
    assert max(_levels(dwh).values()) >= 4
    roots = [e["name"] for e in dwh if e["parentId"] is None]
    assert roots == ["Sources", "Staging", "Raw Vault", "Business Vault", "Marts", "Reference"]
    assert all(re.fullmatch(r"dwh-\d{4}", e["id"]) for e in dwh)
    satellite_parents = {
        next(p["type"] for p in dwh if p["id"] == e["parentId"])
        for e in dwh
        if e["type"] == "SATELLITE" and e["attributes"]["schema"] == "raw_vault"
    }
    assert satellite_parents == {"HUB", "LINK"}


def test_sample_has_a_second_system_and_integrity_holds(sample):
    assert [s["name"] for s in sample.systems] == ["DWH", "LAB", "FLOW"]
    assert any(e["systemName"] == "LAB" for e in sample.elements)
    assert_integrity(sample)


def test_sample_is_plain_json_in_a_fixed_key_order(sample):
    for kind in ("systems", "elements", "tables", "mappings", "object_types", "packages"):
        records = getattr(sample, kind)
        _plain_json(records, kind)
        text = json.dumps(records, allow_nan=False, ensure_ascii=False)
        assert json.loads(text) == records
        # Key order survives the round trip too (dict equality ignores it).
        assert json.dumps(json.loads(text), ensure_ascii=False) == text


def test_sample_is_deterministic_and_fresh_on_every_call(sample):
    again = build_sample()
    assert again == sample
    assert json.dumps(again.__dict__) == json.dumps(sample.__dict__)
    # Mutating one build's nested rows must not leak into the next build.
    customer = next(t for t in again.tables if t["name"] == "crm_customer")
    customer["data"][0]["address"]["city"] = "changed"
    customer["metadata"]["columns"][0]["name"] = "changed"
    assert build_sample() == sample


# The sample's canonical JSON (contract key order, UTF-8, no spaces), pinned per kind so
# that a change to the data files or the builders is deliberate: if the change is meant,
# put the new digests here (the failure shows which kinds changed).
SAMPLE_DIGESTS = {
    "systems": "a18f67d714b5b56b22cf4a7563e7022f0c5546ba7dcd8463b14a42ffa3e5dcd0",
    "elements": "3c00da964a6584f27cf0b22665d35d40da7b720a1274d75d983f564b9ac23dad",
    "tables": "e679e1ad46874fed664d2684a1b99f4a51a7951a8e1992a56ce968261477b964",  # issue 44: HUGEINT
    "mappings": "8234483f56ccf289cf2f77c15de2dc434b80b0e4694e158a6d8bfa04b4205424",
    "object_types": "40d9739874b24fbc1c6f4be88670aaf35c418a4e9470e19fb034d1240fbadb5e",
    "packages": "474a0b51f0a5274afd3f192de01762c52d4d076cf99d2c9a94a829ae86c89d60",
}
SAMPLE_DIGEST = "0d0d14abdbc79a8c91d4fb924cfaf54870742b60399c4785fa51a4b87a460b94"
SAMPLE_WITH_FLOW_DIGEST = "8e7cd3603911b561491c13655aac9b08973a222fe21e01f56ff313d4031202f4"


def _digest(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _without_flow(kind: str, records: list[Any]) -> list[Any]:
    """The records of DWH and LAB: the FLOW system was added later, beside them."""
    if kind == "systems":
        return [r for r in records if r["name"] != "FLOW"]
    if kind == "elements":
        return [r for r in records if r["systemName"] != "FLOW"]
    if kind in ("tables", "mappings"):
        return [r for r in records if not r["id"].startswith("flow-")]
    return records


def test_sample_digest_is_pinned(sample):
    # DWH and LAB stay exactly as they were before FLOW joined them (much relies on them).
    kept = {kind: _without_flow(kind, records) for kind, records in vars(sample).items()}
    assert {kind: _digest(records) for kind, records in kept.items()} == SAMPLE_DIGESTS
    assert _digest(kept) == SAMPLE_DIGEST
    assert _digest(vars(sample)) == SAMPLE_WITH_FLOW_DIGEST


def test_sample_tables_have_columns_and_rows(sample):
    with_rows = [t for t in sample.tables if t["data"] and t["metadata"]["columns"]]
    assert len(with_rows) >= 10
    owners = {e["id"]: e for e in sample.elements}
    assert {owners[t["structureId"]]["type"] for t in with_rows} >= {
        "SOURCE_TABLE",
        "REFERENCE_TABLE",
    }
    used = {c["dataType"] for t in sample.tables for c in t["metadata"]["columns"]}
    assert used == DATA_TYPES


def _conforms(data_type: str, value: Any) -> bool:
    if data_type == "STRING":
        return isinstance(value, str)
    if data_type in ("INTEGER", "BIGINT", "HUGEINT"):
        bits = {"INTEGER": 31, "BIGINT": 63, "HUGEINT": 127}[data_type]
        return type(value) is int and -(2**bits) <= value < 2**bits
    if data_type == "DECIMAL":
        try:
            return isinstance(value, str) and Decimal(value).is_finite()
        except InvalidOperation:
            return False
    if data_type == "DOUBLE":
        return type(value) in (int, float)
    if data_type == "BOOLEAN":
        return type(value) is bool
    if data_type == "DATE":
        return isinstance(value, str) and date.fromisoformat(value).isoformat() == value
    if data_type == "TIMESTAMP":
        return isinstance(value, str) and "T" in value and bool(datetime.fromisoformat(value))
    if data_type == "JSON":
        return isinstance(value, dict | list)
    return False


def test_every_declared_cell_matches_its_data_type(sample):
    checked = 0
    for t in sample.tables:
        columns = {c["name"]: c for c in t["metadata"]["columns"]}
        for i, row in enumerate(t["data"]):
            for name, value in row.items():
                column = columns.get(name)
                if column is None:
                    continue  # an undeclared column: loaders infer it
                where = f"table {t['id']} row {i} column {name}"
                if value is None:
                    assert column["nullable"], f"{where}: null in a NOT NULL column"
                else:
                    assert _conforms(column["dataType"], value), f"{where}: {value!r}"
                    checked += 1
            for name, column in columns.items():
                if column["primaryKey"]:
                    assert row.get(name) is not None, f"table {t['id']} row {i}: no key {name}"
    assert checked > 2000


def test_every_hard_case_is_present_in_the_rows(sample):
    found: set[str] = set()
    for t in sample.tables:
        declared = {c["name"]: c["dataType"] for c in t["metadata"]["columns"]}
        for row in t["data"]:
            if set(declared) - set(row):
                found.add("absent key")
            if set(row) - set(declared):
                found.add("undeclared column")
            if list(row) != [k for k in declared if k in row] + [
                k for k in row if k not in declared
            ]:
                found.add("row keys in another order")
            for name, value in row.items():
                data_type = declared.get(name)
                if value is None:
                    found.add("null")
                elif isinstance(value, dict):
                    found.add("nested object")
                elif isinstance(value, list):
                    found.add("list")
                elif isinstance(value, bool):
                    found.add("boolean")
                elif isinstance(value, int) and abs(value) > 2**53:
                    found.add("int above 2**53")
                    if abs(value) >= 2**64:
                        found.add("int above 2**64")
                elif isinstance(value, float):
                    if value == 0.1:
                        found.add("float 0.1")
                elif isinstance(value, str):
                    if value == "":
                        found.add("empty string")
                    if data_type == "DECIMAL" and re.fullmatch(r"-?\d+\.\d+", value):
                        found.add("decimal as string")
                    if data_type == "DATE":
                        found.add("ISO date")
                    if data_type == "TIMESTAMP":
                        found.add("ISO datetime")
                    if re.fullmatch(r"0\d+", value):
                        found.add("leading zeros")
                    if value[:1] in ("=", "+", "-", "@") and data_type == "STRING":
                        found.add(f"formula-like {value[0]}")
                    if any(ord(ch) > 127 for ch in value):
                        found.add("non-ASCII")
                    if any(ord(ch) > 0xFFFF for ch in value):
                        found.add("astral-plane character")
    expected = {
        "absent key",
        "undeclared column",
        "row keys in another order",
        "null",
        "nested object",
        "list",
        "boolean",
        "int above 2**53",
        "int above 2**64",
        "float 0.1",
        "empty string",
        "decimal as string",
        "ISO date",
        "ISO datetime",
        "leading zeros",
        "formula-like =",
        "formula-like +",
        "formula-like -",
        "formula-like @",
        "non-ASCII",
        "astral-plane character",
    }
    assert expected - found == set(), f"hard cases missing: {sorted(expected - found)}"


def test_iso_3166_country_list_is_complete():
    countries = iso_countries()
    assert len(countries) == 249
    for key in ("alpha2", "alpha3", "numeric", "name"):
        assert len({c[key] for c in countries}) == 249, key
    assert all(re.fullmatch(r"[A-Z]{2}", c["alpha2"]) for c in countries)
    assert all(re.fullmatch(r"[A-Z]{3}", c["alpha3"]) for c in countries)
    assert all(re.fullmatch(r"\d{3}", c["numeric"]) for c in countries)
    by_code = {c["alpha2"]: c for c in countries}
    assert by_code["AF"] == {
        "alpha2": "AF",
        "alpha3": "AFG",
        "numeric": "004",
        "name": "Afghanistan",
    }
    assert by_code["AX"]["name"] == "Åland Islands"
    assert by_code["DE"]["numeric"] == "276"
    assert sum(c["numeric"].startswith("0") for c in countries) == 30  # codes below 100


def test_iso_4217_currency_list_is_complete():
    currencies = iso_currencies()
    assert 170 <= len(currencies) <= 190
    assert len({c["code"] for c in currencies}) == len(currencies)
    assert len({c["numeric"] for c in currencies}) == len(currencies)
    assert all(re.fullmatch(r"\d{3}", c["numeric"]) for c in currencies)
    by_code = {c["code"]: c for c in currencies}
    assert by_code["ALL"]["numeric"] == "008"
    assert by_code["EUR"] == {"code": "EUR", "numeric": "978", "minor_units": 2, "name": "Euro"}
    assert by_code["JPY"]["minor_units"] == 0
    assert by_code["BHD"]["minor_units"] == 3
    assert by_code["XAU"]["minor_units"] is None


def test_reference_tables_carry_the_iso_lists(sample):
    tables = {t["name"]: t for t in sample.tables}
    assert tables["ref_country"]["data"] == iso_countries()
    assert tables["ref_currency"]["data"] == iso_currencies()
    codes = [r["code"] for r in tables["ref_payment_method"]["data"]]
    assert "01" in codes and all(isinstance(c, str) for c in codes)


def test_mappings_carry_optional_and_extra_keys(sample):
    assert len(sample.mappings) >= 5
    entries = [e for m in sample.mappings for e in m["columnMappings"]]
    assert any("transformation" not in e for e in entries)
    assert any(set(e) - {"source", "target", "transformation"} for e in entries)
    assert any(e.get("source") is None for e in entries)
    elements = {e["id"]: e for e in sample.elements}
    pairs = {
        (elements[m["sourceId"]]["type"], elements[m["targetId"]]["type"]) for m in sample.mappings
    }
    assert ("SOURCE_TABLE", "STAGE_TABLE") in pairs
    assert ("STAGE_TABLE", "HUB") in pairs


def test_packages_open_and_closed_in_both_systems(sample):
    status = Counter((p["systemName"], p["status"]) for p in sample.packages)
    assert status[("DWH", "OPEN")] >= 1 and status[("DWH", "CLOSED")] >= 1
    assert status[("LAB", "OPEN")] >= 1
    assert any(p["structureIds"] for p in sample.packages if p["status"] == "OPEN")
    assert any(not p["structureIds"] for p in sample.packages if p["status"] == "OPEN")


def test_lab_awkward_ids_are_distinct_resources_next_to_their_pieces(sample):
    lab = {e["id"]: e for e in sample.elements if e["systemName"] == "LAB"}
    tables = {t["id"]: t for t in sample.tables}
    mappings = {m["id"]: m for m in sample.mappings}
    for needed in ("/", "..", "%", " ", "Ω"):
        assert any(needed in i for i in LAB_AWKWARD_IDS), needed
    for resource_id in LAB_AWKWARD_IDS + LAB_PIECE_IDS:
        element = lab[resource_id]
        assert element["name"] == resource_id
        assert element["tableId"] == resource_id and element["mappingId"] == resource_id
        assert tables[resource_id]["data"][0]["id"] == resource_id
        assert repr(resource_id) in mappings[resource_id]["description"]
    assert {"tbl", "with", "slash"} <= set(lab)
    assert "tbl%2Fwith%2Fslash" in lab and "tbl/with/slash" in lab
    packages = {p["name"] for p in sample.packages if p["systemName"] == "LAB"}
    assert {"sandbox/Zürich 1", "sandbox"} <= packages


# -- raw data ---------------------------------------------------------------------


def test_raw_data_of_a_stage_table(sample):
    stage = next(e for e in sample.elements if e["name"] == "stg_crm_customer")
    raw = raw_data_from_dataset(sample, stage["id"])
    assert list(raw) == ["element", "schema", "path", "children", "table", "mappings"]
    assert raw["element"] == stage
    assert raw["schema"] == "stage"
    assert raw["path"] == ["Staging", "stg_crm", "stg_crm_customer"]
    assert raw["children"] == []
    assert "data" not in raw["table"] and "columns" not in raw["table"]["metadata"]
    table = next(t for t in sample.tables if t["id"] == stage["tableId"])
    assert raw["table"]["columns"] == table["metadata"]["columns"]
    [mapping] = raw["mappings"]
    assert mapping["sourceName"] == "crm_customer"
    assert mapping["sourceSchema"] == "src_crm"
    assert mapping["columnMappings"][0] == {
        "source": "customer_no",
        "target": "customer_no",
        "transformation": "TRIM(src.customer_no)",
    }
    _plain_json(raw)


def test_raw_data_lists_children_and_tolerates_odd_records():
    element = {"id": "e1", "name": "x", "type": "HUB", "systemName": "S", "attributes": None}
    raw = build_raw_data(
        element,
        path=["root", "x"],
        children=[{"id": "c", "name": "child", "type": "SATELLITE", "extra": 1}],
        table={"id": "t", "name": "x", "metadata": {"description": "no columns"}},
        mappings=[{"id": "m", "columnMappings": [{"target": "a"}, "junk"]}, "junk"],
    )
    assert raw["element"]["attributes"] == {}
    assert raw["schema"] == "s"
    assert raw["children"] == [{"id": "c", "name": "child", "type": "SATELLITE"}]
    assert raw["table"] == {
        "id": "t",
        "name": "x",
        "metadata": {"description": "no columns"},
        "columns": [],
    }
    assert raw["mappings"][0]["columnMappings"] == [{"target": "a"}]
    assert raw["mappings"][0]["sourceName"] is None
    assert len(raw["mappings"]) == 1
    assert element["attributes"] is None  # the input is not changed


def test_raw_data_from_dataset_names_an_unknown_element(sample):
    with pytest.raises(KeyError, match="no element with id 'nope'"):
        raw_data_from_dataset(sample, "nope")


# -- rendering --------------------------------------------------------------------

_YAML_LINE = re.compile(
    r"(?P<indent>(?:  )*)(?:- )?(?:(?P<key>[a-z_]+):(?: (?P<value>.+))?|(?P<item>.+))"
)


def check_yaml(text: str) -> dict[str, Any]:
    """A simple check of the YAML subset the model template writes.

    Every line is ``key: <JSON value>``, ``key:`` or ``- <JSON value>`` at an even
    indentation; every value parses as JSON. Returns the model name and column names.
    """
    model_name = None
    columns = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        match = _YAML_LINE.fullmatch(line)
        assert match, f"line {number} is not in the YAML subset: {line!r}"
        value = match["value"] if match["key"] else match["item"]
        parsed = json.loads(value) if value is not None else None
        indent = len(match["indent"])
        if match["key"] == "name" and indent == 2:
            model_name = parsed
        if match["key"] == "name" and indent == 6:
            columns.append(parsed)
    assert text.startswith("version: 2\nmodels:\n")
    return {"name": model_name, "columns": columns}


def _applicable_pairs(dataset: Dataset, per_type: int | None = None):
    for object_type in dataset.object_types:
        for element_type in object_type["elementTypes"]:
            elements = [e for e in dataset.elements if e["type"] == element_type]
            assert elements, f"no {element_type} element to render {object_type['id']} with"
            for element in elements[:per_type]:
                yield object_type, element


def _check_rendering(dataset: Dataset, object_type: dict, element: dict) -> None:
    raw = raw_data_from_dataset(dataset, element["id"])
    name, text = render_script(object_type, raw)
    assert name == file_name(element["name"], object_type["fileExtension"])
    assert text.strip(), (object_type["id"], element["id"])
    columns = [c["name"] for c in (raw["table"] or {"columns": []})["columns"]]
    kind = object_type["id"]
    if kind == "sql-ddl":
        if columns:
            assert "CREATE TABLE" in text
            body = text.split("CREATE TABLE", 1)[1].split(");", 1)[0]
            declared = [
                line.split()[0].strip('"') for line in body.splitlines()[1:] if line.strip()
            ]
            declared = [d for d in declared if d != "PRIMARY"]
            assert declared == [c.replace('"', '""') for c in columns], element["id"]
        else:
            assert "nothing to create" in text
    elif kind == "sql-load":
        for mapping in raw["mappings"]:
            targets = [e["target"] for e in mapping["columnMappings"] if e.get("target")]
            if targets:
                insert = text.split(f"-- mapping {mapping['id']}", 1)[1]
                for target in targets:
                    assert target in insert, (element["id"], target)
        if not raw["mappings"]:
            assert "nothing to load" in text
    elif kind == "dbt-model":
        model = check_yaml(text)
        assert model["name"] == element["name"]
        if columns:
            assert model["columns"] == columns
    elif kind == "markdown-doc":
        assert text.startswith("# ")
        for child in raw["children"]:
            assert child["id"].replace("|", "\\|") in text


def test_every_object_type_renders_every_sample_element_it_declares(sample):
    assert len(sample.object_types) >= 3
    assert {"sql-ddl", "sql-load", "dbt-model"} <= {o["id"] for o in sample.object_types}
    rendered = 0
    for object_type, element in _applicable_pairs(sample):
        _check_rendering(sample, object_type, element)
        rendered += 1
    assert rendered > 400


def test_ddl_of_a_hub_declares_its_primary_key(sample):
    ddl = next(o for o in sample.object_types if o["id"] == "sql-ddl")
    hub = next(e for e in sample.elements if e["name"] == "hub_customer")
    _name, text = render_script(ddl, raw_data_from_dataset(sample, hub["id"]))
    assert "CREATE TABLE raw_vault.hub_customer (" in text
    assert "hk_customer VARCHAR(32) NOT NULL," in text
    assert "PRIMARY KEY (hk_customer)" in text


def test_load_statement_reads_from_the_mapping_source(sample):
    load = next(o for o in sample.object_types if o["id"] == "sql-load")
    hub = next(e for e in sample.elements if e["name"] == "hub_customer")
    _name, text = render_script(load, raw_data_from_dataset(sample, hub["id"]))
    assert "INSERT INTO raw_vault.hub_customer (" in text
    assert "FROM stage.stg_crm_customer AS src;" in text


def test_awkward_names_are_quoted_in_sql_and_safe_in_file_names(sample):
    ddl = next(o for o in sample.object_types if o["id"] == "sql-ddl")
    raw = raw_data_from_dataset(sample, "tbl/with/slash")
    name, text = render_script(ddl, raw)
    assert name == "tbl_with_slash.sql"
    assert 'CREATE TABLE lab."tbl/with/slash" (' in text
    name, _ = render_script(ddl, raw_data_from_dataset(sample, ".."))
    assert name == "__.sql"


def test_load_statement_without_source_schema_or_name(sample):
    load = next(o for o in sample.object_types if o["id"] == "sql-load")
    hub = next(e for e in sample.elements if e["name"] == "hub_customer")
    raw = raw_data_from_dataset(sample, hub["id"])
    for mapping in raw["mappings"]:
        mapping["sourceSchema"] = None
    _name, text = render_script(load, raw)
    assert "FROM stg_crm_customer AS src;" in text
    raw["mappings"][0]["sourceName"] = None
    _name, text = render_script(load, raw)
    assert f"FROM {ident(raw['mappings'][0]['sourceId'])} AS src;" in text


def test_render_refuses_an_object_type_that_does_not_apply(sample):
    load = next(o for o in sample.object_types if o["id"] == "sql-load")
    folder = next(e for e in sample.elements if e["type"] == "FOLDER")
    with pytest.raises(ValueError, match="does not apply to element type 'FOLDER'") as info:
        render_script(load, raw_data_from_dataset(sample, folder["id"]))
    assert isinstance(info.value, TemplateNotApplicableError)
    assert "sql-load" in str(info.value) and folder["id"] in str(info.value)


def test_render_reports_a_template_that_fails(sample):
    broken = {
        "id": "broken",
        "fileExtension": "txt",
        "elementTypes": ["FOLDER"],
        "template": "{{ element.no_such_key }}",
    }
    folder = next(e for e in sample.elements if e["type"] == "FOLDER")
    with pytest.raises(TemplateRenderError, match="'broken' failed to render element 'dwh-0001'"):
        render_script(broken, raw_data_from_dataset(sample, folder["id"]))


@pytest.mark.parametrize(
    ("name", "extension", "expected"),
    [
        ("hub_customer", "sql", "hub_customer.sql"),
        ("tbl/with/slash", "sql", "tbl_with_slash.sql"),
        ("..", "sql", "__.sql"),
        (".", "yml", "_.yml"),
        ("", "md", "_.md"),
        (None, None, "_.txt"),
        ('a?b#c:d*e"f<g>h|i\\j', "sql", "a_b#c_d_e_f_g_h_i_j.sql"),
        (" .hidden. ", "sql", "__hidden__.sql"),
        ("CON", "sql", "CON_.sql"),
        ("lpt1", "sql", "lpt1_.sql"),
        ("line\nbreak\ttab", "sql", "line_break_tab.sql"),
        ("Zu\u0308rich-Ω", "sql", "Zürich-Ω.sql"),
        ("100%", "sql", "100%.sql"),
        ("x" * 300, "sql", "x" * 200 + ".sql"),
    ],
)
def test_file_name_rule(name, extension, expected):
    assert file_name(name, extension) == expected


# -- scale ------------------------------------------------------------------------


@pytest.mark.parametrize("n", [1, 5, 6, 7, 137, 1000])
def test_scale_builds_exactly_n_elements_with_integrity(n):
    dataset = build_scale(n)
    assert len(dataset.elements) == n
    assert_integrity(dataset)


def test_scale_proportions_depth_and_types(scale):
    assert_integrity(scale)
    n = len(scale.elements)
    assert n == 3000
    assert abs(len(scale.tables) - n / 20) <= n / 200
    assert abs(len(scale.mappings) - n / 40) <= n / 200
    assert 4 <= max(_levels(scale.elements).values()) <= 6
    assert {e["type"] for e in scale.elements} == set(ELEMENT_TYPES)
    for t in scale.tables:
        assert 8 <= len(t["metadata"]["columns"]) <= 12
        assert 15 <= len(t["data"]) <= 25
    assert [o["id"] for o in scale.object_types] == [o["id"] for o in build_sample().object_types]
    assert {p["status"] for p in scale.packages} == {"OPEN", "CLOSED"}


def test_scale_cells_match_their_data_types(scale):
    for t in scale.tables[:50]:
        columns = {c["name"]: c for c in t["metadata"]["columns"]}
        for row in t["data"]:
            assert set(row) <= set(columns)
            for name, value in row.items():
                if value is None:
                    assert columns[name]["nullable"]
                else:
                    assert _conforms(columns[name]["dataType"], value), (t["id"], name, value)


def test_scale_is_deterministic_per_seed(scale):
    assert build_scale(3000, seed=7) == scale
    assert build_scale(3000, seed=8) != scale
    named = build_scale(50, system="Big One")
    assert {e["systemName"] for e in named.elements} == {"Big One"}
    assert named.elements[0]["id"] == "big-one-000001"


def test_scale_elements_render_with_the_sample_object_types(scale):
    for object_type, element in _applicable_pairs(scale, per_type=15):
        _check_rendering(scale, object_type, element)


@pytest.mark.parametrize("bad", [0, -1, 2.5, "10", True, None])
def test_scale_rejects_a_bad_element_count(bad):
    with pytest.raises(ValueError, match="n_elements must be a positive int"):
        build_scale(bad)


def test_scale_rejects_a_bad_system_name():
    with pytest.raises(ValueError, match="system must be a non-empty string"):
        build_scale(10, system="  ")


def test_big_table_has_the_requested_size():
    table = big_table("bench", n_rows=1234, n_cols=15, structure_id="owner")
    assert table["id"] == "bench" and table["structureId"] == "owner"
    assert len(table["metadata"]["columns"]) == 15
    assert len({c["name"] for c in table["metadata"]["columns"]}) == 15
    assert [r["id"] for r in table["data"]] == list(range(1234))
    assert any(len(r) < 15 for r in table["data"])  # absent keys
    _plain_json(table)
    assert big_table("bench", n_rows=1234, n_cols=15, structure_id="owner") == table
    copy_of_row = copy.deepcopy(table["data"][0])
    table["data"][0].clear()
    assert big_table("bench", n_rows=1, n_cols=15, structure_id="owner")["data"][0] == copy_of_row


@pytest.mark.parametrize(("rows", "cols"), [(-1, 3), (3, 0), (1.5, 3), (3, "4")])
def test_big_table_rejects_bad_sizes(rows, cols):
    with pytest.raises(ValueError, match="n_rows|n_cols"):
        big_table(n_rows=rows, n_cols=cols)
