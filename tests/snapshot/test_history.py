"""A history store: versions added at the cost of what changed, read back as of any version,
every change and every value of a cell; an interrupted add and a second writer."""

from __future__ import annotations

import json
import os
import shutil
import signal
import stat
import subprocess
import sys
from pathlib import Path

import duckdb
import pandas as pd
import polars as pl
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from mddframes import Client, InvalidArgumentError, LockTimeoutError, NotFoundError, read_history
from mddframes.snapshot.history_log import log_numbers as version_numbers
from mddframes.snapshot.history_log import read_log
from mddframes.snapshot.history_store import DIGEST_COLUMN

REPOSITORY = Path(__file__).resolve().parents[2]
SYSTEM = "LAB"

pytestmark = pytest.mark.pandas_once


def _edit_first_text_cell(client: Client, table_id: str, value: str) -> str:
    frame = client.read_table(table_id)
    column = [c for c in frame.columns if frame[c].dtype == "string"][-1]  # not its key
    frame.loc[frame.index[0], column] = value
    client.write_table(table_id, frame)
    return str(column)


@pytest.fixture(scope="module")
def built(emulator, tmp_path_factory):
    """A store of three versions of LAB: one table edited twice between them (read only by
    the tests that take it)."""
    emulator.reset()
    with Client.from_emulator(emulator) as client:
        return _build(client, tmp_path_factory.mktemp("history") / "history")


def _build(client: Client, store: Path) -> tuple[Path, str, str, list[pd.DataFrame], pd.DataFrame]:
    tree = client.read_tree(SYSTEM)
    table_id = str(tree["table_id"].dropna().iloc[0])
    frames = [client.read_table(table_id)]
    client.snapshot(SYSTEM, history=store, progress=False, structures=False)
    column = _edit_first_text_cell(client, table_id, "first edit")
    frames.append(client.read_table(table_id))
    client.snapshot(SYSTEM, history=store, progress=False, structures=False)
    _edit_first_text_cell(client, table_id, "second edit")
    frames.append(client.read_table(table_id))
    client.snapshot(SYSTEM, history=store, progress=False, structures=False)
    return store, table_id, column, frames, client.read_tree(SYSTEM)


def _stored_object_rows(store: Path) -> int:
    return sum(pq.read_metadata(p).num_rows for p in (store / "objects").rglob("*.parquet"))


def test_each_version_reads_back_as_the_service_held_it(built):
    store, table_id, _column, frames, tree = built
    history = read_history(store)
    versions = history.list_versions()
    assert versions["version"].tolist() == [1, 2, 3]
    assert versions["taken_at"].is_monotonic_increasing
    assert (versions["tables"] == tree["table_id"].nunique()).all()
    for number, frame in enumerate(frames, start=1):
        pd.testing.assert_frame_equal(history.as_of(number).read_table(table_id), frame)
    # by time: the last version taken by then; the tree of every version is the system's
    second = versions["taken_at"].iloc[1]
    assert history.version_at(second + pd.Timedelta("1ms")) == 2
    pd.testing.assert_frame_equal(history.as_of(second).read_table(table_id), frames[1])
    pd.testing.assert_frame_equal(history.as_of(3).read_tree(), tree)
    with pytest.raises(NotFoundError, match="no version taken by"):
        history.as_of(versions["taken_at"].iloc[0] - pd.Timedelta("1s"))
    with pytest.raises(NotFoundError, match="has no version 9"):
        history.as_of(9)


def test_storage_grows_with_what_changed(built):
    store, table_id, _column, _frames, _tree = built
    history = read_history(store)
    first = history.as_of(1)
    all_rows = sum(o["rows"] for o in first.manifest["objects"])
    changed_rows = int(history.as_of(2).object_entry("table", table_id)["rows"])
    # version 1 stores every object; versions 2 and 3 only the edited table's rows
    assert _stored_object_rows(store) == all_rows + 2 * changed_rows
    unchanged = next(o for o in first.manifest["objects"] if o["id"] != table_id)
    again = history.as_of(3).object_entry(unchanged["kind"], unchanged["id"])
    assert again["file"] == unchanged["file"]
    # the log of versions 2 and 3 lists only the edited table (and each frame), and the
    # tree's stored rows of each are the elements whose row changed, not the whole tree
    for number in (2, 3):
        rows = read_log(store, number, since=number)
        assert [(r["kind"], r["id"]) for r in rows if r["id"] is not None] == [("table", table_id)]
        tree_entry = next(r for r in rows if r["kind"] == "tree")
        assert tree_entry["base"] == 1 and tree_entry["rows"] == len(first.read_tree())
        stored = pq.read_table(store / tree_entry["file"]).column("_key").to_pylist()
        changed = history.read_changes(number - 1, number, kind="element").objects["id"]
        assert sorted(stored) == sorted(changed) and 0 < len(stored) < tree_entry["rows"]


def test_removed_objects_and_a_changed_tree_schema(built, client, tmp_path, monkeypatch):
    """A table gone from the service leaves a tombstone, and a tree whose columns changed is
    listed whole; every version still reads back exactly, through checkpoints too
    (snapshots edited as the service cannot: it deletes no table)."""
    from mddframes.snapshot import history_store
    from mddframes.snapshot.arrow_columns import arrow_to_frame
    from mddframes.snapshot.history_store import ingest

    monkeypatch.setattr(history_store, "CHECKPOINT_EVERY", 2)  # a checkpoint every 2 versions

    store = tmp_path / "history"
    shutil.copytree(built[0], store)
    taken = client.snapshot(SYSTEM, tmp_path / "taken", progress=False, structures=False).path
    manifest = json.loads((taken / "manifest.json").read_text())
    gone = next(o for o in manifest["objects"] if o["kind"] == "table")
    tree = pq.read_table(taken / "tree.parquet")
    without = tmp_path / "without"
    shutil.copytree(taken, without)
    manifest["objects"] = [o for o in manifest["objects"] if o is not gone]
    (without / "manifest.json").write_text(json.dumps(manifest))
    kept = tree.filter(pc.not_equal(tree.column("table_id").fill_null(""), gone["id"]))
    pq.write_table(kept, without / "tree.parquet")
    narrower = tmp_path / "narrower"  # the tree lost a column: listed whole again
    shutil.copytree(taken, narrower)
    pq.write_table(tree.drop_columns([tree.column_names[-1]]), narrower / "tree.parquet")
    for folder in (without, narrower, taken):
        ingest(store, folder)
    history = read_history(store)
    assert version_numbers(store, "checkpoints", "c") == [4, 6]
    tables = sum(o["kind"] == "table" for o in manifest["objects"])  # without the one gone
    assert history.list_versions()["tables"].tolist()[2:] == [tables + 1, tables, tables + 1,
                                                             tables + 1]  # fmt: skip
    with pytest.raises(NotFoundError):
        history.as_of(4).read_table(gone["id"])
    pd.testing.assert_frame_equal(history.as_of(5).read_table(gone["id"]),  # reset: as at 1
                                  history.as_of(1).read_table(gone["id"]))  # fmt: skip
    for number, source in ((4, without), (5, narrower), (6, taken)):
        expected = arrow_to_frame(pq.read_table(source / "tree.parquet"))
        pd.testing.assert_frame_equal(history.as_of(number).read_tree(), expected)
    assert [r["base"] for r in read_log(store, kinds=("tree",))] == [1, 1, 1, 1, 5, 6]
    (tombstone,) = [r for r in read_log(store, 4, since=4) if r["removed"]]
    assert (tombstone["kind"], tombstone["id"]) == ("table", gone["id"])
    lines = history.read_changes(3, 5).objects
    assert {(v, k, c) for v, k, i, c in lines[["version", "kind", "id", "change"]].values
            if i == gone["id"]} == {(4, "table", "removed"), (5, "table", "added"),
                                    (4, "element", "removed"), (5, "element", "added")}  # fmt: skip
    element = str(tree.filter(pc.equal(tree.column("table_id"), gone["id"])).column("id")[0])
    lines = history.object_history(element).query("kind == 'element'")
    # its table written at 2 and 3 (its element's version bumped), gone at 4, back at 5,
    # and at 6 the tree's column dropped at 5 is back: every element's row changed
    assert lines[["version", "change"]].values.tolist() == [
        [1, "added"], [2, "changed"], [3, "changed"], [4, "removed"], [5, "added"], [6, "changed"],
    ]  # fmt: skip
    got = duckdb.execute(AS_OF_SQL.format(store=store), {"version": 4, "table": gone["id"]}).df()
    assert got.empty
    for number in (4, 5):  # the guide's tree query agrees with as_of across both kinds of version
        got_tree = duckdb.execute(TREE_SQL.format(store=store), {"version": number}).df()
        assert got_tree["id"].tolist() == history.as_of(number).read_tree()["id"].tolist()


def test_changes_cell_history_and_object_history(built):
    store, table_id, column, frames, _tree = built
    history = read_history(store)
    changes = history.read_changes(kind="table")
    assert changes.objects[["version", "id", "change"]].values.tolist() == [
        [2, table_id, "changed"], [3, table_id, "changed"],
    ]  # fmt: skip
    cells = changes.cells
    assert cells[["version", "column", "new"]].values.tolist() == [
        [2, column, "first edit"], [3, column, "second edit"],
    ]  # fmt: skip
    assert cells["old"].iloc[0] == frames[0][column].iloc[0]
    only_last = history.read_changes(since=2, kind="table")
    assert only_last.objects["version"].tolist() == [3]
    assert history.read_changes(since=3).empty
    # a version as list_versions() holds it (a numpy integer) is a version, not a time
    latest = history.list_versions()["version"].max()
    assert not isinstance(latest, int) and history.read_changes(since=latest).empty
    assert history.version_at(latest) == 3 and history.version_at(latest - 1) == 2
    with pytest.raises(InvalidArgumentError, match="neither a version number nor a time"):
        history.version_at(True)

    identity, keys = history.row_identity(table_id)
    row_key = 0 if identity == "position" else frames[0][keys[0]].iloc[0]
    cell = history.cell_history(table_id, row_key, column)
    assert cell["value"].tolist() == [frames[0][column].iloc[0], "first edit", "second edit"]
    assert cell["changed"].tolist() == [False, True, True]
    assert cell.attrs["row_identity"].startswith(identity)

    lines = history.object_history(table_id).query("kind == 'table'")
    assert lines[["version", "change", "changed_cells"]].values.tolist() == [
        [1, "added", 0], [2, "changed", 1], [3, "changed", 1],
    ]  # fmt: skip
    with pytest.raises(NotFoundError):
        history.object_history("no-such-object")


#: A table as of a version in DuckDB (docs/guide/history.md): its latest log row at or
#: before the version, unless a tombstone, joined to the stored rows.
AS_OF_SQL = """
    WITH entry AS (
      SELECT * FROM read_parquet('{store}/log/*.parquet')
      WHERE version <= $version AND kind = 'table' AND id = $table
      QUALIFY row_number() OVER (PARTITION BY kind, id ORDER BY version DESC) = 1
    )
    SELECT t.* FROM read_parquet('{store}/objects/tables/*.parquet', union_by_name = true) t
    JOIN entry e ON t.table_id = e.id AND t._object_digest = e.digest
    WHERE NOT e.removed ORDER BY t.row
"""
#: The tree as of a version in DuckDB: each element's latest row, in the version's order.
TREE_SQL = """
    WITH latest AS (
      SELECT * FROM read_parquet('{store}/frames/tree/*.parquet', union_by_name = true)
      WHERE _version <= $version
      QUALIFY row_number() OVER (PARTITION BY _key ORDER BY _version DESC) = 1
    ), row_order AS (
      SELECT o._key, o._position
      FROM read_parquet('{store}/frames/order/*.parquet', filename = true) o
      JOIN read_parquet('{store}/log/*.parquet') v ON o.filename = '{store}/' || v."order"
      WHERE v.version = $version AND v.kind = 'tree'
    )
    SELECT l.* EXCLUDE (_version, _key, _removed) FROM latest l JOIN row_order o USING (_key)
    WHERE NOT l._removed ORDER BY o._position
"""


def test_duckdb_and_polars_read_a_version_with_the_guides_sql(built):
    store, table_id, column, frames, tree = built
    for number, frame in enumerate(frames, start=1):
        got = duckdb.execute(AS_OF_SQL.format(store=store),
                             {"version": number, "table": table_id}).df()  # fmt: skip
        assert got[column].tolist() == frame[column].tolist()
    got_tree = duckdb.execute(TREE_SQL.format(store=store), {"version": 3}).df()
    assert got_tree["id"].tolist() == tree["id"].tolist()
    assert got_tree.columns.tolist() == tree.columns.tolist()
    rows = pl.scan_parquet(f"{store}/objects/tables/*.parquet", missing_columns="insert",
                           extra_columns="ignore")  # fmt: skip
    entries = (
        pl.scan_parquet(f"{store}/log/*.parquet")
        .filter((pl.col("version") <= 3) & (pl.col("kind") == "table"))
        .sort("version")
        .group_by(["kind", "id"])
        .last()
        .filter(~pl.col("removed"))
    )
    joined = (
        rows.join(entries, left_on=["table_id", DIGEST_COLUMN], right_on=["id", "digest"])
        .filter(pl.col("table_id") == table_id)
        .sort("row")
        .collect()
    )
    assert joined[column].to_list() == frames[2][column].tolist()


def test_the_store_is_owner_only(built):
    store = built[0]
    for path in [store, *store.rglob("*")]:
        mode = stat.S_IMODE(path.stat().st_mode)
        if path.name.startswith(".lock"):
            continue
        assert mode & 0o077 == 0, (path, oct(mode))


def test_a_store_goes_to_a_new_folder_or_a_store(client, tmp_path):
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "notes.txt").write_text("x")
    with pytest.raises(InvalidArgumentError, match="neither a history store"):
        client.snapshot(SYSTEM, history=tmp_path / "other", progress=False, structures=False)
    with pytest.raises(InvalidArgumentError, match="not both"):
        client.snapshot(SYSTEM, tmp_path / "a", history=tmp_path / "b", progress=False)
    with pytest.raises(InvalidArgumentError, match="no history store"):
        read_history(tmp_path / "other")


def _environment(emu, home: Path) -> dict[str, str]:
    return {
        **os.environ, "PYTHONPATH": str(REPOSITORY), "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / "config"), "XDG_CACHE_HOME": str(home / "cache"),
        "MDD_TENANT": emu.tenant, "MDD_BASE_URL": emu.base_url, "MDD_REALM": emu.realm,
        "MDD_API_PREFIX": emu.api_prefix, "MDD_CLIENT_ID": emu.client_id,
        "MDD_CLIENT_SECRET": emu.client_secret,
    }  # fmt: skip


#: A child that adds a version and stops just before its commit, until it is killed.
_STOPS_BEFORE_COMMIT = """
import sys, time
import mddframes
from mddframes.snapshot import history_store
def stuck(*args, **kwargs):
    print("ready", flush=True)
    time.sleep(120)
history_store.commit = stuck
mddframes.connect().snapshot("LAB", history=sys.argv[1], progress=False, structures=False)
"""

#: A child that holds a store's lock until it is killed.
_HOLDS_THE_LOCK = """
import sys, time
from pathlib import Path
from mddframes.writing.locks import folder_lock
with folder_lock(Path(sys.argv[1]), 10, purpose="a test holding the store"):
    print("ready", flush=True)
    time.sleep(120)
"""


def _child(script: str, store: Path, env: dict[str, str]) -> subprocess.Popen[str]:
    child = subprocess.Popen([sys.executable, "-c", script, str(store)], env=env,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)  # fmt: skip
    assert child.stdout is not None
    line = child.stdout.readline()
    assert line.strip() == "ready", child.stderr.read() if child.stderr else ""
    return child


@pytest.mark.slow
def test_a_version_killed_before_its_commit_leaves_the_store_as_it_was(emu, client, tmp_path):
    store = tmp_path / "history"
    client.snapshot(SYSTEM, history=store, progress=False, structures=False)
    table_id = str(client.read_tree(SYSTEM)["table_id"].dropna().iloc[0])
    _edit_first_text_cell(client, table_id, "edited")
    before = sorted(p.relative_to(store) for p in store.rglob("*.parquet"))
    child = _child(_STOPS_BEFORE_COMMIT, store, _environment(emu, tmp_path))
    child.send_signal(signal.SIGKILL)
    child.wait(timeout=30)
    history = read_history(store)
    assert version_numbers(store) == [1]  # no version 2, version 1 reads as before
    assert history.as_of(1).read_table(table_id)["label"].iloc[0] != "edited"
    # the next add removes what the killed one made and completes from its staged snapshot
    client.snapshot(SYSTEM, history=store, progress=False, structures=False)
    assert version_numbers(store) == [1, 2]
    pd.testing.assert_frame_equal(history.as_of(2).read_table(table_id),
                                  client.read_table(table_id))  # fmt: skip
    referenced = {Path(row[name]) for row in read_log(store) for name in ("file", "order")
                  if row[name] is not None}  # fmt: skip
    stored = {p.relative_to(store) for p in store.rglob("*.parquet")
              if not {"log", "checkpoints"} & set(p.parts)}  # fmt: skip
    assert stored == referenced  # nothing orphaned, nothing missing
    assert {p for p in before if "log" not in p.parts} <= stored
    assert not (store / ".staging" / "snapshot").exists()


@pytest.mark.slow
def test_a_second_writer_waits_for_the_first_and_never_corrupts(emu, tmp_path):
    store = tmp_path / "history"
    with Client.from_emulator(emu, lock_timeout=0.5) as client:
        client.snapshot(SYSTEM, history=store, progress=False, structures=False)
        holder = _child(_HOLDS_THE_LOCK, store, _environment(emu, tmp_path))
        try:
            with pytest.raises(LockTimeoutError, match="a test holding the store"):
                client.snapshot(SYSTEM, history=store, progress=False, structures=False)
            assert version_numbers(store) == [1]
        finally:
            holder.kill()
            holder.wait(timeout=30)
        # the holder's death frees the lock at once: the next writer adds its version
        client.snapshot(SYSTEM, history=store, progress=False, structures=False)
    assert version_numbers(store) == [1, 2]
    assert read_history(store).read_changes(kind="table").empty


def test_the_history_command_prints_the_changes_with_plans_exit_codes(built, capsys):
    from mddframes.cli import main

    store, table_id, _column, _frames, _tree = built
    assert main(["history", str(store), "--kind", "table", "--format", "csv", "--quiet"]) == 2
    lines = capsys.readouterr().out.strip().splitlines()
    assert lines[0].split(",") == [
        "version", "taken_at", "kind", "id", "change", "old_rows", "new_rows", "changed_cells",
    ]  # fmt: skip
    assert [line.split(",")[0] for line in lines[1:]] == ["2", "3"]
    assert all(f",table,{table_id},changed," in line and line.endswith(",1") for line in lines[1:])
    assert main(["history", str(store), "--since", "3", "--format", "json", "--quiet"]) == 0
    assert main(["history", str(store), "--id", "no-such", "--quiet"]) == 0
    assert main(["history", str(store.parent / "nothing"), "--quiet"]) == 1


def test_the_snapshot_command_adds_a_version(emu, monkeypatch, tmp_path):
    from mddframes.cli import main

    for name, value in _environment(emu, tmp_path).items():
        if name.startswith(("MDD_", "XDG_")):
            monkeypatch.setenv(name, value)
    store = tmp_path / "history"
    for expected in ([1], [1, 2]):
        code = main(["snapshot", SYSTEM, "--history", str(store), "--no-structures", "--quiet"])
        assert code == 0
        assert version_numbers(store) == expected
    assert main(["snapshot", SYSTEM, "--no-structures", "--quiet"]) == 1  # no folder, no store


#: A store written by format 1 (mddframes' first history store, main before format 2):
#: two versions of LAB with structures, ``lab-source``'s label edited between them.
FORMAT1 = REPOSITORY / "tests" / "data" / "history-format1"


def _format1_copy(target: Path) -> Path:
    shutil.copytree(FORMAT1, target)
    for path in [target, *target.rglob("*")]:  # owner-only, as format 1 made it
        path.chmod(0o700 if path.is_dir() else 0o600)
    return target


def _format1_frames(store: Path, number: int) -> dict[str, pd.DataFrame]:
    """What version ``number`` of a format-1 store holds, read as format 1 laid it out: a
    full listing of objects and frames per version file."""
    from mddframes.snapshot.reader import Snapshot

    rows = pq.read_table(store / "versions" / f"v{number:06d}.parquet").to_pylist()
    objects = [{**r, "columns": json.loads(r["columns"]) if r["columns"] else None}
               for r in rows if r["id"] is not None]  # fmt: skip
    files = {r["kind"]: {"file": r["file"]} for r in rows if r["id"] is None}
    snap = Snapshot(store, manifest={"objects": objects, "files": files})
    frames = {"tree": snap.read_tree(), "structures": snap.read_structures()}
    frames.update({o["id"]: snap.read_table(o["id"]) for o in objects if o["kind"] == "table"})
    return frames


def _check_upgraded(store: Path, expected: dict[int, dict[str, pd.DataFrame]]) -> None:
    assert json.loads((store / "history.json").read_text())["version"] == 2
    assert not (store / "versions").exists()
    history = read_history(store)
    for number, frames in expected.items():
        snap = history.as_of(number)
        pd.testing.assert_frame_equal(snap.read_tree(), frames["tree"])
        pd.testing.assert_frame_equal(snap.read_structures(), frames["structures"])
        for name, frame in frames.items():
            if name not in ("tree", "structures"):
                pd.testing.assert_frame_equal(snap.read_table(name), frame)
    cells = history.read_changes(1, 2, kind="table").cells
    assert cells[["version", "id", "new"]].values.tolist() == [[2, "lab-source", "format one edit"]]
    referenced = {Path(row[name]) for row in read_log(store) for name in ("file", "order")
                  if row[name] is not None}  # fmt: skip
    stored = {p.relative_to(store) for p in store.rglob("*.parquet")
              if not {"log", "checkpoints"} & set(p.parts)}  # fmt: skip
    assert stored == referenced  # the whole trees of format 1 removed, nothing missing


def test_a_format_1_store_is_upgraded_by_opening_it_or_the_next_add(client, tmp_path, monkeypatch):
    from mddframes.snapshot import history_store, history_upgrade

    monkeypatch.setattr(history_store, "CHECKPOINT_EVERY", 1)  # as_of read through checkpoints

    store = _format1_copy(tmp_path / "opened")
    expected = {n: _format1_frames(store, n) for n in (1, 2)}
    before = sorted(p.relative_to(store) for p in store.rglob("*") if p.is_file())

    def killed(root: Path) -> None:
        raise OSError("killed before the upgrade's commit")

    with monkeypatch.context() as patched:
        patched.setattr(history_upgrade, "write_marker", killed)
        with pytest.raises(OSError, match="killed"):
            read_history(store)
    # not committed: still format 1, its files as they were (a partial log beside them)
    assert json.loads((store / "history.json").read_text())["version"] == 1
    now = {p.relative_to(store) for p in store.rglob("*") if p.is_file()}
    assert set(before) <= now
    for number, frames in expected.items():
        pd.testing.assert_frame_equal(_format1_frames(store, number)["tree"], frames["tree"])
    read_history(store)  # the next attempt upgrades it
    _check_upgraded(store, expected)

    added = _format1_copy(tmp_path / "added")
    client.snapshot(SYSTEM, history=added, progress=False, structures=False)
    assert version_numbers(added) == [1, 2, 3]
    assert version_numbers(added, "checkpoints", "c") == [1, 2, 3]
    _check_upgraded(added, expected)
    assert read_history(added).as_of(3).read_table("lab-source")["label"].iloc[0] != (
        "format one edit"
    )
