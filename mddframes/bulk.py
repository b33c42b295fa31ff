"""Run one function over many ids concurrently, with a progress bar and per-id errors.

:func:`run_bulk` is the one concurrent map of mddframes: the bulk loaders, the bulk
writers and the exports all use it, so that every bulk call has the same knobs
(``max_workers``, ``progress``, ``errors``) and the same failure report.

Example
-------
>>> ids = ["tbl-0109", "no-such-table"]
>>> outcome = run_bulk(client.api.get_table, ids, errors="skip", progress=False)
>>> tables = [payload for _id, payload in outcome.succeeded]
>>> len(tables)
1
>>> outcome.failures[["id", "error_type", "status"]]  # one row per failed id
              id     error_type  status
0  no-such-table  NotFoundError     404
>>> results, failures = outcome  # also unpacks as a pair
"""

from __future__ import annotations

import logging
import queue
from collections.abc import Callable, Hashable, Iterable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Generic, Literal, TypeVar, cast, overload

import pandas as pd
from tqdm.auto import tqdm

from mddframes.doc_sections import documented
from mddframes.errors import InvalidArgumentError, PartialFailureWarning, issue_warning
from mddframes.http.pace import current_pace_note
from mddframes.progress import progress_shown

logger = logging.getLogger(__name__)

T = TypeVar("T")
R = TypeVar("R")
M = TypeVar("M")  # what fn returns when ``then`` turns it into the result R

ErrorPolicy = Literal["raise", "skip"]

#: A progress hook: called with ``(done, total)`` after each step (``total`` may be None
#: while unknown). Notebook panels pass one to drive their own progress widget.
ProgressCallback = Callable[[int, int | None], None]

#: The default number of concurrent calls when neither the caller nor the client says.
DEFAULT_MAX_WORKERS = 8

#: The columns of every failures frame, in this order.
FAILURE_COLUMNS: tuple[str, ...] = ("position", "id", "error_type", "status", "message")

_NAMED_LIMIT = 20  # how many failed ids a warning lists before it just counts


@dataclass(frozen=True)
class BulkResult(Generic[T, R]):
    """The outcome of :func:`run_bulk`.

    Unpacks as ``results, failures = outcome``.

    Attributes
    ----------
    items : list
        The input items, in input order.
    results : list
        One entry per input item, in input order: the function's return value, or
        ``None`` where the item failed (see ``failures`` / :attr:`succeeded`; ``None``
        alone never means failure, the function may return it).
    failures : pandas.DataFrame
        One row per failed item, in input order, columns ``position`` (Int64, index
        into ``items``), ``id`` (the item's label), ``error_type`` (the exception's
        class name), ``status`` (Int64: the HTTP status of an ``MddError``, else NA),
        ``message``. Empty (with these columns) when nothing failed.
    exceptions : dict of int to Exception
        The exceptions themselves, keyed by position, for re-raising or inspection.
    """

    items: list[T]
    results: list[R | None]
    failures: pd.DataFrame
    exceptions: dict[int, Exception] = field(default_factory=dict)

    def __iter__(self) -> Iterator[Any]:
        return iter((self.results, self.failures))

    @property
    def ok(self) -> bool:
        """True when no item failed."""
        return not self.exceptions

    @property
    def succeeded(self) -> list[tuple[T, R]]:
        """The ``(item, result)`` pairs of the items that did not fail, in input order."""
        # not a failure, so the slot holds fn's own return value (None included): no
        # runtime check can tell that None from a failed slot's, hence the cast
        return [
            (item, cast(R, result))
            for position, (item, result) in enumerate(zip(self.items, self.results, strict=True))
            if position not in self.exceptions
        ]


@overload
def run_bulk(
    fn: Callable[[T], R],
    items: Iterable[T],
    *,
    max_workers: int | None = None,
    progress: bool | None = None,
    errors: ErrorPolicy = "raise",
    desc: str | None = None,
    label: Callable[[T], Hashable] | None = None,
    on_progress: ProgressCallback | None = None,
    then: None = None,
) -> BulkResult[T, R]: ...


@overload
def run_bulk(
    fn: Callable[[T], M],
    items: Iterable[T],
    *,
    max_workers: int | None = None,
    progress: bool | None = None,
    errors: ErrorPolicy = "raise",
    desc: str | None = None,
    label: Callable[[T], Hashable] | None = None,
    on_progress: ProgressCallback | None = None,
    then: Callable[[M], R],
) -> BulkResult[T, R]: ...


def run_bulk(
    fn: Callable[[T], Any],
    items: Iterable[T],
    *,
    max_workers: int | None = None,
    progress: bool | None = None,
    errors: ErrorPolicy = "raise",
    desc: str | None = None,
    label: Callable[[T], Hashable] | None = None,
    on_progress: ProgressCallback | None = None,
    then: Callable[[Any], Any] | None = None,
) -> BulkResult[T, Any]:
    """Call ``fn(item)`` for every item on a thread pool and collect the outcomes.

    Parameters
    ----------
    fn : callable
        Called once per item, from worker threads (it must be thread-safe; the
        Client's methods are).
    items : iterable
        The items (usually ids). A single ``str`` is refused: it would be iterated
        character by character.
    max_workers : int, optional
        Concurrent calls; default :data:`DEFAULT_MAX_WORKERS` (8). Never more
        threads than items.
    progress : bool, optional
        Show a ``tqdm.auto`` progress bar (a widget in notebooks, text in a
        terminal); it disappears when done. By default only on a terminal or in Jupyter.
    errors : {"raise", "skip"}, default "raise"
        ``"raise"``: at the first failure, cancel the items not yet started, wait for
        the running ones, and re-raise that failure (its type unchanged, with a note
        naming the item and how many were cancelled). ``"skip"``: run every item,
        report each failure in ``failures``, then log one warning and emit one
        :class:`PartialFailureWarning`, both with the count and the failed ids.
    desc : str, optional
        The progress bar's label and the prefix of warnings (e.g. ``"read_tables"``).
    label : callable, optional
        Turns an item into its ``id`` in the failures frame and the messages
        (default: the item itself when it is a str/int, else its ``repr``).
    on_progress : callable, optional
        Called as ``on_progress(done, total)`` from the calling thread after each item
        finishes (failed or not). An exception it raises stops the call like a failure.
    then : callable, optional
        Called as ``then(fn(item))`` from the calling thread as each item's call
        returns; its value is the item's result, and an exception it raises is the
        item's failure. For CPU-bound work on each answer: done by the waiting
        calling thread, it does not hold a worker back from its next request.

    Returns
    -------
    BulkResult
        ``results`` aligned with the items, ``failures`` frame, ``exceptions``.

    Raises
    ------
    Exception
        With ``errors="raise"``, the first failure, unchanged in type.
    InvalidArgumentError
        For an invalid ``errors``, ``max_workers`` or ``items`` argument.
    """
    _check_arguments(errors, items)
    workers = resolve_workers(max_workers, DEFAULT_MAX_WORKERS)
    fn_name: str = getattr(fn, "__name__", "bulk")
    run = _Run(
        items=list(items),
        name_of=label or _default_label,
        desc=desc or fn_name,
        errors=errors,
        then=then,
        on_progress=on_progress,
    )
    if run.items:
        for _ in run.iterate(fn, workers, progress, ahead=None):
            pass
    failures = _failures_frame(run.items, run.exceptions, run.name_of)
    _warn_skipped(run, failures)
    return BulkResult(run.items, run.results, failures, run.exceptions)


@documented
def iter_bulk(
    fn: Callable[[T], Any],
    items: Iterable[T],
    *,
    ahead: int | None,
    max_workers: int | None = None,
    progress: bool | None = None,
    errors: ErrorPolicy = "raise",
    desc: str | None = None,
    label: Callable[[T], Hashable] | None = None,
    then: Callable[[Any], Any] | None = None,
) -> Iterator[tuple[int, T, Any, Exception | None]]:
    """:func:`run_bulk` as a generator: each item's outcome in input order, few in flight.

    The same knobs and failure handling as :func:`run_bulk`; the difference is memory:
    an item is started only while fewer than ``ahead`` items separate it from the
    oldest outcome not yet handed out, so results never pile up faster than the caller
    takes them (and while the generator is suspended no new call starts).

    Parameters
    ----------
    fn : callable
        Called once per item, from worker threads (as in :func:`run_bulk`).
    items : iterable
        The items (usually ids); a single ``str`` is refused.
    ahead : int or None
        How far past the oldest outcome not yet yielded an item may start (at least
        1); None starts every item at once, as :func:`run_bulk` does.
    max_workers : int, optional
        Concurrent calls; default :data:`DEFAULT_MAX_WORKERS`.
    {progress}
    errors : {"raise", "skip"}, default "raise"
        As in :func:`run_bulk`.
    desc : str, optional
        The progress bar's label and the prefix of warnings.
    label : callable, optional
        Turns an item into its id in messages.
    then : callable, optional
        Called as ``then(fn(item))`` in the calling thread as each call returns.

    Yields
    ------
    (int, item, object, Exception or None)
        The position, the item, its result (None when it failed) and its failure
        (None when it did not), in input order. With ``errors="skip"`` the warning
        :func:`run_bulk` gives is given once the last item is yielded.

    Raises
    ------
    Exception
        With ``errors="raise"``, the first failure, unchanged in type.
    InvalidArgumentError
        For an invalid ``errors``, ``max_workers``, ``ahead`` or ``items`` argument.

    Examples
    --------
    >>> ids = ["tbl-0001", "tbl-0109"]
    >>> for _pos, table_id, payload, error in iter_bulk(
    ...     client.api.get_table, ids, ahead=2, errors="skip", progress=False
    ... ):
    ...     print(table_id, error is None)
    tbl-0001 True
    tbl-0109 True
    """
    _check_arguments(errors, items)
    if ahead is not None and (isinstance(ahead, bool) or not isinstance(ahead, int) or ahead < 1):
        raise InvalidArgumentError(f"ahead must be a positive integer or None, got {ahead!r}")
    workers = resolve_workers(max_workers, DEFAULT_MAX_WORKERS)
    run = _Run(
        items=list(items),
        name_of=label or _default_label,
        desc=desc or str(getattr(fn, "__name__", "bulk")),
        errors=errors,
        then=then,
        on_progress=None,
    )
    if run.items:
        for position in run.iterate(fn, workers, progress, ahead=ahead):
            result, run.results[position] = run.results[position], None  # the caller's now
            yield position, run.items[position], result, run.exceptions.get(position)
    _warn_skipped(run, _failures_frame(run.items, run.exceptions, run.name_of))


def _warn_skipped(run: _Run[Any, Any], failures: pd.DataFrame) -> None:
    """Log and warn once, naming the failed items, when a run skipped failures."""
    if run.exceptions:
        message = _skipped_message(run.desc, len(run.items), failures)
        logger.warning(message)
        issue_warning(message, PartialFailureWarning)


def _check_arguments(errors: Any, items: Iterable[Any]) -> None:
    if errors not in ("raise", "skip"):
        raise InvalidArgumentError(f"errors must be 'raise' or 'skip', got {errors!r}")
    if isinstance(items, (str, bytes)):
        raise InvalidArgumentError(
            f"items must be a collection of ids, not a single {type(items).__name__} "
            f"({items!r}); wrap it in a list"
        )


@dataclass
class _Run(Generic[T, R]):
    """One :func:`run_bulk` call: its items, and their results and failures by position."""

    items: list[T]
    name_of: Callable[[T], Hashable]
    desc: str
    errors: ErrorPolicy
    then: Callable[[Any], R] | None
    on_progress: ProgressCallback | None
    results: list[R | None] = field(init=False)
    exceptions: dict[int, Exception] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.results = [None] * len(self.items)

    def iterate(
        self, fn: Callable[[T], Any], workers: int, progress: bool | None, ahead: int | None
    ) -> Iterator[int]:
        """Call ``fn`` on the items on a thread pool, settling each call as it finishes.

        Yields each position in input order once it and every earlier one settled. An
        item starts only when it is fewer than ``ahead`` positions past the next one to
        yield (None: every item starts at once).
        """
        total = len(self.items)
        bar = tqdm(
            total=total,
            desc=self.desc,
            disable=not progress_shown(progress),
            leave=False,
            unit="id",
        )
        executor = ThreadPoolExecutor(
            max_workers=min(workers, total), thread_name_prefix="mddframes-bulk"
        )
        settled = [False] * total
        released = submitted = finished = 0
        pending: dict[Future[Any], int] = {}
        # each call, once done, reports itself here: waiting on every pending future
        # at each turn (concurrent.futures.wait) costs the calling thread, which builds
        # the frames, time in proportion to the calls still out
        completed: queue.SimpleQueue[Future[Any]] = queue.SimpleQueue()
        try:
            while released < total:
                limit = total if ahead is None else min(total, released + ahead)
                for position in range(submitted, limit):
                    future = executor.submit(fn, self.items[position])
                    pending[future] = position
                    future.add_done_callback(completed.put)
                submitted = max(submitted, limit)
                done = [completed.get()]
                while not completed.empty():
                    done.append(completed.get())
                for future in done:
                    if future not in pending:
                        continue  # (cancelled after a failure: already accounted for)
                    position = pending.pop(future)
                    error = self._settle(future, position)
                    settled[position] = True
                    finished += 1
                    bar.update(1)
                    if self.on_progress is not None:
                        self.on_progress(finished, total)
                    if error is not None:
                        self._fail(position, error, pending)
                    _show_pace(bar, len(self.exceptions))
                while released < total and settled[released]:
                    yield released
                    released += 1
        finally:
            # Cancel what has not started (after an error, Ctrl-C or a caller that stops
            # iterating) and wait for the running calls, so no thread outlives the call.
            executor.shutdown(wait=True, cancel_futures=True)
            bar.close()

    def _settle(self, future: Future[Any], position: int) -> BaseException | None:
        """Store the item's result (passed through ``then``), or return its failure."""
        error = future.exception()
        if error is not None:
            return error
        try:
            value = future.result()
            if self.then is not None:
                value = self.then(value)
            self.results[position] = value
        except Exception as exc:  # noqa: BLE001 - then's failure is the item's
            return exc
        return None

    def _fail(self, position: int, error: BaseException, pending: dict[Future[Any], int]) -> None:
        """Record the item's failure; with ``errors="raise"``, cancel the rest and raise it."""
        if not isinstance(error, Exception):  # KeyboardInterrupt, SystemExit
            raise error
        self.exceptions[position] = error
        name = self.name_of(self.items[position])
        logger.debug("%s: %r failed: %s: %s", self.desc, name, type(error).__name__, error)
        if self.errors == "raise":
            cancelled = sum(f.cancel() for f in pending)
            error.add_note(
                f"{self.desc}: raised for item {name!r} "
                f"(position {position} of {len(self.items)}); {cancelled} item(s) not "
                f"started were cancelled. Pass errors='skip' to collect all failures."
            )
            raise error


def _show_pace(bar: Any, failed: int) -> None:
    """The bar's postfix: the failures so far, and the pace when the service sets it
    (``paced by the service: 18 req/s``, :func:`~mddframes.http.pace.current_pace_note`)."""
    parts = [f"failed={failed}"] if failed else []
    note = current_pace_note()
    if note is not None:
        parts.append(note)
    if parts:
        bar.set_postfix_str(", ".join(parts), refresh=False)


def _skipped_message(desc: str, total: int, failures: pd.DataFrame) -> str:
    """The warning of a run whose failures were skipped: the count and the first ids."""
    failed = failures["id"].tolist()
    shown = ", ".join(repr(i) for i in failed[:_NAMED_LIMIT])
    if len(failed) > _NAMED_LIMIT:
        shown += f" and {len(failed) - _NAMED_LIMIT} more"
    return (
        f"{desc}: {len(failed)} of {total} failed and were skipped: {shown} "
        f"(details in the failures frame)"
    )


def resolve_workers(max_workers: Any, default: int) -> int:
    """The number of concurrent calls of a bulk call: the one rule of every ``max_workers``.

    Parameters
    ----------
    max_workers : int or None
        What the caller asked for.
    default : int
        What None means (usually the client's ``max_workers``).

    Returns
    -------
    int
        ``default`` when ``max_workers`` is None, else ``max_workers``.

    Raises
    ------
    InvalidArgumentError
        ``max_workers`` is neither None nor a positive int (0 included: it does not
        mean the default, it is refused, wherever it is passed).
    """
    if max_workers is None:
        return default
    if isinstance(max_workers, bool) or not isinstance(max_workers, int) or max_workers < 1:
        raise InvalidArgumentError(
            f"max_workers must be a positive integer or None (the default), got {max_workers!r}"
        )
    return max_workers


def _default_label(item: Any) -> Hashable:
    if isinstance(item, (str, int)):
        return item
    return repr(item)


def _failures_frame(
    items: Sequence[Any], exceptions: dict[int, Exception], name_of: Callable[[Any], Hashable]
) -> pd.DataFrame:
    """One row per failed item, in input order, with stable columns and dtypes."""
    positions = sorted(exceptions)
    return pd.DataFrame(
        {
            "position": pd.array(positions, dtype="Int64"),
            "id": pd.array([name_of(items[p]) for p in positions], dtype=object),
            "error_type": pd.array(
                [type(exceptions[p]).__name__ for p in positions], dtype="string"
            ),
            "status": pd.array(
                [getattr(exceptions[p], "status", None) for p in positions], dtype="Int64"
            ),
            "message": pd.array([str(exceptions[p]) for p in positions], dtype="string"),
        },
        columns=list(FAILURE_COLUMNS),
    )


def bulk_status_frame(
    fn: Callable[[T], Any],
    items: list[T],
    *,
    max_workers: int | None,
    progress: bool | None,
    desc: str,
    label: Callable[[T], Hashable] = str,
    on_progress: ProgressCallback | None = None,
) -> pd.DataFrame:
    """:func:`run_bulk` with ``errors="skip"``, as the result frame bulk calls return.

    Returns
    -------
    pandas.DataFrame
        One row per item, in input order: ``id`` (``label`` of the item), ``ok``
        (boolean), ``error`` (the message, NA when ok) and ``value`` (what ``fn``
        returned; callers spread it into their own columns).
    """
    outcome = run_bulk(
        fn,
        items,
        max_workers=max_workers,
        progress=progress,
        errors="skip",
        desc=desc,
        label=label,
        on_progress=on_progress,
    )
    positions = range(len(items))
    frame = pd.DataFrame(
        {
            "id": pd.array([str(label(item)) for item in items], dtype="string"),
            "ok": pd.array([p not in outcome.exceptions for p in positions], dtype="boolean"),
            "error": pd.array(
                [
                    str(outcome.exceptions[p]) if p in outcome.exceptions else None
                    for p in positions
                ],
                dtype="string",
            ),
        }
    )
    frame["value"] = pd.Series(outcome.results, dtype=object)
    return frame
