"""ElementPicker against the emulator: tree order, filters, selection, a 100,000-element system."""

from __future__ import annotations

import pytest

from mddframes.errors import InvalidArgumentError
from mddframes.widgets import ElementPicker
from mddframes.widgets.picker import ALL_TYPES


@pytest.fixture
def picker(client):
    return ElementPicker(client, "DWH")


def test_list_shows_the_tree_indented_by_depth_with_paths(picker):
    tree = picker.tree.set_index("id")
    labels = dict((value, label) for label, value in picker.list.options)
    assert len(labels) == len(tree) == 155
    for structure_id, label in labels.items():
        depth = int(tree.loc[structure_id, "depth"])
        assert label.startswith("\u00a0" * 3 * depth + str(tree.loc[structure_id, "name"]))
        assert label.endswith(str(tree.loc[structure_id, "path"]))
    # depth first: every element comes right after its parent or a sibling's subtree
    order = [value for _, value in picker.list.options]
    position = {structure_id: pos for pos, structure_id in enumerate(order)}
    for structure_id, parent in tree["parent_id"].dropna().items():
        assert position[parent] < position[structure_id]
        between = order[position[parent] + 1 : position[structure_id]]
        assert all(str(tree.loc[b, "path"]).startswith(str(tree.loc[parent, "path"]) + "/")
                   for b in between)  # fmt: skip
    assert picker.count.value == "0 of 155 selected"


def test_type_filter_and_search_combine(picker):
    tree = picker.tree
    picker.type_filter.value = "HUB"
    assert sorted(picker.matching) == sorted(tree.loc[tree["type"] == "HUB", "id"])
    picker.search.value = "  CUSTOMER "  # case and surrounding blanks ignored
    expected = tree[(tree["type"] == "HUB") & tree["path"].str.lower().str.contains("customer")]
    assert sorted(picker.matching) == sorted(expected["id"]) and len(expected) >= 1
    picker.type_filter.value = ALL_TYPES
    picker.search.value = "Sources/CRM"  # a path, not only a name
    assert set(picker.matching) == set(
        tree.loc[tree["path"].str.lower().str.contains("sources/crm", regex=False), "id"]
    )
    picker.search.value = "no element is called this"
    assert picker.matching == [] and picker.list.options == ()
    assert picker.hint.value == "0 matching element(s)."


def test_selection_survives_filters_and_list_clicks_edit_it(picker):
    tree = picker.tree
    picker.type_filter.value = "HUB"
    picker.select_shown()
    hubs = set(tree.loc[tree["type"] == "HUB", "id"])
    assert set(picker.selected) == hubs and set(picker.list.value) == hubs
    picker.type_filter.value = "LINK"
    assert picker.list.value == ()  # no link selected, hubs still are
    assert set(picker.selected) == hubs
    links = [value for _, value in picker.list.options][:2]
    picker.list.value = tuple(links)  # what a click in the browser does
    assert set(picker.selected) == hubs | set(links)
    assert picker.count.value == f"{len(hubs) + 2} of 155 selected"
    picker.type_filter.value = "HUB"
    one_hub = picker.list.value[0]
    picker.list.value = tuple(v for v in picker.list.value if v != one_hub)
    assert set(picker.selected) == (hubs - {one_hub}) | set(links)
    picker.clear()
    assert picker.selected == [] and picker.list.value == () and picker.selection == ()


def test_select_checks_ids_and_replaces_or_adds(picker):
    picker.select(["dwh-0005", "dwh-0006"])
    picker.select(["dwh-0007"], add=True)
    assert picker.selected == ["dwh-0005", "dwh-0006", "dwh-0007"]
    assert picker.selection == ("dwh-0005", "dwh-0006", "dwh-0007")
    picker.select(["dwh-0007"])
    assert picker.selected == ["dwh-0007"]
    with pytest.raises(InvalidArgumentError, match="'nope'") as caught:
        picker.select(["dwh-0005", "nope"])
    assert "DWH" in str(caught.value)
    assert picker.selected == ["dwh-0007"]  # nothing changed
    assert picker.selected_frame["id"].tolist() == ["dwh-0007"]


def test_selection_is_observable(picker):
    seen = []
    picker.observe(lambda change: seen.append(change["new"]), "selection")
    picker.select(["dwh-0005"])
    picker.clear()
    assert seen == [("dwh-0005",), ()]


def test_max_shown_must_be_positive(client):
    with pytest.raises(InvalidArgumentError, match="max_shown"):
        ElementPicker(client, "DWH", max_shown=0)


@pytest.mark.slow
def test_a_100000_element_system_shows_a_bounded_list(emu, client):
    emu.load_scale(100_000)  # the system "SCALE"
    picker = ElementPicker(client, "SCALE", max_shown=500)
    assert len(picker.tree) >= 100_000
    assert len(picker.list.options) == 500
    assert "refine your filter" in picker.hint.value
    kinds = picker.type_filter.options[1:]
    picker.type_filter.value = kinds[0][1]
    matching = picker.matching
    assert len(matching) == int((picker.tree["type"] == kinds[0][1]).sum())
    picker.select_shown()  # takes every match, also beyond the 500 shown
    assert len(picker.selected) == len(matching)
    assert f"{len(matching):,} of {len(picker.tree):,} selected" == picker.count.value
    picker.search.value = str(picker.tree["name"].iloc[-1])
    assert 1 <= len(picker.list.options) <= 500
