"""Following a paged list answer to its end (wire-format rows 11, 14 and 18).

A Spring service often answers a list as a page (``{"content": [...],
"totalElements", "totalPages", "number", "size", "last"}``). Reading only ``content``
would silently lose every element after the first page, so :func:`collect_pages`
fetches the following pages with the ``page``/``size`` query parameters Spring Data
reads, checks each is the page asked for, bounds their number, and checks the total.
Anything it cannot vouch for is a :class:`~mddframes.errors.DataShapeError` naming the
wire-format row, never a shorter list.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from mddframes.errors import DataShapeError
from mddframes.progress import progress_shown
from mddframes.wire.profile import ASKED_PAGE_SIZE as ASKED_PAGE_SIZE  # (read from here too)
from mddframes.wire.profile import (
    MAX_PAGES,
    PAGE_CONTENT,
    PAGE_LAST,
    PAGE_NUMBER,
    PAGE_SIZE,
    PAGE_TOTAL_ELEMENTS,
    PAGE_TOTAL_PAGES,
    PAGE_TOTALS,
)


def _field(page: Mapping[str, Any], spellings: tuple[str, ...]) -> Any:
    return next((page[key] for key in spellings if key in page), None)


def is_page(value: Any) -> bool:
    """Whether ``value`` is a Spring Data page: a ``content`` list and paging fields."""
    return (
        isinstance(value, Mapping)
        and isinstance(value.get(PAGE_CONTENT), list)
        and any(key in value for key in PAGE_TOTALS)
    )


def worth_bigger_pages(first: Mapping[str, Any], asked: int = ASKED_PAGE_SIZE) -> bool:
    """Whether a first page (asked without a size) is worth asking again with ``asked``.

    A service's default page (Spring's 20, say) would cost one request per 20 entries;
    asking page 0 again with a larger size costs one request and saves the others.
    """
    size = _field(first, PAGE_SIZE)
    total_pages = _field(first, PAGE_TOTAL_PAGES)
    many = isinstance(total_pages, int) and total_pages > 1
    return many and isinstance(size, int) and 0 < size < asked


def collect_pages(
    first: Mapping[str, Any],
    fetch: Callable[[int, int], Any],
    *,
    what: str,
    row: int,
    progress: bool | None = None,
    max_pages: int = MAX_PAGES,
) -> list[Any]:
    """Every entry of a paged list, the first page given, the others fetched.

    Parameters
    ----------
    first : mapping
        The first answer, a page (:func:`is_page`).
    fetch : callable
        ``fetch(page, size)`` returns the decoded answer for that page number.
    what : str
        What the list is (``"tree of system 'DWH'"``), for messages.
    row : int
        The wire-format row of the assumption, for messages.
    progress : bool
        Show a ``tqdm.auto`` progress bar when there is more than one page.
    max_pages : int
        Refuse a list of more pages than this.

    Returns
    -------
    list
        The entries of every page, in order.

    Raises
    ------
    DataShapeError
        A page that is not the one asked for, more pages than ``max_pages``, or a
        total that does not match what was collected (the list changed while paging).
    """
    where = f"the {what} is paged (docs/wire-format.md row {row})"
    entries = list(first[PAGE_CONTENT])
    size = _field(first, PAGE_SIZE) or len(entries)
    number = _field(first, PAGE_NUMBER) or 0
    total_pages = _field(first, PAGE_TOTAL_PAGES)
    total = _field(first, PAGE_TOTAL_ELEMENTS)
    if number != 0:
        raise DataShapeError(f"{where}, but its first answer is page {number}, not page 0")
    if not isinstance(size, int) or size < 1:
        raise DataShapeError(f"{where}, but its page size is {size!r}")
    if isinstance(total_pages, int) and total_pages > max_pages:
        raise DataShapeError(
            f"{where} in {total_pages} pages of {size}; more than the bound of {max_pages}"
        )
    from tqdm.auto import tqdm

    page = first
    with tqdm(
        total=total_pages if isinstance(total_pages, int) else None,
        initial=1,
        desc=what,
        unit="page",
        disable=not progress_shown(progress) or not isinstance(total_pages, int) or total_pages < 2,
        leave=False,
    ) as bar:
        while not _is_last(page, number, total_pages):
            number += 1
            if number >= max_pages:
                raise DataShapeError(f"{where} and goes on past the bound of {max_pages} pages")
            page = fetch(number, size)
            if not is_page(page):
                raise DataShapeError(f"{where}, but page {number} is not a page")
            got = _field(page, PAGE_NUMBER)
            if got is not None and got != number:
                raise DataShapeError(
                    f"{where}, but asking for page {number} gave page {got}: the service "
                    "does not read the page/size parameters, so the list cannot be read whole"
                )
            entries.extend(page[PAGE_CONTENT])
            bar.update(1)
    if isinstance(total, int) and total != len(entries):
        raise DataShapeError(
            f"{where}: it announced {total} entries but its pages held {len(entries)} "
            "(the list changed while it was read; read it again)"
        )
    return entries


def _is_last(page: Mapping[str, Any], number: int, total_pages: Any) -> bool:
    last = page.get(PAGE_LAST)
    if isinstance(last, bool):
        return last
    if isinstance(total_pages, int):
        return number >= total_pages - 1
    return not page[PAGE_CONTENT]  # no paging fields to go by: an empty page ends it
