"""Combined conditions, elements and files: creates, package additions, deploys and an
applied tables-as-code folder, under lost answers and every other condition at once.

On one emulator of its own (a 2,000-element ``SCALE`` system: 99 tables, 49 mappings),
with the flaky service, the rate limit, 5% of PUT and POST answers lost after the service
acted, tokens living 1 s and revoked every 0.5 s, and a recording of the whole session
(see ``test_chaos_tables.py``), the client

- creates 9 elements with ``create_children`` (nested ones among them), named and
  attributed with the client secret in the spellings of issue 43: the service echoes
  them in its 201 answers and in every later tree;
- adds 40 elements to an open package (10 of them already in it) with ``add_to_package``;
- deploys 60 elements with ``deploy_many``;
- pulls the system into a folder, edits one cell in each of the 99 table files, plans
  and applies the folder (``pull_folder``, ``plan_folder``, ``apply_plan``).

It asserts from the service's ground truth (direct reads, faults off): nothing created
twice and each creation exact, the package exactly what it held plus the new ids (no
repeat), every deploy on the service, every file edit exact and nothing else changed in
any table, mapping or element, 0 failed rows in every result, no credential on disk in
any spelling, and the client's work within ``BUDGET`` seconds.
"""

from __future__ import annotations

import json
import random
import traceback
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from chaos_world import (
    REVOKE_EVERY,
    SECRET,
    TOKEN_TTL,
    Bounded,
    IssuedTokens,
    Problems,
    Service,
    exact,
    first_difference,
    inject_all,
    private_temp_dir,
    spellings,
    step,
)
from secret_search import CredentialSearch

import mddframes
from mddframes import Client
from mddframes.emulator import serve

pytestmark = [pytest.mark.chaos, pytest.mark.emulator, pytest.mark.slow, pytest.mark.pandas_once]

ELEMENTS = 2_000  # 99 tables, 49 mappings: three times the 32 reads a client holds
SYSTEM = "SCALE"
PACKAGE = "scale-open"
DEPLOYMENT = "chaos-deployment-43"
PARENT = "scale-000001"  # the root folder "Sources"
BUDGET = 90.0  # seconds for the client's work
SEED = 4943


def _creations() -> pd.DataFrame:
    """Folders named and attributed with the secret's spellings; two nested ones."""
    rows: list[dict[str, Any]] = []
    for number, (how, spelled) in enumerate(spellings(SECRET).items()):
        rows.append({"key": f"k{number}", "parent": PARENT, "parent_key": None,
                     "type": "FOLDER", "name": f"chaos {number} {spelled}",
                     "note": f"spelled as {how}: {spelled}"})  # fmt: skip
    rows.append({"key": "n0", "parent": None, "parent_key": "k0", "type": "FOLDER",
                 "name": "chaos nested 0", "note": None})  # fmt: skip
    rows.append({"key": "n1", "parent": None, "parent_key": "n0", "type": "FOLDER",
                 "name": "chaos nested 1", "note": "two levels down"})  # fmt: skip
    return pd.DataFrame(rows).astype("string")


def _edit_files(folder: Path, tables: dict[str, Any]) -> dict[str, tuple[int, str]]:
    """One ``code`` cell per pulled table file, as an editor would change it: the row
    position and the new text."""
    rng = random.Random(SEED)
    edits = {}
    for number, table_id in enumerate(sorted(tables)):
        path = folder / "tables" / f"{table_id}.csv"
        lines = path.read_text("utf-8").split("\n")
        if not lines[0].startswith("row,id,code,"):
            raise AssertionError(f"{path.name}: columns {lines[0][:40]!r}, not row,id,code,...")
        position = rng.randrange(len(tables[table_id]["data"]))
        row, key, _old, rest = lines[1 + position].split(",", 3)
        if row != str(position):
            raise AssertionError(f"{path.name}: line {2 + position} is row {row}")
        new = f"chaos-file-{number:04d}"
        lines[1 + position] = f"{row},{key},{new},{rest}"
        path.write_text("\n".join(lines), "utf-8")
        edits[table_id] = (position, new)
    return edits


def _label(record: dict[str, Any]) -> str:
    values = (record.get(c) for c in ("key", "id"))
    return next((str(v) for v in values if v is not None and not pd.isna(v)), "?")


def _failed_rows(frame: pd.DataFrame | None, column: str, good: set[Any]) -> list[str]:
    if frame is None:
        return ["(no result)"]
    bad = frame[~frame[column].isin(good)]
    return [f"{_label(r)}: {r[column]} {str(r.get('error'))[:160]}" for r in bad.to_dict("records")]


def test_creates_package_additions_deploys_and_an_applied_folder_under_every_condition(
    tmp_path: Path,
) -> None:
    problems = Problems()
    run = tmp_path / "run"
    folder = run / "code"
    outcome: dict[str, Any] = {}
    creations = _creations()
    with serve(elements=ELEMENTS, client_secret=SECRET) as emu, IssuedTokens(emu) as issued:
        truth = Service(emu)
        tree_before = truth.tree(SYSTEM)
        table_ids = [e["tableId"] for e in tree_before if e.get("tableId")]
        mapping_ids = [e["mappingId"] for e in tree_before if e.get("mappingId")]
        tables_before = truth.objects("table", table_ids)
        mappings_before = truth.objects("mapping", mapping_ids)
        held = truth.packages(SYSTEM)[PACKAGE]["structureIds"]
        leaves = [e["id"] for e in tree_before if e["type"] != "FOLDER"]
        to_add = held[:10] + [i for i in leaves if i not in held][:30]
        to_deploy = [e["id"] for e in tree_before if e["type"] != "FOLDER" and not e["deployed"]]
        to_deploy = to_deploy[:60]
        deploy_before = {i: truth.get(f"/api/structure/{i}") for i in to_deploy}
        truth.close()
        client = Client.from_emulator(
            emu, backup_dir=str(run / "backups"), lock_dir=str(run / "locks")
        )

        def work() -> None:
            # each step runs even when an earlier one raised: the report lists them all
            raised = outcome["raised"] = {}
            with client.recording(run / "session.har"):
                outcome["created"] = step(
                    raised,
                    "create_children",
                    lambda: client.create_children(creations, progress=False),
                )
                outcome["added"] = step(
                    raised, "add_to_package", lambda: client.add_to_package(SYSTEM, PACKAGE, to_add)
                )
                outcome["deployed"] = step(
                    raised, "deploy_many",
                    lambda: client.deploy_many(to_deploy, DEPLOYMENT, progress=False),
                )  # fmt: skip
                outcome["pulled"] = step(
                    raised, "pull_folder",
                    lambda: mddframes.pull_folder(client.api, SYSTEM, folder, progress=False),
                )  # fmt: skip
                if outcome["pulled"] is None:
                    return
                outcome["edits"] = _edit_files(folder, tables_before)
                plan = step(
                    raised, "plan_folder",
                    lambda: mddframes.plan_folder(client.api, folder, progress=False),
                )  # fmt: skip
                if plan is not None:
                    outcome["applied"] = step(
                        raised, "apply_plan",
                        lambda: mddframes.apply_plan(client.api, plan, progress=False),
                    )  # fmt: skip

        emu.set_token_ttl(TOKEN_TTL)
        inject_all(emu, SEED)
        bounded = Bounded(BUDGET, grace=15.0)
        with private_temp_dir(run / "tmp"), emu.churn_tokens(REVOKE_EVERY) as revocations:
            bounded.run(work, client.close)
        emu.clear_faults()
        emu.set_token_ttl(300)
        faulted = sum(emu.fault_counters().values())
        sent = sum(emu.counters().values())
        client.close()
        truth = Service(emu)
        tree_after = {e["id"]: e for e in truth.tree(SYSTEM)}
        tables_after = truth.objects("table", table_ids)
        mappings_after = truth.objects("mapping", mapping_ids)
        package_after = truth.packages(SYSTEM)[PACKAGE]["structureIds"]
        deploy_after = {i: truth.get(f"/api/structure/{i}") for i in to_deploy}
        new_ids = [i for i in tree_after if i not in {e["id"] for e in tree_before}]
        new_elements = {i: truth.get(f"/api/structure/{i}") for i in new_ids}
        truth.close()
        tokens = list(issued.tokens)

    print(
        f"chaos elements: {bounded.elapsed:.1f} s of work (budget {BUDGET} s), {sent} requests, "
        f"{faulted} answered by a fault, {len(tokens)} tokens issued, {len(revocations)} "
        f"revocations"
    )
    assert faulted > 0 and len(revocations) >= 5 and len(tokens) >= 2, (
        "the conditions did not apply"
    )

    for name, error in (outcome.get("raised") or {}).items():
        problems.check(False, f"{name} raised {error}")
    problems.check(not bounded.overran, f"the work did not end within {BUDGET} s (client closed)")
    problems.check(not bounded.stuck, "the work did not stop within 15 s of the client's close")
    problems.check(
        bounded.failure is None,
        lambda: (
            ("after the close, " if bounded.overran else "")
            + "the work raised: "
            + "".join(traceback.format_exception_only(bounded.failure)).strip()[:600]
        ),
    )

    # creates: each exactly once, as asked, and 0 failed rows
    created = outcome.get("created")
    problems.check(
        created is not None and created["status"].eq("created").all(),
        lambda: "create_children: " + "; ".join(_failed_rows(created, "status", {"created"})[:3]),
    )
    by_key: dict[str, str] = {}
    not_once = []
    for row in creations.to_dict("records"):
        parent = by_key.get(row["parent_key"]) if not pd.isna(row["parent_key"]) else row["parent"]
        matches = [i for i, e in new_elements.items()
                   if (e["parentId"], e["type"], e["name"]) == (parent, row["type"], row["name"])]  # fmt: skip
        if len(matches) != 1:
            not_once.append(f"{row['key']} {len(matches)} times")
            continue
        by_key[row["key"]] = matches[0]
        attributes = new_elements[matches[0]]["attributes"]
        expected = {} if pd.isna(row["note"]) else {"note": row["note"]}
        if attributes != expected:
            not_once.append(f"{row['key']} with attributes {attributes}")
    problems.check(
        not not_once and len(new_elements) == len(creations),
        lambda: (
            f"{len(new_elements)} elements created for {len(creations)} rows; not exactly "
            f"once as asked: {', '.join(not_once[:5])}"
        ),
    )

    # the package: what it held plus the new ids, each once
    added = outcome.get("added")
    problems.check(
        added is not None and bool(added["ok"].all()),
        lambda: "add_to_package: " + "; ".join(_failed_rows(added, "ok", {True})[:3]),
    )
    expected_package = held + [i for i in to_add if i not in held]
    problems.check(
        package_after[: len(held)] == held
        and len(package_after) == len(set(package_after))
        and set(package_after) == set(expected_package),
        lambda: (
            f"the package holds {len(package_after)} ids ({len(set(package_after))} "
            f"distinct), expected {len(expected_package)}: the {len(held)} it held, then the new"
        ),
    )

    # deploys: every one on the service, nothing else of those elements changed
    deployed = outcome.get("deployed")
    problems.check(
        deployed is not None and bool(deployed["ok"].all()),
        lambda: (
            f"deploy_many: {int((~deployed['ok']).sum()) if deployed is not None else '?'} "
            f"of {len(to_deploy)} failed, e.g. "
            + "; ".join(_failed_rows(deployed, "ok", {True})[:2])
        ),
    )
    wrong = []
    edits = outcome.get("edits") or {}
    owners = {e["id"] for e in tree_before if e.get("tableId") in edits}
    for structure_id in to_deploy:
        expected = dict(deploy_before[structure_id], deployed=True, deploymentId=DEPLOYMENT)
        actual = deploy_after[structure_id]
        if structure_id in owners:  # its table was written too: its version rose
            expected = {k: v for k, v in expected.items() if k not in ("version", "modifiedAt")}
            actual = {k: v for k, v in actual.items() if k not in ("version", "modifiedAt")}
        difference = first_difference(expected, actual)
        if difference is not None:
            wrong.append(f"{structure_id}: {difference}")
    problems.check(
        not wrong,
        lambda: (
            f"{len(wrong)} of {len(to_deploy)} deploys not exactly on the service: "
            + "; ".join(wrong[:3])
        ),
    )

    # the folder: every file edit exact, nothing else changed, 0 failed rows
    pulled = outcome.get("pulled")
    problems.check(
        pulled is not None
        and pulled["action"].eq("written").all()
        and len(pulled) == len(table_ids) + len(mapping_ids),
        lambda: (
            "pull_folder: "
            + ("no result" if pulled is None else str(pulled["action"].value_counts().to_dict()))
        ),
    )
    applied = outcome.get("applied")
    if applied is not None:
        statuses = applied.groupby("kind")["status"].value_counts().to_dict()
        problems.check(
            statuses
            == {
                ("table", "written"): len(table_ids),
                ("mapping", "unchanged"): len(mapping_ids),
            }  # fmt: skip
            and bool(applied.loc[applied["kind"] == "table", "verified"].all()),
            lambda: (
                f"apply_plan: {statuses}; e.g. "
                + "; ".join(
                    f"{r['id']}: {r['status']} {str(r['error'])[:200]}"
                    for r in applied[~applied["status"].isin(["written", "unchanged"])]
                    .head(3)
                    .to_dict("records")
                )
            ),
        )
    else:
        problems.check(False, "apply_plan gave no result")
    missing, damaged = [], []
    for table_id in table_ids:
        expected_table = json.loads(exact(tables_before[table_id]))
        if table_id in edits:
            position, value = edits[table_id]
            expected_table["data"][position]["code"] = value
        actual = tables_after[table_id]
        if exact(actual) == exact(expected_table):
            continue
        if exact(actual) == exact(tables_before[table_id]):
            missing.append(table_id)
        else:
            damaged.append(f"{table_id}: {first_difference(expected_table, actual)}")
    problems.check(
        len(edits) == len(table_ids) and not missing or outcome.get("pulled") is None,
        lambda: (
            f"{len(missing)} of {len(edits)} file edits not on the service "
            f"({len(table_ids)} files): e.g. {missing[:3]}"
        ),
    )
    problems.check(
        not damaged,
        lambda: f"{len(damaged)} tables changed otherwise than edited: " + "; ".join(damaged[:3]),
    )
    changed_mappings = [
        m for m in mapping_ids if exact(mappings_after[m]) != exact(mappings_before[m])
    ]
    problems.check(not changed_mappings, f"mappings changed: {changed_mappings[:5]}")

    # every element before is there after, the same but for what was asked
    elements_wrong = []
    for entry in tree_before:
        now = tree_after.get(entry["id"])
        if now is None:
            elements_wrong.append(f"{entry['id']} is gone")
            continue
        expected_entry = dict(entry)
        if entry["id"] in to_deploy:
            expected_entry["deployed"] = True
        if entry["id"] in owners:  # a table write raises its owner's version
            expected_entry.pop("version")
            now = {k: v for k, v in now.items() if k != "version"}
        difference = first_difference(expected_entry, now)
        if difference is not None:
            elements_wrong.append(f"{entry['id']}: {difference}")
    problems.check(
        not elements_wrong,
        lambda: (
            f"{len(elements_wrong)} of {len(tree_before)} elements changed otherwise than "
            "asked: " + "; ".join(elements_wrong[:3])
        ),
    )

    # no credential on disk, in any spelling
    problems.check((run / "session.har").is_file(), "no recording was written")
    search = CredentialSearch({"the client secret": SECRET} | {
        f"access token #{n}": token for n, token in enumerate(tokens, 1)
    })  # fmt: skip
    files = sorted(p for p in run.rglob("*") if p.is_file())
    found = search.search_files(files, run)
    problems.check(
        not found,
        lambda: f"credentials on disk in {len(found)} file(s): " + "; ".join(map(str, found[:5])),
    )

    assert not problems.items, "the combined conditions broke:\n" + problems.report()
