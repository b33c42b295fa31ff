"""Answers lost after the service acted (the emulator's ``lose_answer_rate`` fault):
writes that know whether they landed, and creations that are never made twice."""

from __future__ import annotations

import warnings

import pandas as pd
import pytest

from mddframes import Client
from mddframes.emulator import serve
from mddframes.emulator.state import sample_dataset
from mddframes.errors import AnswerLostError, ConcurrentModificationError

# a mechanism, checked once, on the newest pandas (tests/pandas_ends.py)
pytestmark = pytest.mark.pandas_once


@pytest.fixture(scope="module")
def etag_emulator():
    with serve(dialect="etag") as emu:
        yield emu


@pytest.fixture
def eclient(etag_emulator):
    etag_emulator.reset()
    with Client.from_emulator(etag_emulator) as c:
        yield c
    etag_emulator.clear_faults()


def _tables(client: Client, n: int) -> list[str]:
    tree = client.read_tree("DWH")
    return [str(t) for t in tree["table_id"].dropna().unique()][:n]


def _edit(frame: pd.DataFrame, text: str) -> pd.DataFrame:
    column = next(c for c in frame.columns if frame[c].dtype == "string")
    frame.loc[frame.index[0], column] = text
    return frame


def test_a_lost_put_answer_with_etags_is_read_compared_and_reported_written(
    eclient, etag_emulator, tmp_path
):
    # the repeated PUT carries the same If-Match, now stale: the service answers 412
    (table_id,) = _tables(eclient, 1)
    frame = _edit(eclient.read_table(table_id), "landed once")
    etag_emulator.inject_faults(lose_answer_rate=1.0, operations=["tableUpdate"])
    etag_emulator.reset_counters()
    result = eclient.write_table(table_id, frame, backup_dir=tmp_path)
    assert result.status == "written" and result.verified is True
    assert etag_emulator.counters()["tableUpdate"] == 2  # the first acted, the repeat got 412
    assert etag_emulator.fault_counters()["tableUpdate"] == 1  # one answer lost
    etag_emulator.clear_faults()
    assert "landed once" in eclient.api.get_table(table_id).__repr__()


def test_a_412_after_a_lost_answer_stays_a_conflict_when_the_table_holds_something_else(
    eclient, etag_emulator, tmp_path, monkeypatch
):
    (table_id,) = _tables(eclient, 1)
    frame = _edit(eclient.read_table(table_id), "mine")
    real_put = eclient.api.put_table

    def put_then_someone_writes(*args, **kwargs):
        try:
            return real_put(*args, **kwargs)
        finally:
            etag_emulator.touch_table(table_id)  # a colleague's write lands meanwhile

    monkeypatch.setattr(eclient.api, "put_table", put_then_someone_writes)
    etag_emulator.inject_faults(lose_answer_rate=1.0, operations=["tableUpdate"])
    with pytest.raises(ConcurrentModificationError, match="a real conflict"):
        eclient.write_table(table_id, frame, backup_dir=tmp_path)


def test_a_lost_put_answer_without_etags_is_repeated_and_verified(client, emu, tmp_path):
    (table_id,) = _tables(client, 1)
    frame = _edit(client.read_table(table_id), "sent twice")
    emu.inject_faults(lose_answer_rate=1.0, operations=["tableUpdate"], seed=3)
    emu.reset_counters()
    result = client.write_table(table_id, frame, backup_dir=tmp_path)
    assert result.status == "written" and result.verified is True
    assert emu.counters()["tableUpdate"] >= 2


def test_a_batch_with_a_third_of_the_answers_lost_has_no_false_failure(
    eclient, etag_emulator, tmp_path
):
    ids = _tables(eclient, 20)
    frame = eclient.read_tables(ids, progress=False)
    frame = frame.assign(lost_note="batch")  # a new key in every row of every table
    etag_emulator.inject_faults(lose_answer_rate=0.35, seed=11, operations=["tableUpdate"])
    result = eclient.write_tables(frame, backup_dir=tmp_path, progress=False)
    assert etag_emulator.fault_counters()["tableUpdate"] >= 3  # answers were lost
    etag_emulator.clear_faults()
    assert result["status"].eq("written").all(), result[["table_id", "status", "error"]]
    held = eclient.read_tables(ids, progress=False)
    assert held["lost_note"].eq("batch").all()


def _children(root: str, names: list[str]) -> pd.DataFrame:
    return pd.DataFrame({"parent": root, "type": "FOLDER", "name": names})


def _named(client: Client, root: str, prefix: str) -> list[str]:
    tree = client.read_tree("DWH")
    under = tree[(tree["parent_id"] == root) & tree["name"].str.startswith(prefix)]
    return sorted(under["name"].tolist())


def test_create_children_asks_the_tree_after_a_lost_answer_and_never_duplicates(client, emu):
    root = sample_dataset().elements[0]["id"]
    names = [f"lost-{i}" for i in range(6)]
    frame = _children(root, names)
    emu.inject_faults(lose_answer_rate=1.0, operations=["createChildStructure"])
    emu.reset_counters()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        result = client.create_children(frame, progress=False)
    assert result["status"].eq("created").all() and result["ok"].all()
    assert emu.counters()["createChildStructure"] == 6  # each sent once, found in the tree
    assert _named(client, root, "lost-") == names
    stored = {client.api.get_structure(i)["name"] for i in result["id"]}
    assert stored == set(names)

    # a rerun of the same frame (after a failure, say) creates nothing again
    emu.clear_faults()
    emu.reset_counters()
    again = client.create_children(frame, progress=False)
    assert again["status"].eq("exists").all() and again["id"].tolist() == result["id"].tolist()
    assert emu.counters().get("createChildStructure", 0) == 0
    assert _named(client, root, "lost-") == names


def test_create_child_after_a_lost_answer_says_it_may_have_been_done(client, emu):
    root = sample_dataset().elements[0]["id"]
    emu.inject_faults(lose_answer_rate=1.0, operations=["createChildStructure"])
    with pytest.raises(AnswerLostError) as caught:
        client.create_child(root, "FOLDER", "maybe")
    emu.clear_faults()
    (made,) = [i for i in client.read_tree("DWH").query("name == 'maybe'")["id"]]
    message = str(caught.value)
    assert "may have done it" in message and made in message
    assert emu.counters()["createChildStructure"] == 1  # not sent again blindly


def test_add_to_package_asks_the_listing_after_a_lost_answer(client, emu):
    data = sample_dataset()
    package = next(p for p in data.packages if p["status"] == "OPEN")
    system = package["systemName"]
    ids = [e["id"] for e in data.elements if e["systemName"] == system]
    ids = [i for i in ids if i not in package["structureIds"]][:3]
    emu.inject_faults(lose_answer_rate=1.0, operations=["addToDeploymentPackage"])
    emu.reset_counters()
    result = client.add_to_package(system, package["name"], ids)
    assert result["ok"].all()
    assert emu.counters()["addToDeploymentPackage"] == 1  # it acted: not sent again


def test_a_post_whose_answer_is_lost_is_never_repeated_blindly(client, emu):
    # the deploy acted and its answer was lost: the element read back says so
    data = sample_dataset()
    element = data.elements[0]["id"]
    emu.inject_faults(lose_answer_rate=1.0, operations=["deployStructure"])
    deployed = client.deploy(element, "dep-lost-1")
    assert deployed["deploymentId"] == "dep-lost-1" and deployed["deployed"] is True
    assert emu.counters()["deployStructure"] == 1
