"""Verification of intent: the service holds what the user's frame says where the write
changed something.

The read-back after a PUT proves that the service holds the document that was sent
(:meth:`~mddframes.writing.documents.NewDocument.mismatch`). That alone would also
"verify" a document that lost an edit before it was sent. :func:`unmet_intent` closes
that gap for every cell the diff changed: the frame's value there and the value sent
(which the service holds) must be the same under the overlay's own equality
(:func:`~mddframes.codec.values.cell_changed`: types kept, ``-0.0`` apart from ``0.0``,
a missing cell equal only to null or an absent key).

What is not re-checked cell by cell: the cells the diff found unchanged. That decision
rests on the exact change detection (:mod:`mddframes.codec.fingerprint`: a keyed
128-bit digest over an injective encoding of each block, or the cells' own comparison),
not on a second look at the table.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mddframes.codec.values import ABSENT, cell_changed, is_missing_json

if TYPE_CHECKING:
    from mddframes.writing.changes import Change

#: Cells named in the error when an intent is not met.
_SHOWN = 5


def unmet_intent(change: Change) -> list[tuple[Any, str, Any, Any]]:
    """The changed cells where what was sent is not what the frame holds.

    Parameters
    ----------
    change : Change
        A prepared edit (a replacement without a frame has nothing to compare: its
        payload is the intent).

    Returns
    -------
    list of (row label, column, frame value, sent value)
        Empty when every changed cell holds the frame's value.
    """
    frame = change.frame
    changed = change.diff.changed_cells
    if frame is None or not changed:
        return []
    labels = change.labels
    position_of = {label: i for i, label in enumerate(labels)} if labels is not None else None
    wanted: dict[int, list[tuple[Any, str]]] = {}
    for label, column, _, _ in changed:
        position = label if position_of is None else position_of.get(label)
        if isinstance(position, int) and column in frame.columns and label in frame.index:
            wanted.setdefault(position, []).append((label, str(column)))
    rows = change.new.rows_at(change.kind, wanted)
    unmet = []
    for position, cells in wanted.items():
        row = rows.get(position)
        for label, column in cells:
            sent = ABSENT if row is None else row.get(column, ABSENT)
            value = frame.at[label, column]
            template = ABSENT if is_missing_json(sent) else sent
            if cell_changed(sent, value, template)[0]:
                unmet.append((label, column, value, sent))
    return unmet


def describe(unmet: list[tuple[Any, str, Any, Any]]) -> str:
    """The first few unmet cells, in words."""
    shown = ", ".join(
        f"row {label!r} column {column!r}: frame {value!r}, sent {sent!r}"
        for label, column, value, sent in unmet[:_SHOWN]
    )
    more = f" and {len(unmet) - _SHOWN} more" if len(unmet) > _SHOWN else ""
    return shown + more
