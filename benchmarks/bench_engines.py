"""Native JSON engines side by side on our payloads: speed, memory and exactness (issue 46).

Not a goal of the product but the evidence for choosing the engine under the hot path:
each candidate turns a table document's bytes into a pandas frame of its rows (default
backend, no HTTP), and each is measured against the floor in the same run
(``json.loads`` + ``DataFrame``, interleaved: :func:`~benchmarks.common.paired_times`).

The candidates:

- ``orjson`` / ``msgspec`` + ``DataFrame``: Python objects, as the floor, decoded natively.
- ``mddframes``: what ``read_table`` does after the HTTP layer
  (:func:`~mddframes.codec.stream.frame_from_chunks`: the splitter, orjson per batch,
  column batches, the kept document), the route being replaced.
- ``pyarrow NDJSON``: the rows region made newline-delimited (every ``},{`` becomes
  ``}\\n{``; inside a string that makes a raw newline, which no JSON string may hold,
  so a wrong cut fails the parse instead of giving a wrong value) and read by
  ``pyarrow.json.read_json``, then ``to_pandas``; the cutting is timed with it.
- ``polars read_json``: the whole document, the rows list exploded and unnested.
- ``duckdb read_json``: the whole document from a file in ``/dev/shm``, ``unnest``-ed.

Memory is the peak RSS growth of a child process doing one parse (Arrow's buffers are
outside tracemalloc's view), over the document's size. Exactness: a small document of
the cases the codec must keep (integers beyond 64 bits, floats that must round-trip,
``-0.0``, a key missing or ``null``, a nested JSON cell, duplicate keys, unicode) is
parsed by each engine and every cell compared with ``json.loads``'s; each case is
``exact``, ``refused`` (the engine raised: a route can fall back) or ``WRONG`` (a
different value and no error: a route would need a guard of its own). Printed to
stderr; the result table carries the times and the memory.
"""

from __future__ import annotations

import io
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Callable
from typing import Any

import orjson
import pandas as pd

from benchmarks.bench_arrow import text_table
from benchmarks.common import Result, median_at_most, paired_times
from mddframes.emulator.scale import big_table

REPEAT = 3
MB = 1e6


def _json_cell_table() -> dict[str, Any]:
    """The benchmark table's first 8 columns and a column of nested JSON objects."""
    payload = big_table("json-cells", 60_000, 8)
    for i, row in enumerate(payload["data"]):
        row["props"] = {"rank": i, "tags": ["a", "b"][: i % 3], "owner": None, "w": i / 7}
    payload["metadata"]["columns"].append({"name": "props", "dataType": "JSON"})
    return payload


PAYLOADS: dict[str, Callable[[], dict[str, Any]]] = {
    "benchmark 130k x 12": lambda: big_table("bench", 130_000, 12),
    "string-heavy 110k": lambda: text_table("text"),
    "wide 26k x 60": lambda: big_table("wide", 26_000, 60),
    "JSON cells 60k": _json_cell_table,
}


def _rows_as_ndjson(document: bytes) -> bytes:
    """The rows region of a document whose last key is ``"data"``, one row a line."""
    start = document.index(b'"data":[') + len(b'"data":[')
    end = document.rindex(b"]")
    return document[start:end].replace(b"},{", b"}\n{")


def floor(document: bytes) -> pd.DataFrame:
    return pd.DataFrame(json.loads(document)["data"])


def with_orjson(document: bytes) -> pd.DataFrame:
    return pd.DataFrame(orjson.loads(document)["data"])


def with_msgspec(document: bytes) -> pd.DataFrame:
    import msgspec

    return pd.DataFrame(msgspec.json.decode(document)["data"])


def with_mddframes(document: bytes) -> pd.DataFrame:
    from mddframes.codec.stream import frame_from_chunks

    view = memoryview(document)
    step = 256 * 1024
    frame, _kept = frame_from_chunks(bytes(view[i : i + step]) for i in range(0, len(view), step))
    if frame is None:
        raise RuntimeError("the streamed route did not vouch for the document")
    return frame


def with_pyarrow(document: bytes) -> pd.DataFrame:
    from pyarrow import json as pa_json

    table = pa_json.read_json(io.BytesIO(_rows_as_ndjson(document)))
    return table.to_pandas(types_mapper=_NULLABLE.get)


def _nullable() -> dict[Any, Any]:
    import pyarrow as pa

    return {pa.int64(): pd.Int64Dtype(), pa.float64(): pd.Float64Dtype(),
            pa.bool_(): pd.BooleanDtype()}  # fmt: skip


_NULLABLE = _nullable()


def with_polars(document: bytes) -> pd.DataFrame:
    import polars as pl

    rows = pl.read_json(io.BytesIO(document)).select(pl.col("data").explode()).unnest("data")
    return rows.to_pandas()


def with_duckdb(document: bytes) -> pd.DataFrame:
    import duckdb

    with tempfile.NamedTemporaryFile(dir="/dev/shm", suffix=".json") as file:
        file.write(document)
        file.flush()
        connection = duckdb.connect()
        try:
            query = ("SELECT unnest(data, recursive := true) FROM "
                     "read_json(?, maximum_object_size = 1000000000)")  # fmt: skip
            return connection.execute(query, [file.name]).df()
        finally:
            connection.close()


CANDIDATES: dict[str, Callable[[bytes], pd.DataFrame]] = {
    "orjson": with_orjson,
    "msgspec": with_msgspec,
    "mddframes": with_mddframes,
    "pyarrow NDJSON": with_pyarrow,
    "polars read_json": with_polars,
    "duckdb read_json": with_duckdb,
}

# each case's rows after a row without "v" (the rows around a value are not all like it)
_CASES: dict[str, bytes] = {
    "int beyond 64 bits": b'{"v": 123456789012345678901234567890}',
    "int at int64 max": b'{"v": 9223372036854775807}',
    "float round-trip": b'{"v": 0.30000000000000004}',
    "subnormal float": b'{"v": 5e-324}',
    "largest float": b'{"v": 1.7976931348623157e308}',
    "negative zero": b'{"v": -0.0}',
    "int and float mixed": b'{"v": 2},{"v": 2.5}',
    "key missing": b'{"v": 1},{"w": 1}',
    "null": b'{"v": null}',
    "nested JSON cell": b'{"v": {"b": 1, "a": [1, {"c": null}]}}',
    "list cell": b'{"v": [3, "x", null]}',
    "duplicate keys": b'{"v": 1, "v": 2}',
    "non-BMP unicode": '{"v": "\U0001f600 caf\u00e9"}'.encode(),
    "escaped unicode": b'{"v": "caf\\u00e9 \\ud83d\\ude00"}',
    "lone surrogate": b'{"v": "\\ud800"}',
    "text and int mixed": b'{"v": "7"},{"v": 7}',
}


def _same(a: Any, b: Any) -> bool:
    if a is None or (isinstance(a, float) and math.isnan(a)):
        return b is None or (isinstance(b, float) and math.isnan(b))
    if isinstance(a, float) and isinstance(b, float):
        return a == b and math.copysign(1, a) == math.copysign(1, b)
    if type(a) is not type(b) and not (isinstance(a, int) and isinstance(b, int)):
        return False
    return bool(a == b)


def _plain(value: Any) -> Any:
    """A cell as the Python value it holds (numpy scalars and arrays made plain)."""
    if hasattr(value, "tolist"):
        return value.tolist()
    if value is pd.NA or value is pd.NaT:
        return None
    return value


def exactness(engine: Callable[[bytes], pd.DataFrame]) -> dict[str, str]:
    """Each case: ``exact``, ``refused`` or ``WRONG`` against ``json.loads``."""
    verdicts = {}
    for case, rows in _CASES.items():
        document = b'{"id":"t","data":[{"w":0},' + rows + b"]}"
        expected = [row.get("v") for row in json.loads(document)["data"]]
        try:
            frame = engine(document)
            got = [_plain(v) for v in frame["v"].tolist()] if "v" in frame else None
        except Exception:
            verdicts[case] = "refused"
            continue
        exact = got is not None and len(got) == len(expected)
        exact = exact and all(_same(e, g) for e, g in zip(expected, got or [], strict=False))
        verdicts[case] = "exact" if exact else "WRONG"
    return verdicts


_MEMORY_CHILD = """
import sys
from benchmarks import bench_engines
import pandas, pyarrow, polars, duckdb, orjson  # imported before the baseline

def status(field):
    with open("/proc/self/status") as f:
        line = next(line for line in f if line.startswith(field + ":"))
    return int(line.split()[1]) * 1024

with open(sys.argv[2], "rb") as f:
    document = f.read()
before = status("VmRSS")
with open("/proc/self/clear_refs", "w") as f:
    f.write("5")  # resets VmHWM, the peak resident size, to the current one
frame = bench_engines.CANDIDATES.get(sys.argv[1], bench_engines.floor)(document)
print(status("VmHWM") - before)
"""


def peak_growth(candidate: str, path: str) -> float:
    """Peak RSS growth (bytes) of a child process that parses the document at ``path``."""
    done = subprocess.run([sys.executable, "-c", _MEMORY_CHILD, candidate, path],
                          stdout=subprocess.PIPE, text=True, check=True)  # fmt: skip
    return float(done.stdout.split()[-1])


def _available(name: str, engine: Callable[[bytes], pd.DataFrame]) -> bool:
    try:
        engine(b'{"id":"t","data":[{"v":1},{"v":2}]}')
    except ImportError:
        print(f"{name}: not installed, left out", file=sys.stderr)
        return False
    return True


def _payload_results(label: str, document: bytes,
                     candidates: dict[str, Callable[[bytes], pd.DataFrame]]) -> list[Result]:  # fmt: skip
    results: list[Result] = []
    size = len(document)
    with tempfile.NamedTemporaryFile(dir="/dev/shm", suffix=".json") as file:
        file.write(document)
        file.flush()
        floor_growth = peak_growth("floor", file.name)
        for name, engine in candidates.items():
            try:
                base, cand = paired_times(lambda: floor(document),
                                          lambda e=engine: e(document), REPEAT)  # fmt: skip
            except Exception as error:  # an engine that cannot read the payload at all
                print(f"{label}, {name}: {type(error).__name__}: {error}", file=sys.stderr)
                continue
            result = median_at_most(f"{label} ({size / MB:.0f} MB): {name}", base, cand, 1.0)
            result.goal, result.ok = "(info)", True
            results.append(result)
            growth = statistics.median(peak_growth(name, file.name) for _ in range(2))
            results.append(Result(f"  {name}: peak RSS growth / payload", floor_growth / MB,
                                  growth / MB, "MB", "(info)", growth / size, True))  # fmt: skip
    return results


def run() -> list[Result]:
    """Each candidate's parse time against the floor, and its peak memory, per payload."""
    candidates = {name: fn for name, fn in CANDIDATES.items() if _available(name, fn)}
    results: list[Result] = []
    for label, build in PAYLOADS.items():
        results.extend(_payload_results(label, orjson.dumps(build()), candidates))
    print(f"{'case':24}" + "".join(f"{name:>18}" for name in candidates), file=sys.stderr)
    verdicts = {name: exactness(engine) for name, engine in candidates.items()}
    for case in _CASES:
        cells = "".join(f"{verdicts[name][case]:>18}" for name in candidates)
        print(f"{case:24}{cells}", file=sys.stderr)
    return results


if __name__ == "__main__":
    os.environ.setdefault("PYTHONDONTWRITEBYTECODE", "1")
    for line in run():
        print(line)
