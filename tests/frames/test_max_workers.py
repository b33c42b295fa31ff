"""One ``max_workers`` rule for every bulk call: None is the client's default, a positive
int is taken as is, anything else (0 included) is refused before anything is sent."""

from __future__ import annotations

import pytest

from mddframes.bulk import resolve_workers
from mddframes.emulator.state import sample_dataset
from mddframes.errors import InvalidArgumentError

RULE = r"max_workers must be a positive integer or None \(the default\), got 0"


@pytest.fixture(scope="module")
def sample():
    data = sample_dataset()
    tables = [t["id"] for t in data.tables][:2]
    elements = [e["id"] for e in data.elements if e["type"] == "SOURCE_TABLE"][:2]
    return tables, elements


def _read_tables(client, sample, tmp_path):
    client.read_tables(sample[0], max_workers=0, progress=False)


def _write_tables(client, sample, tmp_path):
    long = client.read_tables(sample[0], progress=False)
    first = (long["table_id"] == sample[0][0]).to_numpy() & (long.index == long.index[0])
    long.loc[first, "notes"] = "edited"  # a real change: with the default it would be sent
    client.write_tables(long, max_workers=0, backup_dir=tmp_path / "backups", progress=False)


def _export_scripts(client, sample, tmp_path):
    object_type = "sql-ddl"  # applies to SOURCE_TABLE elements
    client.export_scripts(sample[1], object_type, tmp_path / "scripts", max_workers=0,
                          progress=False)  # fmt: skip


def _export_batch(client, sample, tmp_path):
    object_type = "sql-ddl"  # applies to SOURCE_TABLE elements
    client.export_batch(sample[1], object_type, tmp_path / "batch.zip", max_workers=0,
                        progress=False)  # fmt: skip


def _deploy_many(client, sample, tmp_path):
    client.deploy_many(sample[1], "d-0", max_workers=0, progress=False)


def _read_structures(client, sample, tmp_path):
    client.read_structures(sample[1], max_workers=0, progress=False)


CALLS = [_read_tables, _write_tables, _export_scripts, _export_batch, _deploy_many,
         _read_structures]  # fmt: skip


@pytest.mark.parametrize("call", CALLS, ids=lambda f: f.__name__.lstrip("_"))
def test_max_workers_zero_is_refused_the_same_everywhere_and_nothing_is_sent(
    call, client, emu, sample, tmp_path
):
    emu.reset_counters()
    with pytest.raises(InvalidArgumentError, match=RULE):
        call(client, sample, tmp_path)
    sent = emu.counters()
    writes = {op: n for op, n in sent.items()
              if op in ("tableUpdate", "deployStructure", "externalExportStructure",
                        "structureMassExportAsync", "getStructure")}  # fmt: skip
    assert writes == {}, f"{call.__name__} sent {writes} before refusing max_workers=0"
    assert sent.get("getTable", 0) == (2 if call is _write_tables else 0)
    assert not (tmp_path / "scripts").exists() and not (tmp_path / "backups").exists()
    assert not (tmp_path / "batch.zip").exists()


@pytest.mark.parametrize("bad", [0, -1, 2.5, True, "4"])
def test_resolve_workers_refuses_what_is_not_a_positive_int_and_names_it(bad):
    with pytest.raises(
        InvalidArgumentError, match="max_workers must be a positive integer"
    ) as info:
        resolve_workers(bad, 8)
    assert repr(bad) in str(info.value)


def test_resolve_workers_takes_none_as_the_default_and_a_positive_int_as_is():
    assert resolve_workers(None, 5) == 5
    assert resolve_workers(1, 5) == 1
    assert resolve_workers(32, 5) == 32
