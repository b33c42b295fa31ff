"""apply, write_tables and kept frames past the read registry's bound (issue 43).

The client's registry keeps its :data:`~mddframes.context.RECENT_CONTEXTS` latest reads
and older ones only while something holds them. Whatever reads many objects and then
writes them must hold them itself: ``apply`` of a pulled folder with more edited files
than that bound refused every one of them ("was not read through this client").
These tests edit more objects than the bound (about 50 of the ``SCALE`` system), and,
marked ``slow``, 1,000.
"""

from __future__ import annotations

import gc
from pathlib import Path

import pandas as pd
import pytest

from mddframes import Client, apply_plan, plan_folder, pull_folder
from mddframes.context import RECENT_CONTEXTS
from mddframes.emulator import serve
from mddframes.tables_as_code.csvtext import format_csv, parse_csv

pytestmark = [pytest.mark.emulator, pytest.mark.pandas_once]

#: Elements of the small and the large ``SCALE`` system (a table per 20 elements).
SMALL, LARGE = 1_000, 20_000


@pytest.fixture(scope="module")
def small():
    with serve(elements=SMALL) as emu:
        yield emu


def _tables(client: Client) -> list[str]:
    ids: list[str] = client.read_tree("SCALE")["table_id"].dropna().tolist()
    return ids


def _edit_names(paths: list[Path], suffix: str) -> None:
    """Append ``suffix`` to the ``name`` cell of each file's first row (as an editor would)."""
    for path in paths:
        records = [fields for _line, fields in parse_csv(path.read_text("utf-8"))]
        column = records[0].index("name")
        records[1][column] = (records[1][column] or "") + suffix
        path.write_text(format_csv(records), "utf-8")


def _names(client: Client, ids: list[str]) -> list[object]:
    return [client.api.get_table(table_id)["data"][0].get("name") for table_id in ids]


def _apply_edits(emu, tmp_path: Path, count: int) -> tuple[pd.DataFrame, list[str], list[object]]:
    """Pull SCALE's tables, edit ``count`` files, plan and apply; the result, the ids
    edited and their first row's name before."""
    with Client.from_emulator(emu) as client:
        ids = _tables(client)[:count]
        pull_folder(client.api, "SCALE", tmp_path, ids=ids, progress=False)
        before = _names(client, ids)
        _edit_names([tmp_path / "tables" / f"{table_id}.csv" for table_id in ids], " (edited)")
        plan = plan_folder(client.api, tmp_path, progress=False)
        assert plan.counts == {"changes": count}, plan
        applied = apply_plan(client.api, plan, backup_dir=tmp_path / "backups", progress=False)
        return applied, ids, before


def test_apply_writes_every_edited_file_past_the_registry_bound(small, tmp_path):
    small.reset()
    count = RECENT_CONTEXTS + 8  # the old registry refused all of them from 33 on
    applied, ids, before = _apply_edits(small, tmp_path, count)
    assert applied.attrs["ok"], applied.loc[applied["status"] != "written", "error"].tolist()
    assert (applied["status"] == "written").all() and applied["verified"].all()
    with Client.from_emulator(small) as client:
        assert _names(client, ids) == [f"{name or ''} (edited)" for name in before]


def test_kept_chunks_of_iter_tables_write_back_after_the_last_is_read(small, tmp_path):
    small.reset()
    with Client.from_emulator(small) as client:
        ids = _tables(client)
        assert len(ids) > RECENT_CONTEXTS + 8
        chunks = list(client.iter_tables(ids, chunksize=10, progress=False))
        gc.collect()
        for chunk in chunks:
            chunk.loc[chunk["row"] == 0, "name"] = "chunked"
        for chunk in chunks:  # each chunk after every chunk was read: they hold their reads
            result = client.write_tables(chunk, backup_dir=tmp_path, progress=False)
            assert (result["status"] == "written").all()
        assert set(_names(client, ids)) == {"chunked"}


def test_a_long_frame_writes_back_again_after_its_first_write(small, tmp_path):
    small.reset()
    with Client.from_emulator(small) as client:
        ids = _tables(client)
        long = client.read_tables(ids, progress=False)
        for round_ in ("first", "second"):
            long.loc[long["row"] == 0, "name"] = round_
            result = client.write_tables(long, backup_dir=tmp_path, progress=False)
            assert (result["status"] == "written").all(), round_
            gc.collect()
        assert set(_names(client, ids)) == {"second"}


def test_a_long_frame_made_with_concat_holds_its_reads_once_written(small, tmp_path):
    """pd.concat of frames of different reads drops their attrs: the first write finds
    the reads through the frames still held, and leaves them with the long frame."""
    small.reset()
    with Client.from_emulator(small) as client:
        ids = _tables(client)
        frames = {table_id: client.read_table(table_id) for table_id in ids}
        for frame in frames.values():
            frame.loc[0, "name"] = "concat"
        long = pd.concat(frames.values(), keys=list(frames), names=["table_id", "row"])
        long = long.reset_index()
        assert "mddframes" not in long.attrs  # what pandas does
        assert (client.write_tables(long, backup_dir=tmp_path, progress=False)["status"]
                == "written").all()  # fmt: skip
        del frames
        for _ in range(RECENT_CONTEXTS + 1):  # other reads push the written ones out
            client.read_table(ids[-1])
        gc.collect()
        long.loc[long["row"] == 0, "name"] = "concat again"
        result = client.write_tables(long, backup_dir=tmp_path, progress=False)
        assert (result["status"] == "written").all()
        assert set(_names(client, ids)) == {"concat again"}


def test_a_copy_of_a_long_frame_written_meanwhile_stops_with_a_conflict(small, tmp_path):
    """A long frame's reads are its own, as a single frame's are: a copy taken before
    another write of the same tables meets a conflict, never undoes that write."""
    from mddframes import ConcurrentModificationError

    small.reset()
    with Client.from_emulator(small) as client:
        ids = _tables(client)[:3]
        long = client.read_tables(ids, progress=False)
        copy = long.copy()
        long.loc[long["row"] == 0, "name"] = "mine"
        client.write_tables(long, backup_dir=tmp_path, progress=False)
        copy.loc[copy["row"] == 0, "code"] = "theirs"
        with pytest.raises(ConcurrentModificationError):
            client.write_tables(copy, backup_dir=tmp_path, progress=False)
        assert set(_names(client, ids)) == {"mine"}


# -- 1,000 objects ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def large():
    with serve(elements=LARGE) as emu:
        yield emu


@pytest.mark.slow
def test_apply_of_a_thousand_edited_files(large, tmp_path):
    large.reset()
    applied, ids, before = _apply_edits(large, tmp_path, 1_000)
    assert applied.attrs["ok"], applied["error"].dropna().head(3).tolist()
    assert (applied["status"] == "written").all() and applied["verified"].all()
    with Client.from_emulator(large) as client:
        assert _names(client, ids) == [f"{name or ''} (edited)" for name in before]


@pytest.mark.slow
def test_a_thousand_tables_read_one_by_one_kept_and_written(large, tmp_path):
    large.reset()
    with Client.from_emulator(large) as client:
        ids = _tables(client)
        assert len(ids) == 1_000
        frames = {table_id: client.read_table(table_id) for table_id in ids}
        gc.collect()
        for number, frame in enumerate(frames.values()):
            frame.loc[0, "name"] = f"kept {number}"
        # half one by one, half in one batch (from a concat, which drops attrs)
        alone, batch = ids[:500], ids[500:]
        for table_id in alone:
            assert client.write_table(table_id, frames[table_id], backup_dir=tmp_path).status == (
                "written"
            )
        long = pd.concat([frames[t] for t in batch], keys=batch, names=["table_id", "row"])
        result = client.write_tables(long.reset_index(), backup_dir=tmp_path, progress=False)
        assert (result["status"] == "written").all()
        assert _names(client, ids) == [f"kept {number}" for number in range(1_000)]
