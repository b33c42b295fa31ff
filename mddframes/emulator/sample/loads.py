"""The mappings of the DWH system: how each loaded element is fed.

Every stage is loaded from its source table; hubs, links and satellites from a stage;
business satellites from a raw satellite; point-in-time tables, bridges and mart
views from the element they read. Each mapping's target owns it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mddframes.emulator.sample.builder import has_column, md5, technical_entries

if TYPE_CHECKING:
    from mddframes.emulator.sample.warehouse import Warehouse

JSON = dict[str, Any]

# Columns a view mapping leaves out: the vault's bookkeeping, not business data.
_TECHNICAL_COLUMNS = ("hash_diff", "load_dts", "record_source")


def add_mappings(w: Warehouse) -> None:
    """Add every mapping of the warehouse ``w`` (its tree must be built)."""
    b = w.b
    for source in w.source_tables:
        system, table, hub = source["system"], source["table"], source["hub"]
        key = f"{system}.{table}"
        stage = b.by_name[f"stg_{system}_{table}"]
        b.add_mapping(
            b.by_name[f"{system}_{table}"],
            stage,
            description=f"Stage {key}",
            column_mappings=_stage_entries(w, key),
        )
        if hub:
            business_key = w.hubs[hub]["business_key"]
            b.add_mapping(
                stage,
                b.by_name[f"hub_{hub}"],
                description=f"Load hub_{hub} from {key}",
                column_mappings=[
                    {"source": f"hk_{hub}", "target": f"hk_{hub}", "transformation": None},
                    {
                        "source": business_key,
                        "target": business_key,
                        "transformation": None,
                        "businessKey": True,
                    },
                    *technical_entries(),
                ],
            )
        for link in w.links_fed[key]:
            hub_a, hub_b = w.links[link]["hubs"]
            b.add_mapping(
                stage,
                b.by_name[f"lnk_{link}"],
                description=f"Load lnk_{link} from {key}",
                column_mappings=[
                    {
                        "source": f"hk_lnk_{link}",
                        "target": f"hk_lnk_{link}",
                        "transformation": None,
                    },
                    {"source": f"hk_{hub_a}", "target": f"hk_{hub_a}"},
                    {"source": f"hk_{hub_b}", "target": f"hk_{hub_b}"},
                    *technical_entries(),
                ],
            )
        kind, _, name = source["satellite_of"].partition(":")
        hash_key = f"hk_{name}" if kind == "hub" else f"hk_lnk_{name}"
        satellite = b.by_name[f"sat_{system}_{table}"]
        b.add_mapping(
            stage,
            satellite,
            description=f"Load {satellite['name']} from {key}",
            column_mappings=[
                {"source": hash_key, "target": hash_key, "transformation": None},
                {"source": "load_dts", "target": "load_dts", "transformation": None},
                {"source": "hash_diff", "target": "hash_diff", "transformation": None},
                *[
                    {"source": c["name"], "target": c["name"]}
                    for c in w.source_columns[key]
                    if not c["primaryKey"]
                ],
            ],
        )
    for name, spec in w.spec["business_satellites"].items():
        entity = spec["hub"]
        b.add_mapping(
            b.by_name[spec["source"]],
            b.by_name[name],
            description=spec["description"],
            column_mappings=[
                {"source": f"hk_{entity}", "target": f"hk_{entity}", "transformation": None},
                {"source": None, "target": "load_dts", "transformation": "CURRENT_TIMESTAMP"},
                *[
                    {
                        "source": None,
                        "target": c["name"],
                        "transformation": c["expression"],
                        "comment": f"business rule {i + 1} of {name}",
                    }
                    for i, c in enumerate(spec["columns"])
                ],
            ],
        )
    for name, spec in w.spec["pit_bridges"].items():
        _view_mapping(w, spec["source"], name, spec["description"])
    for views in w.spec["marts"].values():
        for view in views:
            if view["source"] is not None:
                _view_mapping(w, view["source"], view["name"], view["description"])


def _view_mapping(w: Warehouse, source: str, target: str, description: str) -> None:
    columns = [c for c in w.b.columns_of(source) if c["name"] not in _TECHNICAL_COLUMNS]
    w.b.add_mapping(
        w.b.by_name[source],
        w.b.by_name[target],
        description=description,
        column_mappings=[
            {
                "source": c["name"],
                "target": c["name"],
                "transformation": None,
                "description": c["description"],
            }
            for c in columns[:8]
        ],
    )


def _stage_entries(w: Warehouse, key: str) -> list[JSON]:
    system, table = key.split(".")
    source_columns = w.source_columns[key]
    entries: list[JSON] = []
    for i, c in enumerate(source_columns):
        entry: JSON = {"source": c["name"], "target": c["name"]}
        # Some entries carry no transformation key at all (an optional key).
        if c["dataType"] == "STRING":
            entry["transformation"] = f"TRIM(src.{c['name']})"
        elif i % 2 == 0:
            entry["transformation"] = None
        entries.append(entry)
    for hub in w.hubs_fed[key]:
        business_key = w.hubs[hub]["business_key"]
        entries.append(
            {
                "source": business_key if has_column(source_columns, business_key) else None,
                "target": f"hk_{hub}",
                "transformation": md5(f"src.{business_key}"),
            }
        )
    for link in w.links_fed[key]:
        keys = [w.hubs[h]["business_key"] for h in w.links[link]["hubs"]]
        entries.append(
            {
                "source": None,
                "target": f"hk_lnk_{link}",
                "transformation": md5(
                    "CONCAT_WS('|', " + ", ".join(f"src.{k}" for k in keys) + ")"
                ),
                "inputs": keys,
            }
        )
    descriptive = [c["name"] for c in source_columns if not c["primaryKey"]]
    entries += [
        {
            "source": None,
            "target": "hash_diff",
            "transformation": md5(
                "CONCAT_WS('|', " + ", ".join(f"src.{d}" for d in descriptive) + ")"
            ),
            "inputs": descriptive,
        },
        {"source": None, "target": "load_dts", "transformation": "CURRENT_TIMESTAMP"},
        {
            "source": None,
            "target": "record_source",
            "transformation": f"'{w.systems[system]['name']}.{table}'",
        },
    ]
    return entries
