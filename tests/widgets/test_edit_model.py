"""EditModel, the headless model behind the editing grid, against the emulator.

The property: random edits typed into the model as the grid's text equal the same
edits made on the frame with pandas, and the write puts exactly them on the service.
"""

from __future__ import annotations

import datetime as dt

import pandas as pd
import pytest
from codec_strategies import FLOATS, INT64, JSON, NAMES, TEXT
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mddframes import Client
from mddframes.codec.values import strict_equal
from mddframes.errors import ConcurrentModificationError, InvalidArgumentError
from mddframes.widgets.edit_model import EditModel, cell_text, same_cell

TABLE = "tbl-0001"  # the sample's table of every dtype (text, dates, zones, JSON, Int64...)

#: The columns of TABLE an edit may change and the write then takes: not the key
#: (the check refuses a duplicate key), values drawn to fit the column.
VALUES = {
    "first_name": st.text(
        alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=1, max_size=8
    ),
    "email": TEXT.filter(bool),
    "notes": TEXT.filter(bool),
    "birth_date": st.datetimes(
        min_value=dt.datetime(1900, 1, 1), max_value=dt.datetime(2200, 1, 1)
    ).map(lambda d: pd.Timestamp(d.replace(hour=0, minute=0, second=0, microsecond=0))),
    "created_at": st.datetimes(
        min_value=dt.datetime(1900, 1, 1), max_value=dt.datetime(2200, 1, 1)
    ).map(lambda d: pd.Timestamp(d, tz="UTC")),
    "is_active": st.booleans(),
    "lifetime_value": FLOATS,
    "loyalty_points": INT64,
    # the check refuses a JSON cell that changes type (an object turned list): drawn to fit
    "address": st.dictionaries(NAMES, JSON, max_size=3),
    "tags": st.lists(JSON, max_size=3),
}
EDITS = st.lists(
    st.tuples(st.integers(0, 7), st.sampled_from(sorted(VALUES))).flatmap(
        lambda rc: st.tuples(st.just(rc[0]), st.just(rc[1]), VALUES[rc[1]])
    ),
    min_size=1,
    max_size=8,
)


def assert_same_frame(actual: pd.DataFrame, expected: pd.DataFrame) -> None:
    """Equal values and dtypes; JSON (object) cells equal with their types too."""
    pd.testing.assert_frame_equal(actual, expected, check_exact=True)
    for name in expected.columns[[dtype == "object" for dtype in expected.dtypes]]:
        for row in expected.index:
            a, e = actual.at[row, name], expected.at[row, name]
            assert strict_equal(a, e) or (pd.isna(a) and pd.isna(e)), (row, name, a, e)


@settings(
    max_examples=15,  # each example writes: about 0.2 s
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(edits=EDITS)
def test_edits_typed_through_the_model_equal_the_frame_edits_and_are_written_exactly(
    emulator, edits
):
    emulator.reset()
    with Client.from_emulator(emulator) as client:
        model = EditModel(client, TABLE)
        expected = model.original.copy()
        for row, column, value in edits:
            model.set_cell(row, column, cell_text(value, model.encodings[column]))
            expected.iat[row, expected.columns.get_loc(column)] = value
        assert_same_frame(model.frame, expected)
        changed = {
            (row, str(column))
            for row in expected.index
            for column in expected.columns
            if not same_cell(
                model.original.at[row, column],
                expected.at[row, column],
                json=expected[column].dtype == object,
            )
        }
        assert set(model.changed) == changed
        assert len(model.changes()) == len(changed)
        if not changed:
            return
        result = model.write()
        assert result.status == "written" and result.verified
        assert_same_frame(client.read_table(TABLE), expected)
        assert not model.dirty  # the new original is what was written


def test_a_typed_cell_is_highlighted_and_undo_revert_bring_it_back(client):
    model = EditModel(client, TABLE)
    before = model.text(1, "first_name")
    assert model.set_cell(1, "first_name", "Erika") is True
    assert model.set_cell(1, "loyalty_points", "77") is True
    assert model.changed == [(1, "first_name"), (1, "loyalty_points")]
    assert model.changes()[["row", "column", "after"]].values.tolist() == [
        [1, "first_name", "Erika"],
        [1, "loyalty_points", 77],
    ]
    assert model.undo() and model.changed == [(1, "first_name")]
    assert model.revert_cell(1, "first_name") and not model.dirty
    assert model.text(1, "first_name") == before
    assert model.undo() and model.value(1, "first_name") == "Erika"  # the revert undone
    model.set_cell(2, "notes", "x")
    assert model.revert_all() == [(1, "first_name"), (2, "notes")] and not model.dirty
    model.undo()
    assert model.changed == [(1, "first_name"), (2, "notes")]


def test_typing_the_original_back_is_no_change(client):
    model = EditModel(client, TABLE)
    text = model.text(0, "address")
    model.set_cell(0, "address", '{"street": "x"}')
    assert model.dirty
    model.set_cell(0, "address", text)
    assert not model.dirty and model.changes().empty


@pytest.mark.parametrize(
    ("column", "text", "why"),
    [
        ("loyalty_points", "12.5", "not an integer"),
        ("loyalty_points", str(2**63), "outside the range"),
        ("lifetime_value", "a lot", "not a number"),
        ("is_active", "maybe", "not a boolean"),
        ("birth_date", "31/12/2020", "not an ISO 8601 date"),
        ("created_at", "2024-03-01T08:00:00", "without a time zone"),
        ("address", "{street: 1}", "not valid JSON"),
    ],
)
def test_a_value_the_column_cannot_hold_is_refused_naming_where(client, column, text, why):
    model = EditModel(client, TABLE)
    with pytest.raises(InvalidArgumentError, match=why) as refused:
        model.set_cell(3, column, text)
    assert f"row 3, column {column!r}" in str(refused.value) and TABLE in str(refused.value)
    assert not model.dirty and not model.can_undo


def test_missing_values_typed_as_empty_text(client):
    model = EditModel(client, TABLE)
    assert pd.isna(model.value(2, "email"))  # the sample's missing email
    assert model.set_cell(2, "email", "") is False  # the editor closed on it: still missing
    assert model.set_cell(0, "loyalty_points", "") is True
    assert pd.isna(model.value(0, "loyalty_points"))
    assert model.set_cell(0, "email", "") is True and model.value(0, "email") == ""


def test_preview_is_the_writes_dry_run_and_sends_nothing(client, emu):
    model = EditModel(client, TABLE)
    model.set_cell(1, "first_name", "Erika")
    puts = emu.counters()
    result = model.preview()
    assert result.status == "dry-run" and model.previewed
    assert result.diff.summary.startswith("1 cell(s) changed in 1 row(s)")
    assert client.read_table(TABLE).at[1, "first_name"] != "Erika"
    assert emu.counters().get("tableUpdate") == puts.get("tableUpdate")  # nothing sent
    model.set_cell(1, "first_name", "Erika M.")
    assert not model.previewed  # a later edit needs a new preview


def test_write_sends_exactly_the_edit_and_keeps_a_backup(client, tmp_path):
    model = EditModel(client, TABLE, backup_dir=tmp_path)
    before = client.read_table(TABLE)
    model.set_cell(4, "notes", "checked by hand")
    result = model.write()
    assert result.verified and result.backup is not None and result.backup.exists()
    after = client.read_table(TABLE)
    expected = before.copy()
    expected.at[4, "notes"] = "checked by hand"
    assert_same_frame(after, expected)
    assert not model.dirty and model.last_written is result
    with pytest.raises(InvalidArgumentError, match="nothing to write"):
        model.write()


def test_a_conflict_keeps_the_edits_and_reload_refuses_to_drop_them(client, emu):
    model = EditModel(client, TABLE)
    model.set_cell(1, "first_name", "Erika")
    emu.touch_table(TABLE)  # a colleague's write since the read
    with pytest.raises(ConcurrentModificationError):
        model.write()
    assert model.changed == [(1, "first_name")]  # nothing lost
    with pytest.raises(InvalidArgumentError, match="1 unsaved edited cell"):
        model.reload()
    assert model.dirty
    model.reload(discard=True)
    assert not model.dirty
    model.set_cell(1, "first_name", "Erika")
    assert model.write().verified


def test_a_mapping_is_edited_and_written_as_a_mapping(client):
    mapping_id = "map-0001"
    frame = client.read_mapping(mapping_id)
    model = EditModel(client, mapping_id, frame)
    assert model.kind == "mapping"
    column = next(c for c, e in model.encodings.items() if e == "text")
    row = frame.index[0]
    model.set_cell(row, column, "edited in the grid")
    assert model.preview().status == "dry-run"
    assert model.write().verified
    assert client.read_mapping(mapping_id).at[row, column] == "edited in the grid"


def test_two_writes_in_a_row_each_send_their_edit(client):
    model = EditModel(client, "tbl-0109")
    model.set_cell(56, "name", "Deutschland")
    assert model.write().verified
    model.set_cell(74, "name", "France (French Republic)")
    assert model.write().diff.summary.startswith("1 cell(s) changed in 1 row(s) (row 74")
    assert client.read_table("tbl-0109").loc[[56, 74], "name"].tolist() == [
        "Deutschland",
        "France (French Republic)",
    ]


def test_a_long_frame_of_three_tables_is_edited_and_written_as_a_batch(client):
    long = client.read_tables(["tbl-0109", "tbl-0009", "tbl-0010"], progress=False)
    model = EditModel(client, None, long)
    assert model.long and model.kind == "table" and model.what == "the long frame of 3 tables"
    country = long.index[(long["table_id"] == "tbl-0109") & (long["row"] == 56)][0]
    product = long.index[(long["table_id"] == "tbl-0009") & (long["row"] == 2)][0]
    model.set_cell(country, "name", "Deutschland")
    model.set_cell(product, "weight_kg", "0.75")
    with pytest.raises(InvalidArgumentError, match="cannot be edited"):
        model.set_cell(country, "table_id", "tbl-0010")
    with pytest.raises(InvalidArgumentError, match="'tbl-0109' has no column 'weight_kg'"):
        model.set_cell(country, "weight_kg", "1.5")
    preview = model.preview()
    assert preview.set_index("table_id")["status"].to_dict() == {
        "tbl-0109": "dry-run",
        "tbl-0009": "dry-run",
        "tbl-0010": "unchanged",
    }
    written = model.write()
    assert set(written.loc[written["status"] == "written", "table_id"]) == {"tbl-0109", "tbl-0009"}
    assert client.read_table("tbl-0109").at[56, "name"] == "Deutschland"
    assert client.read_table("tbl-0009").at[2, "weight_kg"] == 0.75
    model.set_cell(country, "name", "Germany")  # the batch's frame writes again
    assert model.write().set_index("table_id").at["tbl-0109", "status"] == "written"
