"""EditGrid headless: the grid's cell events drive the model; what the panel shows."""

from __future__ import annotations

import pandas as pd
import pytest
from widget_helpers import output_text, stderr_text

from mddframes.errors import InvalidArgumentError
from mddframes.widgets import EditGrid, edit
from mddframes.widgets.edit_grid import HIGHLIGHT


def typed(grid: EditGrid, position: int, column: str, text: str) -> None:
    """What ipydatagrid hands the handler when a person commits a cell of the page."""
    grid._on_cell_change({"row": position, "column": column, "value": text})


def test_a_typed_cell_is_marked_listed_previewed_and_written(client):
    grid = edit(client, "tbl-0109")
    typed(grid, 1, "name", "United Arab Emirates (UAE)")
    assert grid.model.changed == [(1, "name")]
    renderer = grid.grid.renderers["name"]
    assert "[1]" in renderer.background_color.value and HIGHLIGHT in renderer.background_color.value
    assert "1 edited cell(s)" in grid.summary.value
    assert grid.write_button.disabled  # no Preview yet
    with pytest.raises(InvalidArgumentError, match="Preview first"):
        grid.run()
    grid.preview()
    assert "1 cell(s) changed" in output_text(grid.check_output)
    assert not grid.write_button.disabled
    result = grid.run()
    assert result.verified and "no edits" in grid.summary.value and grid.grid.renderers == {}
    assert client.read_table("tbl-0109").at[1, "name"] == "United Arab Emirates (UAE)"


def test_a_refused_value_is_put_back_and_said_in_words(client):
    grid = edit(client, "tbl-0009")
    typed(grid, 0, "weight_kg", "heavy")
    assert "not a number" in grid.message.value and not grid.model.dirty
    assert grid.grid.get_cell_value_by_index("weight_kg", 0) == "0.25"


def test_rows_are_known_by_label_on_every_page(client):
    frame = client.read_table("tbl-0109")
    grid = EditGrid(client, "tbl-0109", frame, page_size=100)
    assert grid.page_label.value == "rows 1-100 of 249" and grid.previous_button.disabled
    grid.show_page(2)
    assert grid.page_label.value == "rows 201-249 of 249" and grid.next_button.disabled
    typed(grid, 0, "name", "Edited on page 3")
    assert grid.model.changed == [(200, "name")]
    grid.revert_all()
    assert (
        not grid.model.dirty
        and grid.grid.get_cell_value_by_index("name", 0) == frame.at[200, "name"]
    )
    grid.undo()
    assert grid.grid.get_cell_value_by_index("name", 0) == "Edited on page 3"


def test_reload_asks_before_dropping_edits(client):
    grid = edit(client, "tbl-0109")
    typed(grid, 2, "name", "x")
    grid._reload_clicked()
    assert grid.model.dirty and "click Reload again" in grid.message.value
    grid._reload_clicked()
    assert not grid.model.dirty and grid.grid.get_cell_value_by_index("name", 2) == "Afghanistan"


def test_a_conflict_is_said_and_keeps_the_edit(client, emu):
    grid = edit(client, client.read_table("tbl-0109"))
    typed(grid, 2, "name", "x")
    emu.touch_table("tbl-0109")
    with pytest.raises(Exception, match="changed"):
        grid.preview()
    assert "read it again" in stderr_text(grid.output)
    assert grid.model.changed == [(2, "name")] and grid.write_button.disabled


def test_a_frame_without_read_context_is_refused(client):
    with pytest.raises(InvalidArgumentError, match="no read context"):
        edit(client, pd.DataFrame({"a": [1]}))


def test_a_long_frame_opens_and_previews_every_table(client):
    long = client.read_tables(["tbl-0109", "tbl-0009"], progress=False)
    grid = edit(client, long)
    assert "the long frame of 2 tables" in grid.summary.value
    position = int(long.index[(long["table_id"] == "tbl-0009") & (long["row"] == 0)][0])
    typed(grid, position, "weight_kg", "0.5")
    grid.preview()
    assert "tbl-0009: 1 cell(s) changed" in output_text(grid.check_output)
    grid.run()
    assert client.read_table("tbl-0009").at[0, "weight_kg"] == 0.5
    assert "'tbl-0009': written; verified=True" in output_text(grid.output)


def test_revert_cell_takes_back_the_selected_cell_only(client):
    grid = edit(client, "tbl-0109")
    typed(grid, 1, "name", "one")
    typed(grid, 2, "name", "two")
    grid.grid.select(2, 3)  # row 2, column "name" as the grid draws them
    grid.revert_selected()
    assert grid.model.changed == [(1, "name")]
    assert grid.grid.get_cell_value_by_index("name", 2) == "Afghanistan"


def test_a_sorted_grid_highlights_where_the_row_is_drawn(client):
    grid = edit(client, "tbl-0109", page_size=5)
    typed(grid, 1, "name", "one")  # the page's data row 1, label 1
    grid.grid._visible_rows = [4, 3, 2, 1, 0]  # what the browser reports after a sort
    expression = grid.grid.renderers["name"].background_color.value
    assert expression.startswith("indexof([3], cell.row)")  # drawn 4th, still label 1
    assert grid.model.changed == [(1, "name")]


def test_a_typed_value_is_shown_as_it_will_be_written(client):
    grid = edit(client, "tbl-0009")
    typed(grid, 0, "weight_kg", " 1.50 ")
    assert grid.model.value(0, "weight_kg") == 1.5
    assert grid.grid.get_cell_value_by_index("weight_kg", 0) == "1.5"
