"""The editing grid on a 200,000-row table: opening it, a keystroke, and its Preview.

1. Open: ``EditGrid(client, id, frame)`` on a frame already read (the model's copy of
   the frame, the first page as text, the ipydatagrid widget) against ``read_table`` of
   the same table, which a user runs anyway (goal: at most 0.25x, i.e. the grid adds at
   most a quarter to the read; the absolute seconds are in the table).
2. A keystroke: one cell typed through the grid's handler (parse, the frame's cell set,
   the running diff and the highlight redrawn) against pandas setting one cell with
   ``iat`` and copying nothing (goal: at most 2,000x: both are a few microseconds to
   milliseconds; the goal keeps a keystroke from ever costing a scan of the table).
3. Preview: the grid's Preview against ``write_table(..., dry_run=True)`` of the same
   edited frame (goal: at most 1.2x: the Preview is the writer's dry run, nothing more).
"""

from __future__ import annotations

import warnings

from benchmarks.common import Result, median_at_most, paired_times, remote_emulator
from mddframes import Client
from mddframes.emulator.scale import big_table
from mddframes.widgets import EditGrid

ROWS, COLUMNS = 200_000, 12
REPEAT = 5


def run() -> list[Result]:
    """The three measures, each against its baseline measured in the same run."""
    warnings.simplefilter("ignore")  # ipydatagrid's dependencies warn on import
    with remote_emulator(100) as emu, Client.from_emulator(emu) as client:
        table_id = client.read_tree("SCALE")["table_id"].dropna().iloc[0]
        client.api.put_table(table_id, big_table(table_id, ROWS, COLUMNS))
        frame = client.read_table(table_id)
        if len(frame) != ROWS:
            raise RuntimeError(f"the table has {len(frame)} rows, not {ROWS}")
        column = str(next(c for c in frame.columns if str(frame[c].dtype) == "string"))
        open_base, open_cand = paired_times(
            lambda: client.read_table(table_id),
            lambda: EditGrid(client, table_id, frame),
            repeat=REPEAT,
        )
        grid = EditGrid(client, table_id, frame)
        plain = frame.copy()
        where = (0, plain.columns.get_loc(column))
        counter = iter(range(10**6))

        def pandas_cell() -> None:
            plain.iat[where] = f"typed {next(counter)}"

        def keystroke() -> None:
            grid._on_cell_change({"row": 0, "column": column, "value": f"typed {next(counter)}"})

        key_base, key_cand = paired_times(pandas_cell, keystroke, repeat=REPEAT * 4)
        edited = grid.model.frame
        preview_base, preview_cand = paired_times(
            lambda: client.write_table(table_id, edited, dry_run=True),
            grid.model.preview,
            repeat=REPEAT,
        )
    return [
        median_at_most(
            f"EditGrid open, {ROWS:,} rows x {COLUMNS} vs read_table", open_base, open_cand, 0.25
        ),
        median_at_most(
            f"EditGrid keystroke, {ROWS:,} rows vs pandas iat of one cell",
            key_base,
            key_cand,
            2000,
        ),
        median_at_most(
            f"EditGrid Preview, {ROWS:,} rows vs write_table dry run",
            preview_base,
            preview_cand,
            1.2,
        ),
    ]
