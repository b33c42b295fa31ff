"""Tables and mappings as DataFrames: ``read_table``, ``read_table_columns``, ``read_mapping``.

The rows come from :func:`mddframes.codec.from_payload` (index = each row's original
position, declared columns first with dtypes from the column metadata). Each read of
rows records its write-back context (:mod:`mddframes.context`) so that
:func:`mddframes.writing.write_table` can later rebuild the full payload losslessly.
"""

from __future__ import annotations

from collections.abc import Callable
from itertools import chain
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
import pandas as pd

from mddframes.api_bodies import json_object
from mddframes.codec import from_payload
from mddframes.codec.arrow_rows import text_objects
from mddframes.codec.dtypes import infer_array
from mddframes.codec.fastjson import gc_paused, surely_finite
from mddframes.codec.fingerprint import FingerprintBuilder, digested_as_arrow, fingerprint
from mddframes.codec.frame import (
    INDEX_NAME,
    ColumnFinish,
    declared_columns,
    frame_of_arrays,
    payload_arrays,
)
from mddframes.codec.kept import KeptJson, keep_whole
from mddframes.codec.kinds import Kind
from mddframes.codec.read_route import STREAM_THRESHOLD as STREAM_THRESHOLD
from mddframes.codec.read_route import Route, choose_route
from mddframes.codec.stream import frame_from_chunks
from mddframes.context import ReadContext, record_read, registry_for
from mddframes.doc_sections import documented
from mddframes.frames.backends import (
    DtypeBackend,
    arrow_array,
    backend_documented,
    check_dtype_backend,
    default_array,
    default_slice,
    to_backend,
)
from mddframes.frames.record_frames import string_array
from mddframes.frames.shaping import snake_case
from mddframes.http.session import decode_json_content
from mddframes.ids import require_id

if TYPE_CHECKING:
    from mddframes.api import Api
    from mddframes.http.decoding import BodyStream

#: The first columns of :func:`read_table_columns`, always present, in this order.
COLUMN_FIELDS = ("name", "data_type", "nullable", "primary_key", "description")

_FIELD_DTYPES: dict[str, Literal["string", "boolean"]] = {
    "name": "string",
    "data_type": "string",
    "nullable": "boolean",
    "primary_key": "boolean",
    "description": "string",
}


@backend_documented
def read_table(
    api: Api, table_id: str, *, dtype_backend: DtypeBackend = "numpy_nullable"
) -> pd.DataFrame:
    """The rows of a table as a DataFrame, ready to edit and write back.

    Parameters
    ----------
    {api}
    table_id : str
        The table id.
    {dtype_backend}

    Returns
    -------
    pandas.DataFrame
        One row per table row; the index (``row``) is each row's original position
        (keep it: it is how the writer knows which row is which). Declared columns
        come first in declared order with the dtypes their ``dataType`` gives, full,
        empty or all-null alike (``string``, ``Int64``, ``Float64``, ``boolean``,
        ``datetime64[us]`` for DATE, ``datetime64[us, UTC]`` for TIMESTAMP; DECIMAL
        strings stay ``string``: the rule is :data:`mddframes.codec.dtypes.DTYPE_RULES`),
        then undeclared keys in first-seen order (``string``, or ``object`` when a value
        is not a string: no int turned float, no id turned number, nested values kept
        as objects). ``frame.attrs["mddframes"]`` holds the read's
        :class:`~mddframes.context.ReadContext`, which the client also keeps.

    Raises
    ------
    MddError
        As :meth:`Api.get_table <mddframes.api.Api.get_table>` raises it;
        ``DataShapeError`` if the answer has no list of row objects under ``data``.

    Notes
    -----
    An answer above :data:`STREAM_THRESHOLD` bytes (1 MiB), or of unknown size, is
    parsed as it arrives and never held as parsed JSON: peak memory stays within
    about four times its size, and the write-back context keeps it compressed (its
    ``payload`` is parsed again when a write needs it). The frame is the same either
    way. :func:`~mddframes.codec.read_route.choose_route` holds the whole rule.

    Nested cells (objects, lists) of a small table are the payload's own objects,
    not copies. Replacing such a cell (``frame.at[i, "address"] = {...}``) is the
    clearest edit; a cell mutated in place is found too (the write compares with what
    the service holds, parsed afresh), but the context's payload changed with it, so if
    the service changed meanwhile the write stops with a conflict.

    Examples
    --------
    >>> countries = client.read_table("tbl-0109")  # ISO 3166 in the sample data
    >>> countries.shape
    (249, 4)
    >>> countries.loc[56, ["alpha2", "name"]].tolist()  # the index: each row's position
    ['DE', 'Germany']
    """
    table_id = require_id(table_id, what="table_id")
    check_dtype_backend(dtype_backend)
    # no cyclic GC passes over the many row objects a parse makes (see fastjson)
    with gc_paused(), api.get_table_stream(table_id) as body:
        if choose_route(body.length) == "whole":
            payload, kept, finite = _whole_payload(body)
            frame = from_payload(payload, "table")
            context = ReadContext("table", table_id, payload, kept=kept, finite=finite,
                                  route="whole")  # fmt: skip
        else:
            frame, context = _streamed_frame(body, table_id, dtype_backend)
    frame = to_backend(frame, dtype_backend, consume=True)
    record_read(api, frame, context)
    return frame


def _streamed_frame(
    body: BodyStream, table_id: str, dtype_backend: DtypeBackend = "numpy_nullable"
) -> tuple[pd.DataFrame, ReadContext]:
    """The frame and context of a large answer, parsed as it arrives (see read_table).

    On the native route (:mod:`~mddframes.codec.arrow_rows`) a column the reader built
    is taken from its Arrow arrays: under ``"pyarrow"`` as it is, by default as the
    numpy-nullable array of the same values. Under ``"pyarrow"`` any other column is
    built as the default read builds it and turned into its Arrow array at once
    (:func:`~mddframes.frames.backends.arrow_array`, the conversion of ``to_backend``),
    so the Python objects of one column are freed before the next is built. Either way
    the frame is ``to_backend`` of the default frame, and its fingerprint the one a
    write takes of it (:func:`arrow_finishers`), without both frames in memory.
    """
    prints = FingerprintBuilder()
    finish, arrow_from = arrow_finishers(prints) if dtype_backend == "pyarrow" else (None, None)
    from_arrow = arrow_from if arrow_from is not None else default_from_arrow
    routes: list[Route] = []
    streamed, kept = frame_from_chunks(body.chunks(), "table", finish=finish,
                                       from_arrow=from_arrow, on_route=routes.append)  # fmt: skip
    route = routes[0]
    if streamed is not None and finish is not None:
        return streamed, ReadContext(
            "table", table_id, kept=kept, fingerprint=prints.finish(len(streamed)), route=route
        )
    if streamed is None:  # the "kept" route: the stream could not vouch for it
        decoded = decode_json_content(
            body.entry, body.url, kept.content(), status=body.status,
            content_type=body.content_type)  # fmt: skip
        payload = json_object(decoded, body.entry.operation, body.url)
        streamed = from_payload(payload, "table")
        del payload
        if finish is not None:  # fingerprinted as it will be held: its text as Arrow's
            streamed = to_backend(streamed, "pyarrow", consume=True)
            return streamed, ReadContext("table", table_id, kept=kept, route=route,
                                         fingerprint=fingerprint(streamed, default_slice))  # fmt: skip
    taken = fingerprint(streamed)
    return streamed, ReadContext("table", table_id, kept=kept, fingerprint=taken, route=route)


def default_from_arrow(name: str, chunked: Any) -> Any:
    """A column of the native route as the default read's array of the same values
    (text: equal values one object where repeats pay, as ``text_objects`` says)."""
    if str(chunked.type) == "string":
        return string_array(text_objects(chunked))
    return default_array(chunked)


def arrow_finishers(prints: FingerprintBuilder) -> tuple[ColumnFinish, ColumnFinish]:
    """The ``finish`` and ``from_arrow`` of a streamed ``dtype_backend="pyarrow"`` read.

    Both fingerprint each column into ``prints`` as a write will fingerprint the frame
    (text from its Arrow buffers, :func:`~mddframes.codec.fingerprint.digested_as_arrow`;
    any other column as the default read would build it) and return the frame's Arrow
    array of it: ``finish`` from the default array
    (:func:`~mddframes.frames.backends.arrow_array`), ``from_arrow`` from the pyarrow
    ChunkedArray built straight from the batches, converted for its digests a slice at a
    time (:meth:`~mddframes.codec.fingerprint.FingerprintBuilder.add_converted`).

    Parameters
    ----------
    prints : FingerprintBuilder
        Where the columns' fingerprints go, in frame order.

    Returns
    -------
    (callable, callable)
        For :func:`~mddframes.codec.stream.frame_from_chunks`.
    """

    def to_arrow(name: str, array: Any) -> Any:
        arrow = arrow_array(array)
        prints.add(name, arrow if digested_as_arrow(arrow) else array)
        return arrow

    def chunked_to_arrow(name: str, chunked: Any) -> Any:
        array = pd.arrays.ArrowExtensionArray(chunked)
        if digested_as_arrow(array):  # text: digested from its buffers, as a write will
            prints.add(name, array)
        else:
            prints.add_converted(name, len(chunked), lambda start, stop: default_array(
                chunked.slice(start, stop - start)))  # fmt: skip
        return array

    return to_arrow, chunked_to_arrow


def read_table_arrays(api: Api, table_id: str) -> tuple[dict[str, Any], pd.Index]:
    """:func:`read_table`'s columns as arrays (as ``Series.array`` gives them) and its index.

    The same read, the same arrays and the same write-back context (recorded in the
    client's registry, as every read of rows does), without the DataFrame: for
    ``read_tables``, which concatenates the columns of many tables and would only
    take each table's frame apart again.
    """
    return fetch_table_arrays(api, table_id)()


def fetch_table_arrays(
    api: Api, table_id: str, *, unbuilt: bool = False
) -> Callable[[], tuple[dict[str, Any], pd.Index]]:
    """The request of :func:`read_table_arrays`, and a function that builds its arrays.

    ``read_tables`` fetches in worker threads and builds in the waiting calling
    thread: a worker that built the arrays itself, under the GIL, would send its next
    request that much later. A large table is parsed as it arrives (its arrays are
    then built already, as the body is read); the building function of a small one
    makes the arrays and records the write-back context; with ``unbuilt`` its columns
    but the dates left unbuilt
    (:class:`~mddframes.codec.dtypes.UnbuiltColumn`).
    """
    table_id = require_id(table_id, what="table_id")
    with gc_paused(), api.get_table_stream(table_id) as body:
        if choose_route(body.length) != "whole":
            # a large table: streamed, as read_table does, its frame taken apart
            frame, context = _streamed_frame(body, table_id)
            registry_for(api).record(context)
            # the columns are the document's keys, str already (pandas types them Hashable)
            built = {str(name): column.array for name, column in frame.items()}, frame.index
            return lambda: built
        payload, kept, finite = _whole_payload(body)
    return _payload_builder(api, payload, "table", table_id, unbuilt, finite, kept)


@documented
def fetch_mapping_arrays(
    api: Api, mapping_id: str, *, unbuilt: bool = False
) -> Callable[[], tuple[dict[str, Any], pd.Index]]:
    """:func:`fetch_table_arrays` for a mapping: :func:`read_mapping`'s request, and a
    function that builds its frame's arrays and records the write-back context.

    Parameters
    ----------
    {api}
    mapping_id : str
        The mapping id.
    unbuilt : bool, default False
        Leave the columns unbuilt
        (:class:`~mddframes.codec.dtypes.UnbuiltColumn`).

    Returns
    -------
    callable
        Builds ``(arrays by column name, index)``: the columns of
        :func:`read_mapping`'s frame as ``Series.array`` gives them, and its index.
    """
    mapping_id = require_id(mapping_id, what="mapping_id")
    with gc_paused():
        payload = api.get_mapping(mapping_id)
    return _payload_builder(api, payload, "mapping", mapping_id, unbuilt, False, None)


def _whole_payload(body: BodyStream) -> tuple[dict[str, Any], KeptJson, bool]:
    """A small answer read whole and decoded (as ``body.json()``), its bytes kept, and
    whether its text surely holds no NaN or infinity (what makes its digest fast, see
    ReadContext)."""
    content = body.content()
    decoded = decode_json_content(body.entry, body.url, content, status=body.status,
                                  content_type=body.content_type)  # fmt: skip
    payload = json_object(decoded, body.entry.operation, body.url)
    return payload, keep_whole(content), surely_finite(content)


def _payload_builder(
    api: Api, payload: dict[str, Any], kind: Kind, object_id: str, unbuilt: bool,
    finite: bool, kept: KeptJson | None,
) -> Callable[[], tuple[dict[str, Any], pd.Index]]:  # fmt: skip
    def build() -> tuple[dict[str, Any], pd.Index]:
        with gc_paused():
            arrays, size = payload_arrays(payload, kind, unbuilt=unbuilt)
        registry_for(api).record(
            ReadContext(kind, object_id, payload, kept=kept, finite=finite, route="whole")
        )
        # object columns as Series.array has them (a NumpyExtensionArray, not an ndarray)
        return {
            name: pd.arrays.NumpyExtensionArray(array) if isinstance(array, np.ndarray) else array
            for name, array in arrays.items()
        }, pd.RangeIndex(size, name=INDEX_NAME)

    return build


@backend_documented
def read_mapping(
    api: Api, mapping_id: str, *, dtype_backend: DtypeBackend = "numpy_nullable"
) -> pd.DataFrame:
    """The column mappings of a mapping as a DataFrame, ready to edit and write back.

    Parameters
    ----------
    {api}
    mapping_id : str
        The mapping id.
    {dtype_backend}

    Returns
    -------
    pandas.DataFrame
        One row per entry of ``columnMappings`` (``source``, ``target``,
        ``transformation``, then any other key in first-seen order), index = the
        entry's original position; dtypes inferred as for undeclared table columns.
        The write-back context is recorded as for :func:`read_table`.
    """
    mapping_id = require_id(mapping_id, what="mapping_id")
    check_dtype_backend(dtype_backend)
    with gc_paused():
        payload = api.get_mapping(mapping_id)
        frame = to_backend(from_payload(payload, "mapping"), dtype_backend, consume=True)
    record_read(api, frame, ReadContext("mapping", mapping_id, payload, route="whole"))
    return frame


def columns_frame(payload: dict[str, Any]) -> pd.DataFrame:
    """The column metadata of a table payload as a DataFrame (no HTTP).

    Returns
    -------
    pandas.DataFrame
        One row per declared column, index ``position`` (declared order); columns
        ``name``, ``data_type``, ``nullable``, ``primary_key``, ``description`` (always,
        NA where the metadata does not say), then every other field of the metadata in
        snake_case (e.g. ``precision``, ``scale``).
    """
    columns = declared_columns(payload, "table")
    keys = list(dict.fromkeys(chain.from_iterable(columns)))
    names = {key: snake_case(key) for key in keys}
    data: dict[str, Any] = {}
    for field_name in COLUMN_FIELDS:
        source = next((k for k, v in names.items() if v == field_name), None)
        values = [c.get(source) for c in columns] if source else [None] * len(columns)
        data[field_name] = (
            pd.array(values, dtype=_FIELD_DTYPES[field_name])
            if _fits(values, field_name)
            else infer_array(values)
        )
    for key, name in names.items():
        if name not in data:
            data[name] = infer_array([c.get(key) for c in columns])
    return frame_of_arrays(data, pd.RangeIndex(len(columns), name="position"))


def _fits(values: list[Any], field_name: str) -> bool:
    wanted = bool if _FIELD_DTYPES[field_name] == "boolean" else str
    return all(v is None or type(v) is wanted for v in values)


@documented
def read_table_columns(api: Api, table_id: str) -> pd.DataFrame:
    """The column metadata of a table as a DataFrame (see :func:`~mddframes.frames.table.columns_frame`).

    This read does not record a write-back context: only reads of the rows do.

    Parameters
    ----------
    {api}
    table_id : str
        The table id.

    Returns
    -------
    pandas.DataFrame
        One row per declared column (``metadata.columns``), edit it and pass it to
        ``write_table(..., columns=...)``.
    """
    table_id = require_id(table_id, what="table_id")
    return columns_frame(api.get_table(table_id))
