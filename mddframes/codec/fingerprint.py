"""What a frame held when it was read, small enough to keep: where an edit may be.

A streamed write (:class:`mddframes.writing.documents.EncodedDocument`) must find the
few cells a user changed in a large table without rebuilding every column of the
original and comparing it with the frame. A :class:`FrameFingerprint`, taken when the
frame is read, keeps for each typed column one digest per block of :data:`BLOCK_ROWS`
rows (16 bytes a block). At write time the same digests of the frame say which blocks of
which columns may hold a change; only those rows are compared with the original, exactly.

Exactness (docs/internals.md, "Change detection"): a block counts as unchanged only when
its digest is equal, and the digest is a keyed BLAKE2b of 128 bits (the key drawn at
random once per process, never shown) over a typed, tagged encoding of the block's cells
(:func:`cell_encoding`) that is injective: the column's dtype, which cells are missing, then
the present values' exact bits (``-0.0`` apart from ``0.0``, NaN apart from a missing
value) or, for text, each string's length and its UTF-8 bytes (so ``"<NA>"``, ``"nan"``,
``""`` and a missing cell all differ); Arrow-backed text is encoded from its own buffers
(lengths in bytes, under a tag of its own), so neither a read nor a write of a
``dtype_backend="pyarrow"`` frame makes a Python string of its text to digest it. Two
different blocks share a digest only by a collision of a keyed 128-bit hash, which no
value chosen without the key can aim at. A digest that differs may be a false alarm (the
cells are then compared and found equal); a digest never hides a change.

Columns of dtype ``object`` (JSON values: dicts, lists, mixed types) are digested over
the canonical JSON of each block's cells (``json.dumps`` with sorted keys: ``1`` apart
from ``1.0`` and ``True``, ``NaN`` apart from ``null``, integers of any size). A dict
mutated in place after the read changes its encoding, so the write finds it as it finds
any edit. A block holding what is not JSON (``pd.NA``, a numpy scalar, a date, keys of
two types) has no such encoding: its digest is :data:`UNMATCHED` (all zeros, which no
keyed digest is but by a 128-bit chance), and a block whose digest was or is that is
always compared. A column whose dtype changed since the read, or that no encoding
covers (a categorical, say), is compared whole.
"""

from __future__ import annotations

import hashlib
import json
import secrets
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, cast

import numpy as np
import pandas as pd

#: Rows per hashed block.
BLOCK_ROWS = 1024
#: Rows encoded at once (a whole number of blocks, so slices never split a block).
HASH_SLICE_ROWS = 64 * BLOCK_ROWS
#: Bytes of a block's digest.
DIGEST_BYTES = 16
#: The digest of a block no encoding tells apart from every other: never taken as equal.
UNMATCHED = bytes(DIGEST_BYTES)
# drawn once per process and never shown: a fingerprint unpickled in another process
# matches nothing there (every block is then compared), which is the safe way to differ
_KEY = secrets.token_bytes(32)
#: Rows of a column held in another form (Arrow) converted and hashed at once: each
#: slice's Python objects exist only while it is hashed (16,384 strings: about 1.5 MB).
CONVERT_SLICE_ROWS = 16 * BLOCK_ROWS


@dataclass(frozen=True, eq=False)
class FrameFingerprint:
    """Block digests of a frame's columns as read, and where each column's first value is.

    Attributes
    ----------
    columns : tuple of str
        The frame's columns, in order.
    dtypes : tuple of str
        Their dtypes (as ``str(dtype)``).
    n_rows : int
        The number of rows; the frame's index was ``RangeIndex(n_rows)``.
    digests : dict of str to numpy.ndarray or None
        Per column, the digest of each block of rows (an ``(n_blocks, 16)`` array of
        ``uint8``, see the module notes); None for a column that is compared by content
        (one no encoding covers: a categorical, say).
    first_value : dict of str to int
        Per column, the position of its first non-missing value (-1: none).
    """

    columns: tuple[str, ...]
    dtypes: tuple[str, ...]
    n_rows: int
    digests: dict[str, np.ndarray | None]
    first_value: dict[str, int]

    def fits(self, frame: pd.DataFrame) -> bool:
        """Whether ``frame`` has the read's columns (same order) and its index, so that
        its rows and columns line up with what was fingerprinted."""
        return (
            tuple(frame.columns) == self.columns
            and _plain_index(frame.index)
            and len(frame) == self.n_rows
        )

    def candidate_rows(
        self, frame: pd.DataFrame, convert: Callable[[Any], Any] | None = None
    ) -> dict[str, np.ndarray]:
        """For each hashed column, the sorted positions of the rows that may have changed.

        Columns compared by content (``digests`` None) are not included. ``frame`` must
        :meth:`fit`. ``convert``, when given, turns a slice of a column's array into
        the array the read made (an Arrow-backed column's slice into its numpy-nullable
        array): each column is then hashed a slice at a time in that form, never
        converted whole.
        """
        return self.survey(frame, convert)[0]

    def survey(
        self, frame: pd.DataFrame, convert: Callable[[Any], Any] | None = None
    ) -> tuple[dict[str, np.ndarray], FrameFingerprint]:
        """:meth:`candidate_rows`, and the fingerprint of ``frame`` as it is now.

        The digests that find the candidates are those of the frame's fingerprint: a
        write keeps it for the next write of the same frame instead of digesting every
        column a second time (equal to ``fingerprint(frame, convert)``).

        Returns
        -------
        (dict of str to numpy.ndarray, FrameFingerprint)
        """
        candidates: dict[str, np.ndarray] = {}
        dtypes: list[str] = []
        now_digests: dict[str, np.ndarray | None] = {}
        firsts: dict[str, int] = {}
        step = HASH_SLICE_ROWS if convert is None else CONVERT_SLICE_ROWS
        for name, dtype in zip(self.columns, self.dtypes, strict=True):
            column = frame[name]
            now_dtype, now, first = converted_digests(len(frame), _slicer(column, convert),
                                                      step=step)  # fmt: skip
            dtypes.append(now_dtype)
            now_digests[name], firsts[name] = now, first
            then = self.digests[name]
            if then is None:
                continue
            if now is None or now_dtype != dtype:
                candidates[name] = np.arange(self.n_rows)  # another dtype: compare all
                continue
            # (an all-zero digest is UNMATCHED's: equal to it or not, compared)
            blocks = np.flatnonzero((now != then).any(axis=1) | ~then.any(axis=1))
            candidates[name] = _rows_of_blocks(blocks, self.n_rows)
        now_print = FrameFingerprint(self.columns, tuple(dtypes), self.n_rows, now_digests, firsts)
        return candidates, now_print

    def undeclared(self, declared: Collection[str]) -> list[str]:
        """The read's columns not in ``declared``: the keys some row had that the
        metadata does not declare, in the order the rows first had them."""
        return [name for name in self.columns if name not in declared]

    def __repr__(self) -> str:
        return f"<FrameFingerprint of {self.n_rows:,} rows x {len(self.columns)} columns>"


def fingerprint(
    frame: pd.DataFrame, convert: Callable[[Any], Any] | None = None
) -> FrameFingerprint | None:
    """The fingerprint of a frame as read, or None for a frame it cannot describe.

    Parameters
    ----------
    frame : pandas.DataFrame
        A table's frame as a read built it: index ``RangeIndex(n)``, string column
        names, no duplicates.
    convert : callable, optional
        As for :meth:`FrameFingerprint.candidate_rows`: the fingerprint of the frame
        converted, taken a slice at a time.

    Returns
    -------
    FrameFingerprint or None
    """
    columns = list(frame.columns)
    if not _plain_index(frame.index) or len(set(columns)) != len(columns):
        return None
    if not all(isinstance(name, str) for name in columns):
        return None
    builder = FingerprintBuilder()
    for name, column in frame.items():
        if convert is None:
            builder.add_series(name, column)
        else:
            builder.add_converted(name, len(column), _slicer(column, convert))
    return builder.finish(len(frame))


def _slicer(column: pd.Series, convert: Callable[[Any], Any] | None) -> Callable[[int, int], Any]:
    array = column.array
    if convert is None or digested_as_arrow(array):
        return lambda start, stop: array[start:stop]
    return lambda start, stop: convert(array[start:stop])


class FingerprintBuilder:
    """A read's fingerprint taken column by column, as the read builds its columns.

    :func:`fingerprint` of the finished frame and this builder fed the same columns
    in the same order give equal fingerprints; a reader that turns each column into
    another backend's array right after building it fingerprints the column first.

    Examples
    --------
    >>> import pandas as pd
    >>> builder = FingerprintBuilder()
    >>> builder.add("n", pd.array([1, None], dtype="Int64"))
    >>> builder.finish(2)
    <FrameFingerprint of 2 rows x 1 columns>
    """

    def __init__(self) -> None:
        self._names: list[Any] = []
        self._dtypes: list[str] = []
        self._digests: dict[str, np.ndarray | None] = {}
        self._first: dict[str, int] = {}

    def add(self, name: Any, array: Any) -> None:
        """Fingerprint one column's array (as a frame of it would hold it).

        Parameters
        ----------
        name : str
            The column's name.
        array : numpy.ndarray or pandas.api.extensions.ExtensionArray
            Its values, one per row (an ``object`` ndarray stays ``object``).
        """
        is_object = isinstance(array, np.ndarray) and array.dtype == object
        column = pd.Series(array, dtype=object if is_object else None, copy=False)
        self.add_series(name, column)

    def add_series(self, name: Any, column: pd.Series) -> None:
        """Fingerprint one column of a frame (``frame[name]``)."""
        self._names.append(name)
        self._dtypes.append(str(column.dtype))
        if isinstance(name, str):
            self._digests[name] = _column_digests(column)
            self._first[name] = _first_value(column)

    def add_converted(self, name: Any, n_rows: int, convert: Callable[[int, int], Any]) -> None:
        """Fingerprint one column held in another form (an Arrow column), as :meth:`add`
        would fingerprint its default array, converting a slice at a time.

        Parameters
        ----------
        name : str
            The column's name.
        n_rows : int
            Its length.
        convert : callable
            ``(start, stop) -> array``: rows ``start:stop`` as the default read's array
            (see :func:`converted_digests`).
        """
        dtype, digests, first = converted_digests(n_rows, convert)
        self._names.append(name)
        self._dtypes.append(dtype)
        if isinstance(name, str):
            self._digests[name] = digests
            self._first[name] = first

    def finish(self, n_rows: int) -> FrameFingerprint | None:
        """The fingerprint of the columns added, or None for columns it cannot describe
        (a name that is not a string, a name twice).

        Parameters
        ----------
        n_rows : int
            The number of rows (the frame's index is ``RangeIndex(n_rows)``).

        Returns
        -------
        FrameFingerprint or None
        """
        names = self._names
        if len(set(names)) != len(names) or not all(isinstance(n, str) for n in names):
            return None
        return FrameFingerprint(
            tuple(names), tuple(self._dtypes), n_rows, self._digests, self._first
        )


def _plain_index(index: pd.Index) -> bool:
    return isinstance(index, pd.RangeIndex) and index.start == 0 and index.step == 1


def _column_digests(column: pd.Series) -> np.ndarray | None:
    return _digests_of_slices(len(column), lambda start, stop: column.array[start:stop],
                              HASH_SLICE_ROWS)  # fmt: skip


def _digests_of_slices(
    n_rows: int, part: Callable[[int, int], Any], step: int
) -> np.ndarray | None:
    """The block digests of a column given ``step`` rows at a time (``part(start, stop)``),
    or None when no encoding covers its cells."""
    digests = np.zeros((-(-n_rows // BLOCK_ROWS), DIGEST_BYTES), dtype=np.uint8)
    block = 0
    # a slice at a time: an encoding's temporaries stay small beside the column
    for start in range(0, n_rows, step):
        stop = min(start + step, n_rows)
        encode = cell_encoding(part(start, stop))
        if encode is None:
            return None
        for low in range(0, stop - start, BLOCK_ROWS):
            hashed = hashlib.blake2b(key=_KEY, digest_size=DIGEST_BYTES)
            try:
                for piece in encode(low, min(low + BLOCK_ROWS, stop - start)):
                    hashed.update(piece)
            except (TypeError, ValueError):  # a cell its dtype does not promise
                return None
            except _Unmatched:
                pass  # its digest stays UNMATCHED: every row of the block is compared
            else:
                digests[block] = np.frombuffer(hashed.digest(), dtype=np.uint8)
            block += 1
    return digests


def cell_encoding(array: Any) -> Callable[[int, int], Iterable[bytes | memoryview]] | None:
    """The typed, tagged encoding of an array's cells, rows ``start:stop`` at a time.

    Injective for each dtype: two runs of cells give the same bytes only when they hold
    the same values (bit for bit: ``-0.0`` apart from ``0.0``; a missing cell apart from
    every value, NaN and the texts ``"<NA>"``, ``"nan"`` and ``""`` included). The
    dtype's name leads, so that cells of two dtypes never share an encoding.

    Parameters
    ----------
    array : numpy.ndarray or pandas.api.extensions.ExtensionArray
        A column's values (a frame's ``column.array``).

    Returns
    -------
    callable or None
        ``(start, stop) -> iterable of bytes``; None for a dtype no encoding covers
        (categoricals, intervals...): such a column is compared by content.

    Examples
    --------
    >>> import pandas as pd
    >>> encode = cell_encoding(pd.array(["<NA>", None], dtype="string"))
    >>> b"".join(encode(0, 1)) == b"".join(encode(1, 2))
    False
    """
    dtype = array.dtype
    tag = f"{dtype}\x00".encode()
    if isinstance(array, pd.arrays.IntegerArray | pd.arrays.FloatingArray | pd.arrays.BooleanArray):
        missing = np.asarray(array.isna(), dtype=bool)
        numpy_dtype = dtype.numpy_dtype
        # missing cells' values zeroed: only the mask says what they are
        bits = array.to_numpy(dtype=numpy_dtype, na_value=numpy_dtype.type(0))
        return lambda start, stop: (tag, missing[start:stop].tobytes(), bits[start:stop].tobytes())
    if isinstance(array, pd.arrays.DatetimeArray | pd.arrays.TimedeltaArray):
        ticks = np.asarray(cast(Any, array).asi8)  # NaT is a tick no instant has
        return lambda start, stop: (tag, ticks[start:stop].tobytes())
    if isinstance(array, np.ndarray) and dtype.kind in "biufcmM":
        return lambda start, stop: (tag, np.ascontiguousarray(array[start:stop]).tobytes())
    text = _arrow_text(array)
    if text is not None:  # its own bytes: no Python string made (a tag apart from the next)
        return _arrow_text_encoding(f"{dtype}\x00arrow\x00".encode(), text)
    if isinstance(dtype, pd.StringDtype):
        missing = np.asarray(array.isna(), dtype=bool)
        cells = array.to_numpy(dtype=object, na_value=None)
        return lambda start, stop: _text_encoding(tag, cells[start:stop], missing[start:stop])
    # (after the text dtypes: pandas' StringArray is a NumpyExtensionArray of objects too)
    if isinstance(array, np.ndarray | pd.arrays.NumpyExtensionArray) and array.dtype.kind == "O":
        return _json_encoding(tag, np.asarray(array))
    return None


def _json_encoding(tag: bytes, array: np.ndarray) -> Callable[[int, int], tuple[bytes, ...]]:
    """Each block's cells as one canonical JSON array (Python's C encoder, sorted keys,
    NaN and infinity spelled as such); ``_Unmatched`` for a block holding what is not
    JSON (``pd.NA``, numpy scalars, dates) or nests too deep to encode."""
    cells = array.tolist()

    def encode(start: int, stop: int) -> tuple[bytes, ...]:
        try:
            text = json.dumps(cells[start:stop], sort_keys=True, check_circular=False)
        except (TypeError, ValueError, RecursionError):
            raise _Unmatched from None
        return tag, text.encode("ascii")

    return encode


class _Unmatched(Exception):
    """A block its encoding cannot tell apart from every other: its digest is UNMATCHED."""


def _text_encoding(tag: bytes, cells: np.ndarray, missing: np.ndarray) -> tuple[bytes, ...]:
    """Which cells are missing, each present string's length, then all their text."""
    texts = cells[~missing].tolist()
    lengths = np.fromiter(map(len, texts), dtype=np.int64, count=len(texts))
    # surrogatepass: a lone surrogate is text pandas holds too, and must count
    data = "".join(texts).encode("utf-8", "surrogatepass")
    return tag, missing.tobytes(), lengths.tobytes(), data


def digested_as_arrow(array: Any) -> bool:
    """Whether a column's array is digested from its Arrow buffers as it is, never
    converted to the default read's form first: Arrow-backed text (``string`` or
    ``large_string``, as ``pd.ArrowDtype`` or ``pd.StringDtype("pyarrow")``), whose
    conversion would make a Python string of every cell.

    Parameters
    ----------
    array : pandas.api.extensions.ExtensionArray or numpy.ndarray
        A column's values.

    Returns
    -------
    bool
    """
    chunked = getattr(array, "_pa_array", None)  # pandas' Arrow-backed arrays hold one
    if chunked is None:
        return False
    from pyarrow import types  # imported already: the array is pyarrow's

    return bool(types.is_string(chunked.type) or types.is_large_string(chunked.type))


def _arrow_text(array: Any) -> Any | None:
    """An Arrow-backed text array's data as one Arrow array (see :func:`digested_as_arrow`),
    or None."""
    if not digested_as_arrow(array):
        return None
    return array._pa_array.combine_chunks()  # copies only a slice of several chunks


def _arrow_text_encoding(
    tag: bytes, text: Any
) -> Callable[[int, int], Iterable[bytes | memoryview]]:
    """Which cells are missing, each cell's length in UTF-8 bytes, then their bytes: taken
    from the Arrow buffers, so equal cells give equal bytes however they are chunked."""
    missing = np.asarray(text.is_null().to_numpy(zero_copy_only=False), dtype=bool)
    offsets, data = _text_buffers(text)
    lengths = np.diff(offsets)
    if lengths[missing].any():  # a missing cell's slot may hold bytes: not part of a value
        offsets, data = _text_buffers(text.fill_null(""))
        lengths = np.diff(offsets)

    def encode(start: int, stop: int) -> tuple[bytes | memoryview, ...]:
        return (tag, missing[start:stop].tobytes(), lengths[start:stop].tobytes(),
                data[offsets[start] : offsets[stop]])  # fmt: skip

    return encode


def _text_buffers(text: Any) -> tuple[np.ndarray, memoryview]:
    """An Arrow text array's offsets (int64, one more than its cells) and its bytes."""
    from pyarrow import types

    if not len(text):  # an empty array may come without an offsets buffer
        return np.zeros(1, dtype=np.int64), memoryview(b"")
    _, offsets_buffer, data_buffer = text.buffers()
    width = np.int64 if types.is_large_string(text.type) else np.int32
    offsets = np.frombuffer(offsets_buffer, dtype=width)[text.offset : text.offset + len(text) + 1]
    offsets = offsets.astype(np.int64)
    return offsets, memoryview(data_buffer if data_buffer is not None else b"")


def converted_digests(
    n_rows: int, convert: Callable[[int, int], Any], *, step: int | None = None
) -> tuple[str, np.ndarray | None, int]:
    """The dtype, block digests and first value of a column held in another form.

    ``convert(start, stop)`` gives rows ``start:stop`` of the column as the array the
    default read makes of them (an Arrow column's slice turned numpy-nullable): the
    column is converted :data:`CONVERT_SLICE_ROWS` rows at a time, so the transient
    objects of one slice are all that exists at once, and the digests are those of the
    whole converted column.

    Parameters
    ----------
    n_rows : int
        The column's length.
    convert : callable
        ``(start, stop) -> array`` as above.
    step : int, optional
        Rows converted at once (a whole number of blocks); :data:`CONVERT_SLICE_ROWS`
        when not given.

    Returns
    -------
    (str, numpy.ndarray or None, int)
        ``str`` of the converted dtype, the block digests (None for a column no
        encoding covers: compared by content), the position of the first non-missing value
        (-1: none).
    """
    step = CONVERT_SLICE_ROWS if step is None else step
    first_part = _as_array(convert(0, min(n_rows, step)))
    dtype = str(first_part.dtype)
    first = -1
    held = {0: first_part}

    def part(start: int, stop: int) -> Any:
        nonlocal first
        piece = held.pop(start, None)
        if piece is None:
            piece = _as_array(convert(start, stop))
        if first < 0:
            found = _first_value(piece)
            first = start + found if found >= 0 else -1
        return piece

    digests = _digests_of_slices(n_rows, part, step)
    if digests is None:
        first = _first_value(_as_array(convert(0, n_rows)))
    return dtype, digests, first


def _as_array(array: Any) -> Any:
    """A converted slice as a frame's column would hold it (an object ndarray for a
    ``NumpyExtensionArray`` of objects)."""
    if array.dtype == object:
        return np.asarray(array)
    return array


def _rows_of_blocks(blocks: np.ndarray, n_rows: int) -> np.ndarray:
    if not len(blocks):
        return np.zeros(0, dtype=np.int64)
    starts = blocks * BLOCK_ROWS
    return np.concatenate(
        [np.arange(start, min(start + BLOCK_ROWS, n_rows)) for start in starts.tolist()]
    )


def _first_value(values: Any) -> int:
    # the array's own isna (a mask it holds already), not Series.notna's extra frames
    array = values.array if isinstance(values, pd.Series) else values
    present = ~np.asarray(pd.isna(array) if isinstance(array, np.ndarray) else array.isna(),
                          dtype=bool)  # fmt: skip
    position = int(np.argmax(present)) if len(present) else 0
    return position if len(present) and present[position] else -1


def rows_in(candidates: Sequence[int] | np.ndarray, start: int, stop: int) -> np.ndarray:
    """The candidates (sorted positions) that lie in ``[start, stop)``."""
    values: Any = np.asarray(candidates)
    low, high = np.searchsorted(values, [start, stop])
    found: np.ndarray = values[low:high]
    return found
