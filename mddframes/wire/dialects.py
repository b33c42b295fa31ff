"""The dialects: each documented alternative to the wire profile, as one entry.

A dialect changes one assumption of :mod:`mddframes.wire.profile`, the way a real
tenant may differ. Its entry says what it changes (``kind`` and its parameters), for
whom (the rows of docs/wire-format.md) and what each reader does about it; the emulator
serves it (:mod:`mddframes.emulator.dialects`), the recording learner names it
(:mod:`mddframes.emulator.recordings`), doctor reports it and docs/wire-format.md lists
it (:mod:`mddframes.wire.page`), all from the entry. Adding one is an entry in
:data:`DIALECTS` (and its name in :data:`Dialect`) plus a test: docs/internals.md,
"Adding a dialect".
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

#: A dialect's name (the keys of :data:`DIALECTS`).
Dialect = Literal[
    "default", "spring-page", "snake-case", "nested-tree", "unprefixed", "literal-realm", "etag"
]

#: What a dialect varies: one assumption each (``reference`` varies none).
Kind = Literal["reference", "paged", "snake", "nested", "unprefixed", "realm", "etag"]


@dataclass(frozen=True)
class DialectEntry:
    """One dialect.

    Attributes
    ----------
    name : str
        What ``serve(dialect=...)`` and ``--dialect`` take.
    kind : str
        The assumption it varies (:data:`Kind`).
    summary : str
        One line: what it changes (the ``--dialect`` help).
    rows : str
        The rows of docs/wire-format.md it varies (``""``: none).
    alternative, client_does, doctor_differs : str
        The columns of the page's table of dialects.
    children_key : str
        For a ``nested`` dialect: the key holding each element's child list (one of
        :data:`~mddframes.wire.profile.CHILDREN_KEYS`).
    """

    name: str
    kind: Kind
    summary: str
    rows: str
    alternative: str
    client_does: str
    doctor_differs: str
    children_key: str = "children"


DIALECTS: dict[str, DialectEntry] = {
    entry.name: entry
    for entry in (
        DialectEntry(
            "default", "reference", "the shapes of docs/wire-format.md", "",
            "none: the shapes above", "—", "nothing (exit code 0)",
        ),
        DialectEntry(
            "spring-page", "paged",
            "every list answer a Spring Data page (page/size parameters, 50 by default)",
            "11, 14, 18",
            "every list a Spring Data page of 50 (`page`/`size` parameters)",
            "asks page 0 again in pages of 1,000 once a list spans pages, then follows "
            "every page to the end (at most 10,000, progress bar, total checked; a service "
            "that ignores `page` or a total that does not match is a `DataShapeError` "
            "naming the row)",
            "tree, object types, packages",
        ),
        DialectEntry(
            "snake-case", "snake",
            "every field name in snake_case, in answers and request bodies", "11-24",
            "every wire field name in snake_case, answers and request bodies",
            "the raw layer renames known names to camelCase; table and mapping documents "
            "are kept as served and written back in their spelling (the codec reads "
            "`data_type`/`primary_key`); the batch export body is sent in the service's "
            "spelling (learned from the first answer, or from one read of the object types "
            "before the first batch export; the dialect refuses camelCase names in a body)",
            "tree, element, raw data, object types, table, mapping, packages",
        ),
        DialectEntry(
            "nested-tree", "nested", "the tree as nested children lists without parent ids",
            "11", "the tree as nested `children` without parent ids",
            "flattened in pre-order, each child given its parent's id", "tree",
        ),
        DialectEntry(
            "unprefixed", "unprefixed",
            "synchronous operations without the API prefix (async ones keep it)", "2",
            "synchronous operations without `/api/mdd-backend` (batch export keeps it)",
            "a synchronous call answered 404 is repeated once without the prefix; the "
            "prefix that answers is kept per client and logged "
            "(`client.api.http.discovery.report()`)",
            "API prefix",
        ),
        DialectEntry(
            "literal-realm", "realm", "the token endpoint only under the realm 'tenat'", "4",
            "the token endpoint only under the realm `tenat`",
            "a 404 from the configured realm's token URL is repeated under `tenat` (or the "
            "tenant); the realm that grants is kept per client and logged",
            "token realm",
        ),
        DialectEntry(
            "etag", "etag",
            "tables and mappings carry an ETag; their updates honour If-Match (412)", "29",
            "tables and mappings read with a strong `ETag`; their updates honour "
            "`If-Match` (412)",
            "exposes the ETag of each read and sends it back as `If-Match` when asked; a "
            "412 is a `ConcurrentModificationError`",
            "nothing (exit code 0; the ETag check's evidence says a strong ETag is sent)",
        ),
    )
}  # fmt: skip
"""Every dialect, by name, the reference first."""


def check_dialect(name: str) -> str:
    """``name`` if it is a dialect, else ``ValueError`` listing the dialects."""
    if name not in DIALECTS:
        raise ValueError(f"unknown dialect {name!r}; known: {', '.join(DIALECTS)}")
    return name


def of_kind(kind: Kind) -> list[DialectEntry]:
    """The dialects varying ``kind``, in the order of :data:`DIALECTS`."""
    return [entry for entry in DIALECTS.values() if entry.kind == kind]


def nested_dialect(children_key: str) -> DialectEntry | None:
    """The dialect nesting the tree under ``children_key``, if one does."""
    return next((e for e in of_kind("nested") if e.children_key == children_key), None)
