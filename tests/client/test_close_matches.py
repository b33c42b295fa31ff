"""A not-found id gets the close ids the client already knows (issue 36): the tree
frames read through the client, a snapshot's manifest; nothing when it knows none."""

from __future__ import annotations

import gc

import pytest

import mddframes


def _not_found(call) -> str:
    with pytest.raises(mddframes.NotFoundError) as caught:
        call()
    return str(caught.value)


def test_a_typo_after_reading_the_tree_names_the_close_ids(client):
    assert "did you mean" not in _not_found(lambda: client.read_table("lab-sourc"))
    tree = client.read_tree("LAB")
    message = _not_found(lambda: client.read_table("lab-sourc"))
    assert message.startswith(
        "table 'lab-sourc' not found; did you mean 'lab-source'? (from the tree of LAB read earlier)"
    ), message
    element = _not_found(lambda: client.read_structure("lab-sourc"))
    assert element.startswith("element 'lab-sourc' not found; did you mean 'lab-source'?")
    assert "did you mean" not in _not_found(lambda: client.read_table("zzzz-zzzz"))
    assert len(tree)


def test_the_pyarrow_tree_is_a_source_too_and_a_dropped_frame_is_none(client):
    tree = client.read_tree("LAB", dtype_backend="pyarrow")
    assert "did you mean 'lab-source'" in _not_found(lambda: client.read_table("lab-sorce"))
    del tree
    gc.collect()  # the client held the frame weakly: nothing of it is left
    assert "did you mean" not in _not_found(lambda: client.read_table("lab-sorce"))


def test_an_id_of_a_path_with_two_ids_is_not_blamed(client):
    client.read_tree("LAB")
    # an element and an object type in one path: either may be the unknown one
    message = _not_found(lambda: client.api.external_export_structure("lab-source", "no-such-type"))
    assert not message.startswith("element"), message


def test_a_snapshot_names_its_close_ids(client, tmp_path):
    snap = client.snapshot("LAB", tmp_path / "snap", progress=False, structures=False)
    message = _not_found(lambda: snap.object_entry("table", "lab-sourc"))
    assert message.endswith("has no table 'lab-sourc'; did you mean 'lab-source'?"), message
