"""New elements: one child, or many from a frame in topological order (parents first)."""

from __future__ import annotations

import graphlib
import heapq
from typing import TYPE_CHECKING, Any

import pandas as pd

from mddframes.codec.values import JsonValue, is_missing_cell
from mddframes.doc_sections import documented
from mddframes.elements.asking import ChildIndex
from mddframes.elements.records import cell, element_id, element_series, json_value, require_text
from mddframes.elements.settling import Acted, settle_lost
from mddframes.errors import (
    AnswerLostError,
    DataShapeError,
    InvalidArgumentError,
    MddError,
    PartialFailureWarning,
    issue_warning,
)
from mddframes.progress import progress_shown

if TYPE_CHECKING:
    from mddframes.api import Api

_RESERVED = ("key", "parent", "parent_key", "type", "name")


@documented
def create_child(
    api: Api, parent_id: str, type: str, name: str, **attributes: JsonValue
) -> pd.Series:
    """Create one element as a child of another.

    Parameters
    ----------
    {api}
    parent_id : str
        The existing parent element.
    type : str
        The new element's type (a path segment of the call).
    name : str
        The new element's name.
    **attributes
        Its attributes (sent beside ``name``; None values are omitted).

    Returns
    -------
    pandas.Series
        The new element as the service answered it (see :func:`element_series`).

    Raises
    ------
    AnswerLostError
        The answer was lost and the parent's system now holds an element of that type
        and name under the parent: it may be this one (or an older one); the message
        names their ids. When it holds none, the request did not act and was sent once
        more.
    """
    where = f"create_child(parent={parent_id!r})"
    require_text(where, parent_id=parent_id, type=type, name=name)
    body = _body(where, name, attributes)
    try:
        answer = api.create_child_structure(str(parent_id), str(type), body)
    except AnswerLostError as exc:
        found = ChildIndex(api).existing(str(parent_id), str(type), str(name))
        if found:
            raise AnswerLostError(
                f"{where}: {exc.message}. The tree now holds {len(found)} {type} element(s) "
                f"named {name!r} under it ({', '.join(found[:10])}): one may be this "
                "request's; check before creating it again",
                **exc.request_details(),
            ) from exc
        # the tree holds no such child: the request did not act, so sending it is safe
        answer = api.create_child_structure(str(parent_id), str(type), body)
    return element_series(answer)


def _body(where: str, name: str, attributes: dict[str, Any]) -> dict[str, Any]:
    body: dict[str, Any] = {"name": str(name)}
    for key, value in attributes.items():
        if key == "name":
            continue
        if not is_missing_cell(value):
            body[key] = json_value(value, f"{where}, attribute {key!r}")
    return body


def _create_asking(
    api: Api, index: ChildIndex, parent_id: str, type: str, name: str, attributes: dict[str, Any]
) -> str:
    """Create one row's element; after a lost answer ask the tree before sending again.

    Returns the new id (from the answer, or found in the tree when the answer was lost).
    """
    where = f"create_child(parent={parent_id!r})"
    require_text(where, parent_id=parent_id, type=type, name=name)
    body = _body(where, name, attributes)

    def send() -> str:
        new_id = element_id(api.create_child_structure(parent_id, type, body), where)
        index.created(parent_id, type, name, new_id)
        return new_id

    def ask(exc: AnswerLostError) -> Acted[str] | None:
        found = index.new_since(parent_id, type, name)
        if len(found) == 1:  # it acted: this is the row's element
            index.created(parent_id, type, name, found[0], listed=True)
            return Acted(found[0])
        if found:
            raise AnswerLostError(
                f"{where}: {exc.message}. The tree now holds {len(found)} new {type} "
                f"elements named {name!r} under it ({', '.join(found[:10])}); "
                "which one is this request's cannot be told",
                **exc.request_details(),
            ) from exc
        return None  # it did not act: send again

    return settle_lost(
        send, ask, not_done=lambda: f"no {type} named {name!r} under {parent_id!r} in the tree"
    )


def creation_order(frame: pd.DataFrame) -> list[Any]:
    """The order in which the rows of a create_children frame can be created.

    A row's ``parent`` (or ``parent_key``) that equals another row's ``key`` is that
    row; any other ``parent`` is an existing element id (a key wins over an id of the
    same spelling). The frame's order is kept, except that a row is moved after the
    row that creates its parent.

    Parameters
    ----------
    frame : pandas.DataFrame
        Columns ``parent`` (or ``parent_key``), ``type``, ``name``, optional ``key``.

    Returns
    -------
    list
        The frame's index labels, in creation order.

    Raises
    ------
    DataShapeError
        A required column is missing, a key is duplicated, a ``parent_key`` names no
        row, or the parents form a cycle; nothing has been sent.
    """
    _check_columns(frame)
    keys = _keys(frame)
    key_to_label = {k: label for label, k in keys.items() if k is not None}
    parent_label: dict[Any, Any] = {}
    for pos, label in enumerate(frame.index):
        parent_label[label] = None
        parent_key = cell(frame, pos, "parent_key")
        parent = cell(frame, pos, "parent")
        if parent_key is not None:
            if parent_key not in key_to_label:
                raise DataShapeError(
                    f"create_children: row {label!r} has parent_key {parent_key!r}, which is "
                    f"not the key of any row (keys: {sorted(key_to_label)[:20]})"
                )
            parent_label[label] = key_to_label[parent_key]
        elif parent is not None and parent in key_to_label:
            parent_label[label] = key_to_label[parent]
        elif parent is None:
            raise DataShapeError(
                f"create_children: row {label!r} has no parent (an existing element id or "
                "the key of another row)"
            )
    sorter = graphlib.TopologicalSorter(
        {label: [p] if p is not None else [] for label, p in parent_label.items()}
    )
    try:
        sorter.prepare()
    except graphlib.CycleError as exc:
        cycle = exc.args[1] if len(exc.args) > 1 else []
        named = " -> ".join(repr(keys.get(label, label)) for label in cycle)
        raise DataShapeError(
            f"create_children: the parents form a cycle ({named}); nothing was created"
        ) from None

    # Kahn's algorithm, always taking the earliest ready row: the frame's order is
    # kept, except that a row waits until its parent row has been created.
    position = {label: pos for pos, label in enumerate(frame.index)}
    children: dict[Any, list[Any]] = {}
    waiting: dict[Any, int] = {}
    ready: list[int] = []
    for label, parent in parent_label.items():
        if parent is None:
            heapq.heappush(ready, position[label])
        else:
            children.setdefault(parent, []).append(label)
            waiting[label] = 1
    labels = list(frame.index)
    order: list[Any] = []
    while ready:
        label = labels[heapq.heappop(ready)]
        order.append(label)
        for child in children.get(label, ()):
            waiting[child] -= 1
            if not waiting[child]:
                heapq.heappush(ready, position[child])
    return order


def _check_columns(frame: Any) -> None:
    if not isinstance(frame, pd.DataFrame):
        raise DataShapeError(f"create_children expects a DataFrame, got {type(frame).__name__}")
    missing = [c for c in ("type", "name") if c not in frame.columns]
    if "parent" not in frame.columns and "parent_key" not in frame.columns:
        missing.insert(0, "parent")
    if missing:
        raise DataShapeError(
            f"create_children: the frame lacks column(s) {missing} (it has {list(frame.columns)})"
        )
    if not frame.index.is_unique:
        raise DataShapeError("create_children: the frame's index has duplicate labels")


def _keys(frame: pd.DataFrame) -> dict[Any, str | None]:
    keys: dict[Any, str | None] = {}
    seen: dict[str, Any] = {}
    for pos, label in enumerate(frame.index):
        key = cell(frame, pos, "key")
        if key is not None and key in seen:
            raise DataShapeError(
                f"create_children: key {key!r} is used by rows {seen[key]!r} and {label!r}"
            )
        if key is not None:
            seen[key] = label
        keys[label] = key
    return keys


def _not_attempted(frame: pd.DataFrame, keys: dict[Any, Any]) -> pd.DataFrame:
    """:func:`create_children`' result before any row is attempted."""
    return pd.DataFrame(
        {
            "key": pd.array([keys[label] for label in frame.index], dtype="string"),
            "parent": pd.array([pd.NA] * len(frame), dtype="string"),
            "type": pd.array([cell(frame, p, "type") for p in range(len(frame))], dtype="string"),
            "name": pd.array([cell(frame, p, "name") for p in range(len(frame))], dtype="string"),
            "id": pd.array([pd.NA] * len(frame), dtype="string"),
            "ok": pd.array([False] * len(frame), dtype="boolean"),
            "status": pd.array(["not attempted"] * len(frame), dtype="string"),
            "error": pd.array([pd.NA] * len(frame), dtype="string"),
        },
        index=frame.index.copy(),
    )


def _create_row(
    api: Api,
    index: ChildIndex,
    frame: pd.DataFrame,
    pos: int,
    parent_id: Any,
    where: str,
    attribute_columns: list[Any],
) -> tuple[str, str]:
    """One row of :func:`create_children` under ``parent_id``: its status and its id."""
    row_type = cell(frame, pos, "type")
    row_name = cell(frame, pos, "name")
    if row_type is None or row_name is None:
        raise InvalidArgumentError(f"{where}: type and name must not be empty")
    attributes = {
        column: frame[column].iloc[pos]
        for column in attribute_columns
        if not is_missing_cell(frame[column].iloc[pos])
    }
    if parent_id is None:  # refused as create_child refuses it
        require_text(f"create_child(parent={parent_id!r})", parent_id=parent_id)
    assert parent_id is not None
    existing = index.existing(parent_id, row_type, row_name)
    if existing:
        return "exists", existing[0]
    return "created", _create_asking(api, index, parent_id, row_type, row_name, attributes)


@documented
def create_children(api: Api, frame: pd.DataFrame, *, progress: bool | None = None) -> pd.DataFrame:
    """Create many elements from a frame, parents before children.

    Parameters
    ----------
    {api}
    frame : pandas.DataFrame
        One row per new element. ``parent``: an existing element id, or the ``key`` of
        another row (which is then created first and its new id used); ``parent_key``
        (optional): always a row's key. ``type``, ``name``: required. ``key``
        (optional): a temporary key other rows may name as parent. Every other column
        is an attribute; missing (NA) attributes are omitted.
    progress : bool
        Show a progress bar.

    Returns
    -------
    pandas.DataFrame
        Indexed like ``frame``: ``key``, ``parent`` (the existing parent id used, once
        known), ``type``, ``name``, ``id`` (the new id, NA if not created), ``ok``,
        ``status`` (``created``, ``exists``, ``failed`` or ``not attempted``) and
        ``error``.

    Raises
    ------
    DataShapeError
        Before anything is created, if the frame is unusable (see
        :func:`creation_order`).

    Warns
    -----
    PartialFailureWarning
        When a row failed. Creation stops at the first failure: the rows created so far
        exist on the service (they cannot be rolled back), so the frame is returned,
        rather than an exception raised, to hand back their new ids; rows never
        attempted are marked so and can be sent again.

    Notes
    -----
    Never a duplicate: before a row is created, the tree of its parent's system
    (read once per system) is asked whether the parent already has an element of that
    type and name; if so the row is ``exists`` with that element's id and nothing is
    sent, so running the same frame again creates only what is missing. When a
    create's answer is lost (:class:`~mddframes.errors.AnswerLostError`), the tree is
    read again: one new matching element is the row's (``created``), none means the
    request did not act and it is sent again (:mod:`mddframes.elements.asking`).
    """
    from tqdm.auto import tqdm

    order = creation_order(frame)
    keys = _keys(frame)
    position = {label: pos for pos, label in enumerate(frame.index)}
    key_to_label = {k: label for label, k in keys.items() if k is not None}
    attribute_columns = [c for c in frame.columns if c not in _RESERVED]

    result = _not_attempted(frame, keys)
    new_ids: dict[Any, str] = {}
    index = ChildIndex(api)
    failed_label = None
    with tqdm(
        total=len(order), desc="create", disable=not progress_shown(progress), leave=False
    ) as bar:
        for label in order:
            pos = position[label]
            where = f"create_children: row {label!r}"
            try:
                parent_key = cell(frame, pos, "parent_key")
                parent = cell(frame, pos, "parent")
                ref = parent_key if parent_key is not None else parent
                # creation_order put the parent row first, so its new id is known
                parent_id = new_ids[key_to_label[ref]] if ref in key_to_label else ref
                result.loc[label, "parent"] = parent_id
                status, new_id = _create_row(api, index, frame, pos, parent_id, where,
                                             attribute_columns)  # fmt: skip
            except MddError as exc:
                result.loc[label, "status"] = "failed"
                result.loc[label, "error"] = str(exc)
                failed_label = label
                break
            new_ids[label] = new_id
            result.loc[label, ["id", "status"]] = [new_id, status]
            result.loc[label, "ok"] = True
            bar.update(1)

    if failed_label is not None:
        skipped = result["status"] == "not attempted"
        result.loc[skipped, "error"] = f"not attempted: stopped after row {failed_label!r} failed"
        issue_warning(
            f"create_children: row {failed_label!r} failed; {len(new_ids)} of {len(frame)} "
            f"elements were created, {int(skipped.sum())} not attempted (see the result's "
            "'status' and 'error' columns)",
            PartialFailureWarning,
        )
    return result
