"""Every warning mddframes issues names the user's line, not a line inside mddframes
(issue 44): each warning class, found by walking ``MddWarning``'s subclasses, is
triggered through public calls, and each warning's file is this test file."""

from __future__ import annotations

import os
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

import mddframes
from mddframes import Client, MddWarning
from mddframes.emulator import serve

pytestmark = pytest.mark.emulator

HERE = os.path.abspath(__file__)


def _warning_classes() -> set[type[Warning]]:
    found: set[type[Warning]] = set()
    todo: list[type[Warning]] = [MddWarning]
    while todo:
        cls = todo.pop()
        if cls.__module__.startswith("mddframes") and cls not in found:
            found.add(cls)
            todo.extend(cls.__subclasses__())
    return found


@pytest.fixture(scope="module")
def misfit_client() -> Iterator[Client]:
    with serve(misfits=True) as emu, Client.from_emulator(emu) as client:
        yield client


@pytest.fixture(scope="module")
def legacy_client() -> Iterator[Client]:
    with serve(legacy=True) as emu, Client.from_emulator(emu) as client:
        yield client


# Each trigger makes one public call, on a line of this file, that must warn.


def _declared_type(misfit_client, legacy_client, tmp_path) -> list[Callable[[], object]]:
    return [
        lambda: misfit_client.read_table("tbl-0001"),
        lambda: misfit_client.read_table("tbl-0001", dtype_backend="pyarrow"),
        lambda: misfit_client.read_tables(["tbl-0001", "tbl-0109"], progress=False),
        lambda: list(
            misfit_client.iter_tables(["tbl-0109", "tbl-0001"], chunksize=1, progress=False)
        ),
    ]


def _partial_failure(misfit_client, legacy_client, tmp_path) -> list[Callable[[], object]]:
    return [
        lambda: misfit_client.read_tables(["tbl-0109", "no-such"], errors="skip", progress=False),
        lambda: misfit_client.read_structures(["dwh-0001", "nope"], errors="skip", progress=False),
    ]


def _legacy_export(misfit_client, legacy_client, tmp_path) -> list[Callable[[], object]]:
    return [
        lambda: legacy_client.export_batch(
            ["dwh-0005"], "sql-ddl", tmp_path / "e.zip", progress=False
        ),
    ]


def _tree_integrity(misfit_client, legacy_client, tmp_path) -> list[Callable[[], object]]:
    orphan = [{"id": "r", "name": "r", "parentId": None}, {"id": "o", "parentId": "gone"}]
    twice = [{"id": "r", "name": "r", "parentId": None}, {"id": "r", "parentId": None}]
    return [lambda: mddframes.tree_frame(orphan), lambda: mddframes.tree_frame(twice)]


def _mapping_shape(misfit_client, legacy_client, tmp_path) -> list[Callable[[], object]]:
    def broken_then_read() -> object:
        misfit_client.api.put_mapping(
            "flow-map-04", {"id": "flow-map-04", "name": "no ends", "columnMappings": []}
        )
        return misfit_client.read_lineage("FLOW", progress=False)

    return [broken_then_read]


def _mdd(misfit_client, legacy_client, tmp_path) -> list[Callable[[], object]]:
    wide = tmp_path / "wide"
    wide.mkdir(mode=0o755)
    wide.chmod(0o755)
    frame = misfit_client.read_table("tbl-0110")
    frame.loc[0, "name"] = "into a wide folder"
    return [lambda: misfit_client.write_table("tbl-0110", frame, backup_dir=wide)]


TRIGGERS = {
    "DeclaredTypeWarning": _declared_type,
    "PartialFailureWarning": _partial_failure,
    "LegacyExportWarning": _legacy_export,
    "TreeIntegrityWarning": _tree_integrity,
    "MappingShapeWarning": _mapping_shape,
    "MddWarning": _mdd,
}


def test_every_warning_class_has_a_trigger_here():
    assert {cls.__name__ for cls in _warning_classes()} == set(TRIGGERS)


@pytest.mark.parametrize("name", sorted(TRIGGERS))
def test_the_warning_names_the_callers_line(name, misfit_client, legacy_client, tmp_path):
    category = next(cls for cls in _warning_classes() if cls.__name__ == name)
    for call in TRIGGERS[name](misfit_client, legacy_client, tmp_path):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            call()
        mine = [w for w in caught if w.category is category]
        assert mine, f"{name}: the call warned nothing of its class ({caught})"
        for w in mine:
            assert (os.path.abspath(w.filename), name) == (HERE, name), str(w.message)[:200]


def test_the_default_sample_is_quiet(tmp_path):
    """Reads, doctor and a snapshot of the default sample warn nothing (issue 44)."""
    with serve() as emu, Client.from_emulator(emu) as client:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            client.read_table("tbl-0001")
            client.read_table("tbl-0001", dtype_backend="pyarrow")
            tree = client.read_tree("DWH")
            client.read_tables(tree["table_id"].dropna(), progress=False)
            client.doctor()
            client.snapshot("DWH", Path(tmp_path) / "snap", progress=False)
