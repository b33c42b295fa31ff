"""What a user's type checker learns from mddframes: user code, checked by ``mypy --strict``.

This module is never run by pytest (its name does not start with ``test_``): CI type-checks
it (``mypy``, configured in pyproject.toml), so every ``assert_type`` below is a promise
about what comes back, the way the tests are promises about behaviour. The calls follow the
README and the notebooks.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Literal, assert_type

import pandas as pd

import mddframes
from mddframes import (
    Client,
    ExportArchive,
    ExportTask,
    Script,
    WriteResult,
)
from mddframes.emulator import serve


def explore(client: Client) -> None:
    tree = client.read_tree("DWH")
    assert_type(tree, pd.DataFrame)
    assert_type(client.read_structure("dwh-1"), pd.Series)
    assert_type(client.read_structures(tree["id"].tolist()), pd.DataFrame)
    assert_type(client.read_table("tbl-0109"), pd.DataFrame)
    assert_type(client.read_table_columns("tbl-0109"), pd.DataFrame)
    assert_type(client.read_tables(["tbl-0001", "tbl-0109"]), pd.DataFrame)
    assert_type(client.read_mapping("map-0001"), pd.DataFrame)
    assert_type(client.read_mappings(["map-0001"]), pd.DataFrame)
    assert_type(client.iter_tables(["tbl-0001"], chunksize=1), Iterator[pd.DataFrame])
    assert_type(client.read_object_types(), pd.DataFrame)
    assert_type(client.read_packages("DWH"), pd.DataFrame)
    assert_type(client.tenant, str | None)
    assert_type(client.max_workers, int)


def lineage(client: Client) -> None:
    edges = client.read_lineage("FLOW")
    assert_type(edges, pd.DataFrame)
    graph = mddframes.Lineage(edges)
    assert_type(graph.impact("flow-02.amount"), mddframes.LineageAnswer)
    assert_type(graph.upstream(("flow-08", "value_band"), depth=2).to_frame(), pd.DataFrame)
    assert_type(graph.path("flow-01", "flow-08"), mddframes.LineageAnswer)
    assert_type(graph.find_cycles(), pd.DataFrame)
    assert_type(mddframes.to_mermaid(graph.downstream("flow-04")), str)
    assert_type(mddframes.to_dot(graph), str)
    assert_type(client.search("FLOW", "customer_no", in_=("names", "mappings")), pd.DataFrame)


def write(client: Client, folder: Path) -> None:
    countries = client.read_table("tbl-0109")
    countries.loc[countries["alpha2"] == "DE", "name"] = "Deutschland"
    result = client.write_table("tbl-0109", countries, dry_run=True)
    assert_type(result, WriteResult)
    assert_type(result.verified, bool | None)
    assert_type(result.backup, Path | None)
    assert_type(client.write_mapping("map-0001", client.read_mapping("map-0001")), WriteResult)
    long = client.read_tables(["tbl-0001"])
    written = client.write_tables(long, backup_dir=folder)
    assert_type(written, pd.DataFrame)
    assert_type(client.write_mappings(client.read_mappings(["map-0001"])), pd.DataFrame)
    assert_type(client.pending_writes(), pd.DataFrame)
    assert_type(client.resume("20260101T000000Z-abcdef"), pd.DataFrame)
    assert_type(client.roll_back("20260101T000000Z-abcdef"), pd.DataFrame)
    assert_type(client.restore(folder / "backup.json"), WriteResult)
    assert_type(client.restore_backups([folder / "backup.json"]), pd.DataFrame)


def spreadsheets(client: Client, folder: Path) -> None:
    countries = client.read_table("tbl-0109")
    assert_type(mddframes.to_excel(countries, folder / "countries.xlsx"), None)
    reviewed = mddframes.read_excel(folder / "countries.xlsx")
    assert_type(reviewed, pd.DataFrame | dict[str, pd.DataFrame])
    one = mddframes.read_excel(folder / "countries.xlsx", object_id="tbl-0109")
    assert_type(one, pd.DataFrame)


def scripts_and_deployment(client: Client, folder: Path) -> None:
    hubs = ["dwh-hub-1", "dwh-hub-2"]
    assert_type(client.export_batch(hubs, "sql-ddl", folder / "hubs.zip"), ExportArchive)
    assert_type(client.export_script("dwh-hub-1", "sql-ddl"), Script)
    assert_type(client.export_scripts(hubs, "sql-ddl"), pd.DataFrame)
    assert_type(client.start_export(hubs, "sql-ddl"), ExportTask)
    assert_type(client.add_to_package("DWH", "release-2024.07", hubs), pd.DataFrame)
    assert_type(client.deploy("dwh-hub-1", "deploy-1"), pd.Series)
    assert_type(client.deploy_many(hubs, "deploy-1"), pd.DataFrame)
    assert_type(client.doctor("DWH"), pd.DataFrame)


def tables_as_code(client: Client, folder: Path) -> None:
    pulled = mddframes.pull_folder(client.api, "DWH", folder)
    plan = mddframes.plan_folder(client.api, folder)
    assert_type(plan, mddframes.Plan)
    applied = mddframes.apply_plan(client.api, plan)
    assert_type(applied, pd.DataFrame)
    del pulled


def raw_and_json(client: Client) -> None:
    raw = client.read_raw_data("dwh-1")
    assert_type(raw, mddframes.JsonValue)
    assert_type(client.api.get_table("tbl-0109"), mddframes.JsonObject)
    details = mddframes.MddError("x").request_details()
    assert_type(details, mddframes.RequestDetails)
    assert_type(details["status"], int | None)


def codec_and_helpers(client: Client) -> None:
    payload = client.api.get_table("tbl-0109")
    frame = mddframes.from_payload(payload)
    assert_type(frame, pd.DataFrame)
    new = mddframes.to_payload(frame, payload)
    assert_type(new, mddframes.JsonObject)
    assert_type(mddframes.check_payload(new, payload), mddframes.CheckReport)
    assert_type(mddframes.diff_payloads(payload, new), mddframes.Diff)
    assert_type(mddframes.tree_frame(client.api.get_tree("DWH")), pd.DataFrame)
    for table_id, rows in mddframes.iter_groups(client.read_tables(["tbl-0001"])):
        assert_type(table_id, str)
        assert_type(rows, pd.DataFrame)
    lengths = mddframes.run_bulk(len, ["a", "bb"], progress=False)
    assert_type(lengths, mddframes.BulkResult[str, int])
    assert_type(lengths.succeeded, list[tuple[str, int]])
    report = mddframes.run_doctor(client.api, "DWH")
    assert_type(report, pd.DataFrame)
    assert_type(mddframes.doctor_exit_code(report), int)


def offline() -> None:
    with serve() as emu, Client.from_emulator(emu) as client:
        assert_type(client, Client)
        explore(client)
    connected = mddframes.connect("acme", base_url="http://127.0.0.1:1", client_id="x",
                                  client_secret="y")  # fmt: skip
    assert_type(connected, Client)


def settings_stay_typed() -> None:
    # connect(**settings) keeps mypy's view precise (SettingArguments): a wrong type and a
    # misspelt setting are errors; were they not, these ignores would be unused, itself
    # an error under --strict
    mddframes.connect("acme", max_workers="8")  # type: ignore[arg-type]
    mddframes.connect("acme", max_worker=8)  # type: ignore[call-arg]
    mddframes.connect("acme", timeout=(5, 60), lock_dir=Path("/tmp"), max_rate="400/min").close()


def read_routes_are_literals() -> None:
    from mddframes.context import ReadContext

    context = ReadContext("table", "t", {"data": []}, route="readback")
    assert_type(
        context.route, Literal["whole", "arrow", "splitter", "ijson", "kept", "readback"] | None
    )
    ReadContext("table", "t", {"data": []}, route="read-back")  # type: ignore[arg-type]
