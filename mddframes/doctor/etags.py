"""Doctor check of the ETags of tables and mappings (row 29), read-only.

A service that answers ``getTable``/``getMapping`` with a strong ``ETag`` lets a write
send it back as ``If-Match`` and be refused (412) when someone changed the object since
it was read, whatever machine they wrote from. The check reads one table and one
mapping twice each and looks at the header only: present, strong, and the same over two
reads of an unchanged object (a tag that changes on every read would make every write
412). Whether the updates honour ``If-Match`` needs a write, which the doctor never
sends.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from mddframes.doc_sections import documented
from mddframes.doctor.findings import Finding
from mddframes.errors import MddError
from mddframes.http.etags import strong_etag
from mddframes.wire.profile import ETAG_HEADER

if TYPE_CHECKING:
    from mddframes.api import Api

CHECK = "ETag"
ROW = "29"
_READS = (("table", "getTable", "tableId"), ("mapping", "getMapping", "mappingId"))
_LOCK_WINDOW = (
    "writes are protected across machines only by the lock window: mddframes' lock "
    "keeps writers on one machine apart, and each write compares what the service holds "
    "with what was read just before its PUT, but a write from another machine between "
    "that check and the PUT can be overwritten unnoticed"
)


def _etag_header(api: Api, operation: str, params: dict[str, str]) -> str | None:
    """The ``ETag`` header of one read; the body is not read."""
    response = api.http.call(operation, params, stream=True)
    try:
        return response.headers.get(ETAG_HEADER)
    finally:
        response.close()


def _shown(value: str) -> str:
    return repr(value if len(value) <= 40 else value[:37] + "...")


@documented
def check_etags(api: Api, ids: Mapping[str, str]) -> Finding:
    """Whether the table and the mapping of ``ids`` are read with a usable ``ETag``.

    Parameters
    ----------
    {api}
    ids : mapping
        ``"table"`` and ``"mapping"`` ids picked from a tree (either may be missing).

    Returns
    -------
    Finding
        ``ok`` when both reads carry a strong ETag that holds over two reads, or
        neither carries one (the action says what protects writes then); ``differs``
        when only one kind does, or a tag is weak or malformed; ``breaks`` when a tag
        changes between two reads; ``unknown`` when nothing could be read.
    """
    found: dict[str, tuple[str | None, str | None]] = {}
    for kind, operation, key in _READS:
        object_id = ids.get(kind)
        if object_id is None:
            continue
        try:
            first = _etag_header(api, operation, {key: object_id})
            second = _etag_header(api, operation, {key: object_id})
        except MddError as exc:
            return Finding(CHECK, ROW, "unknown", f"{kind} {object_id!r}: {exc}",
                           "report the failing read")  # fmt: skip
        found[f"{operation} ({kind} {object_id!r})"] = (first, second)
    if not found:
        return Finding(CHECK, ROW, "unknown", "the tree names no table or mapping to read")
    unstable = [f"{what} answered {_shown(a or '')} then {_shown(b or '')}"
                for what, (a, b) in found.items() if a != b]  # fmt: skip
    if unstable:
        return Finding(
            CHECK, ROW, "breaks",
            "the ETag changes between two reads of an unchanged object: " + "; ".join(unstable),
            "a write sending the ETag of its read as If-Match would be refused (412) every "
            "time; report it to the service's operators",
        )  # fmt: skip
    strong = [what for what, (tag, _) in found.items() if strong_etag(tag) is not None]
    unusable = [f"{what}: {_shown(tag)}" for what, (tag, _) in found.items()
                if tag is not None and strong_etag(tag) is None]  # fmt: skip
    without = [what for what, (tag, _) in found.items() if tag is None]
    if len(strong) == len(found):
        example = _shown(next(iter(found.values()))[0] or "")
        return Finding(
            CHECK, ROW, "ok",
            f"{' and '.join(strong)} answer a strong ETag (e.g. {example}), the same over "
            "two reads; whether tableUpdate/mappingUpdate honour If-Match needs a write, "
            "which doctor never sends",
            "mddframes sends the ETag of its read as If-Match: a 412 is a "
            "ConcurrentModificationError with nothing written (if the service ignores "
            f"If-Match, {_LOCK_WINDOW})",
        )  # fmt: skip
    if len(without) == len(found):
        return Finding(CHECK, ROW, "ok", f"no ETag on {' and '.join(without)}",
                       "without ETags, " + _LOCK_WINDOW)  # fmt: skip
    notes = []
    if unusable:
        notes.append("ETags If-Match cannot use (weak, W/..., or malformed; If-Match "
                     "compares strongly, RFC 9110): " + "; ".join(unusable))  # fmt: skip
    if strong:
        notes.append("a strong ETag on " + " and ".join(strong))
    if without:
        notes.append("no ETag on " + " and ".join(without))
    return Finding(
        CHECK, ROW, "differs", "; ".join(notes),
        "mddframes sends If-Match only with a strong ETag; for the others " + _LOCK_WINDOW,
    )  # fmt: skip
