"""Codec benchmarks: frame -> payload + check speed, and read_table peak memory.

1. Frame -> payload (overlay) plus completeness check plus the strict JSON text, for
   100,000 rows x 20 columns with 1% of the rows edited, against the naive way of
   writing a frame: ``json.dumps(df.to_dict("records"))``. Goal: at most 2x.
2. Peak memory (tracemalloc) of ``read_table`` on a ~50 MB table payload served by the
   emulator, against the size of the payload's JSON text. Goal: at most 3x (issue 12).
   ``read_table`` streams such a body (parsed as it arrives, kept compressed for the
   write-back context); ``client.api.get_table`` alone (the HTTP body plus ``json.loads``),
   what fetch-then-parse would cost, is measured in the same run and printed as an
   info line, and so is the size of the context ``read_table`` keeps. (The emulator
   runs in the same process, so its own copy of the answer counts too.)
"""

from __future__ import annotations

import gc
import json

import pandas as pd
import requests

from benchmarks.common import Result, at_most, median_at_most, paired_times, peak_memory
from mddframes.codec import check_payload, from_payload, overlay
from mddframes.emulator.scale import big_table

CODEC_ROWS, CODEC_COLUMNS = 100_000, 20
MEMORY_ROWS, MEMORY_COLUMNS = 210_000, 12  # about 50 MB of JSON


def _edited_frame(payload: dict) -> pd.DataFrame:
    frame = from_payload(payload)
    rows = range(0, len(frame), 100)
    text = next(c for c in frame.columns if frame[c].dtype == "string")
    number = next(c for c in frame.columns[1:] if frame[c].dtype == "Int64")  # not the key
    frame.loc[list(rows), text] = "edited"
    frame.loc[list(rows), number] = 7
    return frame


def codec_speed() -> Result:
    """Overlay + check + JSON text vs ``to_dict("records")`` + ``json.dumps``."""
    payload = big_table("bench", n_rows=CODEC_ROWS, n_cols=CODEC_COLUMNS)
    frame = _edited_frame(payload)

    def candidate() -> str:
        built = overlay(frame, payload)
        report = check_payload(built.payload, payload, origin=built.origin, labels=built.labels)
        assert report.ok, report.summary
        return json.dumps(built.payload, allow_nan=False)

    def baseline() -> str:
        return json.dumps(frame.to_dict("records"), default=str)

    candidate()  # warm-up, and proof it runs
    base, cand = paired_times(baseline, candidate, repeat=5)
    return median_at_most(
        f"frame->payload+check+json {CODEC_ROWS:,}x{CODEC_COLUMNS} vs to_dict+dumps",
        base,
        cand,
        2.0,
    )


def read_table_memory() -> list[Result]:
    """Peak memory of ``read_table`` (and of ``get_table`` alone) vs the payload's JSON size."""
    from mddframes import Client
    from mddframes.emulator import serve
    from mddframes.frames.table import read_table

    with serve() as emu:
        client = Client.from_emulator(emu)
        try:
            table_id = "tbl-0001"
            client.api.put_table(table_id, big_table(table_id, MEMORY_ROWS, MEMORY_COLUMNS))
            gc.collect()
            answer = requests.get(
                f"{emu.api_url}/api/table/{table_id}",
                headers={"Authorization": f"Bearer {emu.token()}"},
                timeout=120,
            )
            size = float(len(answer.content))
            del answer
            floor = peak_memory(lambda: client.api.get_table(table_id))
            peak = peak_memory(lambda: read_table(client.api, table_id))
            context = client.contexts.get("table", table_id)
            kept = context.kept.compressed_size if context and context.kept else float("nan")
            client.contexts.forget("table", table_id)
        finally:
            client.close()
    mb = 1e6
    name = f"read_table peak memory, {size / mb:.0f} MB payload"
    floor_result = Result(
        "  fetch-then-parse: get_table alone (body + json.loads)",
        size / mb, floor / mb, "MB", "(info)", floor / size, True,
    )  # fmt: skip
    kept_result = Result(
        "  write-back context kept by read_table (compressed JSON)",
        size / mb, kept / mb, "MB", "(info)", kept / size, True,
    )  # fmt: skip
    return [at_most(name, size / mb, peak / mb, 3.0, unit="MB"), floor_result, kept_result]


def run() -> list[Result]:
    """Both benchmarks, each against its baseline measured in the same run."""
    return [codec_speed(), *read_table_memory()]
