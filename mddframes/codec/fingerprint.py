"""What a frame held when it was read, small enough to keep: where an edit may be.

A streamed write (:class:`mddframes.writing.documents.EncodedDocument`) must find the
few cells a user changed in a large table without rebuilding every column of the
original and comparing it with the frame. A :class:`FrameFingerprint`, taken when the
frame is read, keeps for each typed column one 64-bit sum of pandas' value hashes per
block of :data:`BLOCK_ROWS` rows (a few hundred bytes per column; what it costs is in
docs/internals.md, Performance). At write time the same sums of the frame say which blocks of which columns may hold a
change; only those rows are compared with the original, exactly.

A block whose sum is unchanged is taken as unchanged: an edit is missed only if it
leaves a 64-bit sum of SipHash values, each weighted by an odd number drawn from its
row's position, as it was (odds about 1 in 2**63 per block; the weights make values
that trade places between rows count).
Columns of dtype ``object`` (JSON values: dicts, lists, mixed types) are not hashed:
their cells can be mutated in place, so the writer compares them with the original
by content, batch by batch. A column whose dtype changed since the read is compared
whole.

An Arrow-backed column the read built needs no second pass at all while it holds the
very ``pyarrow.ChunkedArray`` the read made (:class:`HeldArrays`): Arrow arrays are
immutable, and pandas gives a column a new one on every edit (``at``, ``loc``,
``fillna``...), so the same array object holds the same values and its sums are the
read's. Only a column whose array is another object is hashed.
"""

from __future__ import annotations

import dataclasses
import functools
import weakref
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

#: Rows per hashed block.
BLOCK_ROWS = 1024
#: Rows hashed at once (a whole number of blocks, so slices never split a block).
HASH_SLICE_ROWS = 64 * BLOCK_ROWS
#: Rows of a column held in another form (Arrow) converted and hashed at once: each
#: slice's Python objects exist only while it is hashed (16,384 strings: about 1.5 MB).
CONVERT_SLICE_ROWS = 16 * BLOCK_ROWS


class HeldArrays:
    """The Arrow arrays of a read's frame, known by identity: the columns whose values
    need no hashing while they hold them.

    Only arrays a read built are held (:meth:`FrameFingerprint.holding`): their memory
    is Arrow's own, which pandas and pyarrow never write into, whereas an array a user
    makes may share a numpy array's memory that stays writable. Each is held by a weak
    reference (never kept alive; a dead one matches nothing) together with its column's
    dtype. A pickled frame's arrays are new objects: the holding is not pickled.
    """

    __slots__ = ("_refs",)

    def __init__(self, refs: Mapping[str, tuple[weakref.ref[Any], str]] | None = None) -> None:
        self._refs = dict(refs or {})

    @classmethod
    def of(cls, frame: pd.DataFrame) -> HeldArrays:
        """The Arrow-backed columns of ``frame``, as they are now."""
        refs: dict[str, tuple[weakref.ref[Any], str]] = {}
        for name, column in frame.items():
            chunked = _chunked_array(column)
            if isinstance(name, str) and chunked is not None:
                refs[name] = (weakref.ref(chunked), str(column.dtype))
        return cls(refs)

    def same(self, name: str, column: pd.Series) -> bool:
        """Whether ``column`` holds the array held for ``name``, with the same dtype."""
        held = self._refs.get(name)
        if held is None:
            return False
        ref, dtype = held
        chunked = ref()
        same = chunked is not None and chunked is _chunked_array(column)
        return same and str(column.dtype) == dtype

    def only(self, names: Iterable[str]) -> HeldArrays:
        """The arrays held for ``names``."""
        return HeldArrays({name: self._refs[name] for name in names if name in self._refs})

    def __len__(self) -> int:
        return len(self._refs)

    def __reduce__(self) -> tuple[Any, ...]:
        return (HeldArrays, ())


def _chunked_array(column: pd.Series) -> Any:
    """The ``pyarrow.ChunkedArray`` an Arrow-backed column holds (None for others)."""
    array: Any = column.array
    if isinstance(column.array, pd.arrays.ArrowExtensionArray):  # ArrowStringArray too
        return array._pa_array
    return None


@dataclass(frozen=True, eq=False)
class FrameFingerprint:
    """Block hash sums of a frame's columns as read, and where each column's first value is.

    Attributes
    ----------
    columns : tuple of str
        The frame's columns, in order.
    dtypes : tuple of str
        Their dtypes (as ``str(dtype)``).
    n_rows : int
        The number of rows; the frame's index was ``RangeIndex(n_rows)``.
    sums : dict of str to numpy.ndarray or None
        Per column, the uint64 sum of the value hashes of each block of rows; None
        for a column that is compared by content (``object`` dtype).
    first_value : dict of str to int
        Per column, the position of its first non-missing value (-1: none).
    arrays : HeldArrays
        The Arrow arrays the sums are known to describe (see :meth:`holding`).
    """

    columns: tuple[str, ...]
    dtypes: tuple[str, ...]
    n_rows: int
    sums: dict[str, np.ndarray | None]
    first_value: dict[str, int]
    arrays: HeldArrays = dataclasses.field(default_factory=HeldArrays)

    def holding(self, frame: pd.DataFrame) -> FrameFingerprint:
        """This fingerprint, knowing ``frame``'s Arrow arrays as the ones it describes.

        Only for the frame a read built, right after it took the fingerprint: a column
        that still holds its array then needs no hashing in :meth:`survey`.
        """
        return dataclasses.replace(self, arrays=HeldArrays.of(frame))

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

        Columns compared by content (``sums`` None) are not included. ``frame`` must
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

        The sums that find the candidates are those of the frame's fingerprint: a
        write keeps it for the next write of the same frame instead of hashing every
        column a second time (equal to ``fingerprint(frame, convert)``).

        Returns
        -------
        (dict of str to numpy.ndarray, FrameFingerprint)
        """
        candidates: dict[str, np.ndarray] = {}
        dtypes: list[str] = []
        now_sums: dict[str, np.ndarray | None] = {}
        firsts: dict[str, int] = {}
        step = HASH_SLICE_ROWS if convert is None else CONVERT_SLICE_ROWS
        held: list[str] = []
        for name, dtype in zip(self.columns, self.dtypes, strict=True):
            column = frame[name]
            if self.arrays.same(name, column):
                # the very array the sums describe: its values are the read's
                held.append(name)
                dtypes.append(dtype)
                now_sums[name], firsts[name] = self.sums[name], self.first_value[name]
                if self.sums[name] is not None:
                    candidates[name] = np.zeros(0, dtype=np.int64)
                continue
            now_dtype, now, first = converted_sums(len(frame), _slicer(column, convert), step=step)
            dtypes.append(now_dtype)
            now_sums[name], firsts[name] = now, first
            sums = self.sums[name]
            if sums is None:
                continue
            if now is None or now_dtype != dtype:
                candidates[name] = np.arange(self.n_rows)  # another dtype: compare all
                continue
            blocks = np.flatnonzero(now != sums)
            candidates[name] = _rows_of_blocks(blocks, self.n_rows)
        now_print = FrameFingerprint(self.columns, tuple(dtypes), self.n_rows, now_sums, firsts,
                                     self.arrays.only(held))  # fmt: skip
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
    if convert is None:
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
        self._sums: dict[str, np.ndarray | None] = {}
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
            self._sums[name] = _block_sums(column)
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
            (see :func:`converted_sums`).
        """
        dtype, sums, first = converted_sums(n_rows, convert)
        self._names.append(name)
        self._dtypes.append(dtype)
        if isinstance(name, str):
            self._sums[name] = sums
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
        return FrameFingerprint(tuple(names), tuple(self._dtypes), n_rows, self._sums, self._first)


def _plain_index(index: pd.Index) -> bool:
    return isinstance(index, pd.RangeIndex) and index.start == 0 and index.step == 1


def _block_sums(column: pd.Series) -> np.ndarray | None:
    if column.dtype == object:
        return None
    return _sums_of_slices(
        len(column), lambda start, stop: column.iloc[start:stop], HASH_SLICE_ROWS
    )


def _sums_of_slices(
    n_rows: int, part: Callable[[int, int], pd.Series], step: int
) -> np.ndarray | None:
    """The block sums of a column given ``step`` rows at a time (``part(start, stop)``)."""
    if not n_rows:
        return np.zeros(0, dtype=np.uint64)
    weights = _row_weights(n_rows)
    sums = []
    # hashed a slice at a time: hash_pandas_object's temporaries (several arrays of the
    # slice's length) stay small beside the column, and a value's hash does not depend
    # on its neighbours, so the sums are the ones of the whole column at once
    for start in range(0, n_rows, step):
        try:
            # categorize=False: the same hashes (categorizing only saves work on repeated
            # values), about 7x faster on the mostly distinct strings of a text column
            hashes = pd.util.hash_pandas_object(
                part(start, min(start + step, n_rows)), index=False, categorize=False
            ).to_numpy(dtype=np.uint64)
        except (TypeError, UnicodeEncodeError):
            # a value pandas cannot hash (or a lone surrogate, which has no UTF-8):
            # compared by content instead
            return None
        # each hash weighted by its row: a plain sum cannot see two values of one block
        # trade places (True -> False in one row, False -> True in another)
        weighted = hashes * weights[start : start + len(hashes)]
        sums.append(np.add.reduceat(weighted, np.arange(0, len(hashes), BLOCK_ROWS)))
    return sums[0] if len(sums) == 1 else np.concatenate(sums)


def converted_sums(
    n_rows: int, convert: Callable[[int, int], Any], *, step: int | None = None
) -> tuple[str, np.ndarray | None, int]:
    """The dtype, block sums and first value of a column held in another form.

    ``convert(start, stop)`` gives rows ``start:stop`` of the column as the array the
    default read makes of them (an Arrow column's slice turned numpy-nullable): the
    column is converted :data:`CONVERT_SLICE_ROWS` rows at a time, so the transient
    objects of one slice are all that exists at once, and the sums are those of the
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
        ``str`` of the converted dtype, the block sums (None for an ``object`` column:
        compared by content), the position of the first non-missing value (-1: none).
    """
    step = CONVERT_SLICE_ROWS if step is None else step
    first_part = _as_series(convert(0, min(n_rows, step)))
    dtype = str(first_part.dtype)
    first = -1
    if first_part.dtype == object:
        return dtype, None, _first_value(_as_series(convert(0, n_rows)))
    held = {0: first_part}

    def part(start: int, stop: int) -> pd.Series:
        nonlocal first
        piece = held.pop(start, None)
        if piece is None:
            piece = _as_series(convert(start, stop))
        if first < 0:
            found = _first_value(piece)
            first = start + found if found >= 0 else -1
        return piece

    sums = _sums_of_slices(n_rows, part, step)
    if sums is None:
        first = _first_value(_as_series(convert(0, n_rows)))
    return dtype, sums, first


def _as_series(array: Any) -> pd.Series:
    if array.dtype == object:  # an ndarray or a NumpyExtensionArray: kept object
        return pd.Series(np.asarray(array), dtype=object, copy=False)
    return pd.Series(array, copy=False)


@functools.lru_cache(maxsize=4)
def _row_weights(n_rows: int) -> np.ndarray:
    """An odd 64-bit multiplier per row position (splitmix64 of the position, made odd).

    Odd, so a weight never loses a hash's bits; pseudo-random, so a change that moves
    values between rows changes the sum except with odds of about 1 in 2**63.
    """
    with np.errstate(over="ignore"):
        z = np.arange(n_rows, dtype=np.uint64) + np.uint64(0x9E3779B97F4A7C15)
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        z = z ^ (z >> np.uint64(31))
    weights = z | np.uint64(1)
    weights.flags.writeable = False  # shared by every column of every frame of this length
    return weights


def _rows_of_blocks(blocks: np.ndarray, n_rows: int) -> np.ndarray:
    if not len(blocks):
        return np.zeros(0, dtype=np.int64)
    starts = blocks * BLOCK_ROWS
    return np.concatenate(
        [np.arange(start, min(start + BLOCK_ROWS, n_rows)) for start in starts.tolist()]
    )


def _first_value(column: pd.Series) -> int:
    # the array's own isna (a mask it holds already), not Series.notna's extra frames
    present = ~np.asarray(column.array.isna(), dtype=bool)
    position = int(present.argmax()) if len(present) else 0
    return position if len(present) and present[position] else -1


def rows_in(candidates: Sequence[int] | np.ndarray, start: int, stop: int) -> np.ndarray:
    """The candidates (sorted positions) that lie in ``[start, stop)``."""
    values: Any = np.asarray(candidates)
    low, high = np.searchsorted(values, [start, stop])
    found: np.ndarray = values[low:high]
    return found
