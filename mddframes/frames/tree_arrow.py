"""``read_tree(..., dtype_backend="pyarrow")`` straight to Arrow columns, a batch at a time.

The default route decodes the whole tree answer, builds a numpy-nullable frame (one
Python ``str`` per id, name, type, parent id, path...) and only then converts it to
``pd.ArrowDtype`` columns. This route streams the answer instead: the body's bytes go
through :class:`~mddframes.codec.splitter.RowSplitter` (batches of about 1 MiB of whole
elements, parsed by orjson with the exact ``json`` fallback), each batch's fields
become Arrow arrays at once (the batch's dicts are then dropped), and depth, path and
child counts are computed on Arrow and numpy arrays: the answer is never decoded whole
and no column ever exists as Python strings. Peak memory is then about the answer's
size, not the five to seven times a frame of Python strings costs.

The frame is exactly ``to_backend(read_tree(...), "pyarrow")``: same columns, dtypes,
values and warnings. Whatever this route cannot vouch for makes it step aside *before*
it warns or returns anything, and :func:`mddframes.frames.tree.read_tree` then reads the
tree the default way (one more request): an answer that is not a bare list of objects
(a Spring page, an envelope, a nested tree, snake_case keys), an element without an id,
two fields that snake_case to one name, id aliases, and id or name fields holding
values other than strings or integers. Other fields whose values are not all strings,
all integers within int64 or all booleans are typed by the default route's own rules
(:func:`~mddframes.frames.record_frames.column_array`), from their Python values.
"""

from __future__ import annotations

import weakref
from collections.abc import Iterator
from itertools import repeat
from typing import TYPE_CHECKING, Any

import pandas as pd

from mddframes.codec.arrow_columns import read_pool
from mddframes.codec.splitter import RowSplitter
from mddframes.doc_sections import documented
from mddframes.frames.backends import arrow_array, assemble_frame, require_module
from mddframes.frames.record_frames import column_array, key_order
from mddframes.frames.shaping import snake_case
from mddframes.frames.tree_shape import (
    CHILDREN_KEYS,
    LEADING_COLUMNS,
    PARENT_ALIASES,
    STRING_COLUMNS,
    whole_versions,
)
from mddframes.frames.tree_walk import numpy_of, walk_arrow
from mddframes.wire.spelling import is_snake_case, spelling

if TYPE_CHECKING:
    from mddframes.api import Api

_ROWS_KEY = "data"  # the bare list is read as the rows of {"data": [...]}
#: The raw layers whose service answers the tree in a shape this route does not take
#: (a page, an envelope, nested, snake_case): their next reads go the default way at
#: once, not after a request the stream gives up on.
_OTHER_SHAPES: weakref.WeakSet[Any] = weakref.WeakSet()
# the default route flattens a tree whose snake_case columns hold one of these
_NESTED_COLUMNS = frozenset(map(snake_case, CHILDREN_KEYS))


class StepAside(Exception):
    """This route cannot vouch for the answer: read it the default way."""


@documented
def stream_tree_columns(api: Api, system: str) -> tuple[dict[str, list[Any]], int] | None:
    """The tree answer's fields as per-batch Arrow arrays (or Python lists), streamed.

    Parameters
    ----------
    {api}
    system : str
        The system name.

    Returns
    -------
    tuple of (dict, int) or None
        Each field under its name as sent, in order of first appearance: one chunk per
        batch, an Arrow array of type ``string``, ``int64``, ``bool`` or ``null``, or a
        list of the decoded values when no such type holds them; and the number of
        elements. None when the answer is not a bare list of flat element objects in
        camelCase (the caller reads it the default way).

    Raises
    ------
    MddError
        As any call: the request failed or the transfer was cut off.
    """
    if api in _OTHER_SHAPES:
        return None
    with api.get_tree_stream(system) as body:
        builder = _ColumnBuilder(api)
        splitter = RowSplitter(_ROWS_KEY, builder.add)
        chunks = _as_rows_document(body.chunks())
        if chunks is None or builder.other_shape:
            _OTHER_SHAPES.add(api)
            return None
        done = splitter.split(chunks, stop=lambda: builder.gave_up)
        if builder.other_shape:
            _OTHER_SHAPES.add(api)
        if not done or builder.gave_up or builder.rows == 0:
            return None
    builder.settle_key_style()
    return builder.columns, builder.rows


def _as_rows_document(chunks: Iterator[bytes]) -> Iterator[bytes] | None:
    """The body's chunks as ``{"data": <body>}``, when the body is a bare JSON list."""
    first = b""
    for chunk in chunks:
        first = chunk.lstrip()
        if first:
            break
    if not first.startswith(b"["):
        return None

    def wrapped() -> Iterator[bytes]:
        yield b'{"' + _ROWS_KEY.encode() + b'":'
        yield first
        yield from chunks
        yield b"}"

    return wrapped()


class _ColumnBuilder:
    """Takes the splitter's batches of element dicts and keeps only their columns."""

    def __init__(self, api: Api) -> None:
        self.pa = require_module("pyarrow", extra="arrow")
        self._api = api
        self._pool = read_pool()
        self.columns: dict[str, list[Any]] = {}
        self.rows = 0
        self.gave_up = False
        self.other_shape = False  # not a flat list in camelCase: this service's way
        self._spelling: str | None = None

    def add(self, batch: list[dict[str, Any]]) -> None:
        if self.gave_up:
            return
        if self.rows == 0:
            # what Api._json_answer looks at (the first entry's keys): a snake_case
            # answer is renamed there, and the default route does that
            if is_snake_case(batch):
                self.gave_up = self.other_shape = True
                return
            self._spelling = spelling(batch)
        names = key_order(batch)
        if _NESTED_COLUMNS.intersection(map(snake_case, names)):
            self.gave_up = self.other_shape = True  # nested: the default route flattens it
            return
        size = len(batch)
        for name in names:
            chunks = self.columns.get(name)
            if chunks is None:
                chunks = self.columns[name] = (
                    [self.pa.nulls(self.rows, memory_pool=self._pool)] if self.rows else []
                )
            chunks.append(self._typed(list(map(dict.get, batch, repeat(name, size)))))
        if len(self.columns) > len(names):
            present = set(names)
            for name, chunks in self.columns.items():
                if name not in present:
                    chunks.append(self.pa.nulls(size, memory_pool=self._pool))
        self.rows += size

    def _typed(self, values: list[Any]) -> Any:
        """An Arrow array when every value is a str, every one an int within int64, or
        every one a bool (gaps allowed); else the values as they are."""
        pa = self.pa
        try:
            array = pa.array(values, memory_pool=self._pool)
        except (pa.ArrowException, OverflowError, TypeError, ValueError):
            return values  # mixed kinds, big ints, lone surrogates...
        if array.type in (pa.string(), pa.int64(), pa.bool_(), pa.null()):
            return array
        return values  # floats (maybe ints among them), objects, lists

    def settle_key_style(self) -> None:
        """What ``Api._json_answer`` records about a camelCase answer."""
        if self._api.key_style is None and self._spelling == "camelCase":
            self._api.key_style = "camelCase"


def canonical_columns(
    raw: dict[str, list[Any]], size: int, string_columns: tuple[str, ...]
) -> dict[str, Any]:
    """The tree frame's columns before the walk, under their snake_case names.

    Each value is a ``pyarrow.ChunkedArray`` or, for values no Arrow type holds
    exactly, a column array of the default route (``object``). ``id``, ``name``,
    ``type`` and ``parent_id`` are always there.

    Raises
    ------
    StepAside
        Where the default route would rename, merge or stringify in ways this one does
        not repeat (see the module docstring), or an element has no id.
    """
    pa = require_module("pyarrow", extra="arrow")
    names = {snake_case(name): name for name in raw}
    if len(names) != len(raw) or "id" not in names:
        raise StepAside("merged or aliased columns")
    if "parent_id" not in names and any(a in names for a in PARENT_ALIASES):
        raise StepAside("a parent id alias")
    columns: dict[str, Any] = {}
    for name, source in names.items():
        columns[name] = _column(name, raw.pop(source), string_columns, pa)
    for name in ("name", "type", "parent_id"):
        if name not in columns:
            columns[name] = pa.chunked_array([pa.nulls(size, pa.string())])
    if columns["id"].null_count:
        raise StepAside("an element without an id")  # the default route names them
    return columns


def _column(name: str, chunks: list[Any], string_columns: tuple[str, ...], pa: Any) -> Any:
    pool = read_pool()
    typed = [c for c in chunks if not isinstance(c, list)]
    kinds = {c.type for c in typed if c.type != pa.null()}
    if len(typed) == len(chunks) and len(kinds) <= 1:
        kind = kinds.pop() if kinds else pa.null()
        if name in string_columns:
            if kind in (pa.string(), pa.int64(), pa.null()):
                # (an int id as text: the default route's Int64 -> string gives str(int))
                return pa.chunked_array(
                    [c.cast(pa.string(), memory_pool=pool) for c in chunks], pa.string()
                )
            raise StepAside(f"{name}: booleans as text")
        if kind != pa.null():
            return pa.chunked_array([c.cast(kind, memory_pool=pool) for c in chunks], kind)
    elif name in string_columns:
        raise StepAside(f"{name}: mixed or nested values")
    values: list[Any] = []
    for chunk in chunks:
        values.extend(chunk if isinstance(chunk, list) else chunk.to_pylist())
    array = column_array(values)
    if name == "version":
        array = whole_versions(array)
    return arrow_array(array)  # Arrow-backed, or object: exact Python values


def frame_of_columns(columns: dict[str, Any], size: int) -> pd.DataFrame:
    """A frame of Arrow arrays, ``ArrowExtensionArray`` and ``object`` columns, assembled
    as :func:`~mddframes.frames.backends.to_backend` assembles one."""
    pa = require_module("pyarrow", extra="arrow")
    arrays = [
        pd.arrays.ArrowExtensionArray(array)
        if isinstance(array, (pa.ChunkedArray, pa.Array))
        else array
        for array in columns.values()
    ]
    return assemble_frame(arrays, pd.RangeIndex(size), pd.Index(list(columns)))


@documented
def read_tree_arrow(
    api: Api, system: str, *, types: list[str] | None, what: str
) -> pd.DataFrame | None:
    """The pyarrow tree frame of ``system``, or None when the default route must read it.

    Parameters
    ----------
    {api}
    system : str
        The system name.
    types : list of str or None
        Keep only elements of these types (after the walk, as the default route).
    what : str
        What the tree is, for warnings.

    Returns
    -------
    pandas.DataFrame or None
        Equal to ``to_backend(tree_frame(api.get_tree(system), types=types), "pyarrow")``;
        None (nothing warned, nothing kept) when this route steps aside.

    Warns
    -----
    TreeIntegrityWarning
        As :func:`~mddframes.frames.tree.tree_frame`.
    """
    streamed = stream_tree_columns(api, system)
    if streamed is None:
        return None
    raw, size = streamed
    try:
        columns = canonical_columns(raw, size, STRING_COLUMNS)
    except StepAside:
        return None
    del raw
    walked = dict(zip(LEADING_COLUMNS[4:], walk_arrow(columns, size, what), strict=True))
    ordered = {
        name: walked[name] if name in walked else columns.pop(name)
        for name in [*LEADING_COLUMNS, *(c for c in columns if c not in LEADING_COLUMNS)]
    }
    if types is not None:
        ordered, size = _keep_types(ordered, types)
    return frame_of_columns(ordered, size)


def _keep_types(columns: dict[str, Any], types: list[str]) -> tuple[dict[str, Any], int]:
    pa = require_module("pyarrow", extra="arrow")
    import pyarrow.compute as pc

    keep = pc.fill_null(pc.is_in(columns["type"], value_set=pa.array(types, pa.string())), False)
    mask = numpy_of(keep, bool)
    kept = {
        name: array.filter(keep) if isinstance(array, (pa.Array, pa.ChunkedArray)) else array[mask]
        for name, array in columns.items()
    }
    return kept, int(mask.sum())
