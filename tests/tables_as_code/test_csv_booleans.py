"""The spellings spreadsheet programs save for true and false (TRUE, FALSE, True, False)
read back as the booleans they spell where a column is boolean, exactly, and nowhere
else (issue 44)."""

from __future__ import annotations

import csv

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mddframes import DataShapeError, plan_folder, pull_folder
from mddframes.tables_as_code.csvbooleans import SPELLINGS, settle_spellings, spelled

# what Calc and Excel (TRUE/FALSE) and pandas or Python's str (True/False) write: this
# test's own list, compared with the module's
PROGRAMS_WRITE = {True: ["TRUE", "True"], False: ["FALSE", "False"]}

cells = st.lists(st.one_of(st.none(), st.booleans()), min_size=1, max_size=30)


def _as_saved(values, choices):
    """Each value as a cell a program may have saved: JSON, or one of its spellings."""
    saved = []
    for value, choice in zip(values, choices, strict=False):
        if value is None or choice == 0:
            saved.append(value)  # null, or the JSON true/false left as it was
        else:
            spelling = PROGRAMS_WRITE[value][choice % 2]
            saved.append(spelled(spelling, "f.csv, line 2"))
    return saved


def test_the_accepted_spellings_are_the_programs_and_no_more():
    assert SPELLINGS == {s: v for v, spellings in PROGRAMS_WRITE.items() for s in spellings}


@given(cells, st.lists(st.integers(0, 2), min_size=30, max_size=30), st.booleans())
def test_a_boolean_column_reads_back_exactly(values, choices, declared):
    saved = _as_saved(values, choices)
    assert settle_spellings(saved, declared_boolean=declared) is None
    assert [(type(v), v) for v in saved] == [(type(v), v) for v in values]


@given(
    cells,
    st.lists(st.integers(1, 2), min_size=30, max_size=30),
    st.one_of(st.integers(), st.text(), st.floats(allow_nan=False), st.just([1])),
)
def test_a_column_holding_more_than_booleans_is_ambiguous_unless_declared(values, choices, other):
    saved = [*_as_saved(values, choices), other]
    if not any(v is not None for v in values):
        saved.insert(0, spelled("TRUE", "f.csv, line 1"))
    kept = list(saved)
    first = settle_spellings(saved, declared_boolean=False)
    assert first is not None and first.raw in SPELLINGS and saved == kept  # nothing changed
    assert settle_spellings(saved, declared_boolean=True) is None  # BOOLEAN says what it is
    assert saved[-1] == other


@given(st.text(max_size=8))
def test_nothing_but_the_four_spellings_is_taken(text):
    assert (spelled(text, "here") is not None) == (
        text in PROGRAMS_WRITE[True] + PROGRAMS_WRITE[False]
    )


@pytest.mark.parametrize("text", ["tRUE", "TRUE ", " True", "yes", "1", "T", "FALSE\t", "true"])
def test_near_spellings_are_not_taken(text):
    assert spelled(text, "here") is None


def _rewrite(path, column, spell):
    with path.open(newline="", encoding="utf-8") as handle:
        rows = list(csv.reader(handle))
    i = rows[0].index(column)
    for n, row in enumerate(rows[1:]):
        row[i] = spell(row[i], n)
    with path.open("w", newline="", encoding="utf-8") as handle:
        csv.writer(handle).writerows(rows)


@pytest.fixture
def pulled(client, tmp_path):
    folder = tmp_path / "code"
    pull_folder(client.api, "DWH", folder, ids=["tbl-0001"], progress=False)
    return folder, folder / "tables" / "tbl-0001.csv"


def test_a_pulled_file_with_every_spelling_plans_nothing(client, pulled):
    folder, path = pulled
    spellings = {"true": ["TRUE", "True"], "false": ["FALSE", "False"]}
    _rewrite(
        path, "is_active", lambda cell, n: spellings[cell][n % 2] if cell in spellings else cell
    )
    assert {"TRUE", "True", "FALSE", "False"} & set(path.read_text("utf-8").split(","))
    (entry,) = plan_folder(client.api, folder, progress=False).objects
    assert (entry.status, entry.changedCells) == ("unchanged", 0), entry


def test_a_spelling_in_a_column_of_numbers_is_refused_naming_the_cell(client, pulled):
    folder, path = pulled
    _rewrite(path, "loyalty_points", lambda cell, n: "TRUE" if n == 2 else cell)
    (entry,) = plan_folder(client.api, folder, progress=False).objects
    assert entry.status == "failed"  # the file cannot be read: nothing of it is planned
    assert "line 4" in entry.detail and "'loyalty_points'" in entry.detail
    assert "cannot tell" in entry.detail


def test_the_refusal_is_a_data_shape_error(client, pulled):
    from mddframes.tables_as_code.files import read_object

    folder, path = pulled
    _rewrite(path, "loyalty_points", lambda cell, n: "False" if n == 0 else cell)
    with pytest.raises(DataShapeError, match=r"line 2, column 'loyalty_points': 'False'"):
        read_object(path)
