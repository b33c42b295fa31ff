"""New elements, deployment packages and deployment.

- :func:`create_child` creates one element; :func:`create_children` creates many from a
  frame, parents before children, where a row may name a parent created by another row
  of the same frame through a temporary ``key``;
- :func:`add_to_package` adds elements to an open deployment package, checking first
  that it is open;
- :func:`deploy`, :func:`deploy_many` and :func:`confirm_deployed` mark elements as
  deployed.

Every bulk call returns a result frame with ``id``, ``ok`` and ``error`` columns, so a
partial failure is never hidden.
"""

from __future__ import annotations

import datetime as dt
import decimal
import graphlib
import heapq
import json
import logging
import math
import os
import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from mddframes.bulk import PartialFailureWarning, ProgressCallback, bulk_status_frame
from mddframes.errors import (
    ConflictError,
    DataShapeError,
    InvalidArgumentError,
    MddError,
    PackageClosedError,
)
from mddframes.ids import id_list

if TYPE_CHECKING:
    from mddframes.api import Api

__all__ = [
    "PartialFailureWarning",
    "add_to_package",
    "confirm_deployed",
    "create_child",
    "create_children",
    "creation_order",
    "deploy",
    "deploy_many",
    "element_series",
]

log = logging.getLogger(__name__)

_RESERVED = ("key", "parent", "parent_key", "type", "name")
_ENVELOPE_KEYS = ("content", "items", "data", "results", "packages", "deploymentPackages")


# --------------------------------------------------------------------------- helpers


def _json_value(value: Any, where: str) -> Any:
    """A cell as a JSON-native value (numpy and pandas scalars unwrapped)."""
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, pd.Timestamp | dt.datetime | dt.date):
        return value.isoformat()
    if isinstance(value, decimal.Decimal):
        return str(value)
    if isinstance(value, float) and not math.isfinite(value):
        raise InvalidArgumentError(f"{where}: {value!r} cannot be sent as JSON")
    if isinstance(value, np.ndarray):
        return [_json_value(v, where) for v in value.tolist()]
    return value


def _is_missing(value: Any) -> bool:
    if value is None:
        return True
    if isinstance(value, list | tuple | dict | np.ndarray):
        return False
    try:
        return bool(pd.isna(value))
    except (TypeError, ValueError):
        return False


def element_series(element: Any) -> pd.Series:
    """An element answer as a Series: its fields, with ``attributes`` spread as
    ``attributes.<name>`` entries (unknown fields are kept)."""
    if not isinstance(element, Mapping):
        raise DataShapeError(f"expected an element object, got {type(element).__name__}")
    flat: dict[str, Any] = {}
    for key, value in element.items():
        if key == "attributes" and isinstance(value, Mapping):
            for name, attr in value.items():
                flat[f"attributes.{name}"] = attr
        else:
            flat[key] = value
    series = pd.Series(flat, dtype=object)
    series.name = element.get("id")
    return series


def _element_id(element: Any, where: str) -> str:
    if isinstance(element, Mapping):
        for key in ("id", "structureId", "structure_id"):
            if element.get(key) is not None:
                return str(element[key])
    raise DataShapeError(f"{where}: the service's answer carries no element id: {element!r:.200}")


# --------------------------------------------------------------------------- create


def create_child(
    api: Api, parent_id: Any, type: str, name: str, **attributes: Any
) -> pd.Series:
    """Create one element as a child of another.

    Parameters
    ----------
    api : Api
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
    """
    where = f"create_child(parent={parent_id!r})"
    for label, value in (("parent_id", parent_id), ("type", type), ("name", name)):
        if _is_missing(value) or not str(value).strip():
            raise InvalidArgumentError(f"{where}: {label} is empty")
    body: dict[str, Any] = {"name": str(name)}
    for key, value in attributes.items():
        if key == "name":
            continue
        if not _is_missing(value):
            body[key] = _json_value(value, f"{where}, attribute {key!r}")
    answer = api.create_child_structure(str(parent_id), str(type), body)
    return element_series(answer)


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
        parent_key = _cell(frame, pos, "parent_key")
        parent = _cell(frame, pos, "parent")
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


def _cell(frame: pd.DataFrame, pos: int, column: str) -> str | None:
    if column not in frame.columns:
        return None
    value = frame[column].iloc[pos]
    if _is_missing(value):
        return None
    if isinstance(value, np.generic):
        value = value.item()
    text = str(value).strip()
    return text or None


def _keys(frame: pd.DataFrame) -> dict[Any, str | None]:
    keys: dict[Any, str | None] = {}
    seen: dict[str, Any] = {}
    for pos, label in enumerate(frame.index):
        key = _cell(frame, pos, "key")
        if key is not None and key in seen:
            raise DataShapeError(
                f"create_children: key {key!r} is used by rows {seen[key]!r} and {label!r}"
            )
        if key is not None:
            seen[key] = label
        keys[label] = key
    return keys


def create_children(api: Api, frame: pd.DataFrame, *, progress: bool = True) -> pd.DataFrame:
    """Create many elements from a frame, parents before children.

    Parameters
    ----------
    api : Api
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
        ``status`` (``created``, ``failed`` or ``not attempted``) and ``error``.

    Warns
    -----
    PartialFailureWarning
        When a row failed. Creation stops at the first failure: the rows created so far
        exist on the service (they cannot be rolled back), so the frame is returned,
        rather than an exception raised, to hand back their new ids; rows never
        attempted are marked so and can be sent again.

    Raises
    ------
    DataShapeError
        Before anything is created, if the frame is unusable (see
        :func:`creation_order`).
    """
    from tqdm.auto import tqdm

    order = creation_order(frame)
    keys = _keys(frame)
    position = {label: pos for pos, label in enumerate(frame.index)}
    key_to_label = {k: label for label, k in keys.items() if k is not None}
    attribute_columns = [c for c in frame.columns if c not in _RESERVED]

    result = pd.DataFrame(
        {
            "key": pd.array([keys[label] for label in frame.index], dtype="string"),
            "parent": pd.array([pd.NA] * len(frame), dtype="string"),
            "type": pd.array([_cell(frame, p, "type") for p in range(len(frame))], dtype="string"),
            "name": pd.array([_cell(frame, p, "name") for p in range(len(frame))], dtype="string"),
            "id": pd.array([pd.NA] * len(frame), dtype="string"),
            "ok": pd.array([False] * len(frame), dtype="boolean"),
            "status": pd.array(["not attempted"] * len(frame), dtype="string"),
            "error": pd.array([pd.NA] * len(frame), dtype="string"),
        },
        index=frame.index.copy(),
    )
    new_ids: dict[Any, str] = {}
    failed_label = None
    with tqdm(total=len(order), desc="create", disable=not progress, leave=False) as bar:
        for label in order:
            pos = position[label]
            where = f"create_children: row {label!r}"
            try:
                parent_key = _cell(frame, pos, "parent_key")
                parent = _cell(frame, pos, "parent")
                ref = parent_key if parent_key is not None else parent
                # creation_order put the parent row first, so its new id is known
                parent_id = new_ids[key_to_label[ref]] if ref in key_to_label else ref
                result.loc[label, "parent"] = parent_id
                row_type = _cell(frame, pos, "type")
                row_name = _cell(frame, pos, "name")
                if row_type is None or row_name is None:
                    raise InvalidArgumentError(f"{where}: type and name must not be empty")
                attributes = {
                    column: frame[column].iloc[pos]
                    for column in attribute_columns
                    if not _is_missing(frame[column].iloc[pos])
                }
                element = create_child(api, parent_id, row_type, row_name, **attributes)
                new_id = _element_id(element.to_dict(), where)
            except MddError as exc:
                result.loc[label, "status"] = "failed"
                result.loc[label, "error"] = str(exc)
                failed_label = label
                break
            new_ids[label] = new_id
            result.loc[label, ["id", "status"]] = [new_id, "created"]
            result.loc[label, "ok"] = True
            bar.update(1)

    if failed_label is not None:
        skipped = result["status"] == "not attempted"
        result.loc[skipped, "error"] = f"not attempted: stopped after row {failed_label!r} failed"
        warnings.warn(
            f"create_children: row {failed_label!r} failed; {len(new_ids)} of {len(frame)} "
            f"elements were created, {int(skipped.sum())} not attempted (see the result's "
            "'status' and 'error' columns)",
            PartialFailureWarning,
            stacklevel=2,
        )
    return result


# --------------------------------------------------------------------------- packages


def _as_list(answer: Any, what: str) -> list[Any]:
    if isinstance(answer, list):
        return answer
    if isinstance(answer, Mapping):
        for key in _ENVELOPE_KEYS:
            if isinstance(answer.get(key), list):
                return answer[key]
    raise DataShapeError(f"{what}: expected a list, got {type(answer).__name__}")


def _package_name(entry: Mapping[str, Any]) -> str | None:
    for key in ("name", "dpName", "packageName", "package_name"):
        if entry.get(key) is not None:
            return str(entry[key])
    return None


def _find_open_package(api: Api, system: str, package: str) -> Mapping[str, Any]:
    listed = _as_list(api.list_deployment_packages(system), f"packages of system {system!r}")
    names = []
    for entry in listed:
        if not isinstance(entry, Mapping):
            continue
        name = _package_name(entry)
        names.append(name)
        if name == package:
            status = str(entry.get("status", "OPEN")).upper()
            if status != "OPEN":
                raise PackageClosedError(
                    f"deployment package {package!r} of system {system!r} is {status}, not "
                    "open: elements cannot be added to it"
                )
            return entry
    raise PackageClosedError(
        f"deployment package {package!r} of system {system!r} is not open: it is closed "
        f"or does not exist (open packages: {', '.join(sorted(map(str, names))) or 'none'})"
    )


def _structure_ids(entry: Mapping[str, Any]) -> set[str] | None:
    for key in ("structureIds", "structure_ids", "structures", "elements"):
        value = entry.get(key)
        if isinstance(value, list):
            out = set()
            for item in value:
                if isinstance(item, Mapping):
                    item = item.get("id", item.get("structureId"))
                if item is not None:
                    out.add(str(item))
            return out
    return None


def add_to_package(api: Api, system: str, package: str, ids: Any) -> pd.DataFrame:
    """Add elements to an open deployment package.

    Parameters
    ----------
    api : Api
    system : str
        The system that owns the package.
    package : str
        The package name.
    ids : list, Series or DataFrame
        The elements; a frame needs an ``id`` (or ``structure_id``) column. Duplicates
        are sent once.

    Returns
    -------
    pandas.DataFrame
        One row per distinct id: ``id``, ``ok`` (the id is in the package afterwards),
        ``error`` and ``already_in_package``.

    Raises
    ------
    PackageClosedError
        The package is not listed as open (checked before anything is sent), or the
        service refused the addition with 409.
    NotFoundError
        An id is not an element of the system; the service then adds none of them.
    """
    for label, value in (("system", system), ("package", package)):
        if _is_missing(value) or not str(value).strip():
            raise InvalidArgumentError(f"add_to_package: {label} is empty")
    wanted = id_list(ids, what="add_to_package ids")
    if not wanted:
        raise InvalidArgumentError("add_to_package: no element ids given")
    before = _structure_ids(_find_open_package(api, system, package))
    try:
        api.add_to_deployment_package(system, package, wanted)
    except PackageClosedError:
        raise
    except ConflictError as exc:
        raise PackageClosedError(
            f"deployment package {package!r} of system {system!r} refused the addition "
            "(409): it was closed or is not open",
            operation=exc.operation,
            method=exc.method,
            url=exc.url,
            status=exc.status,
            server_message=exc.server_message,
        ) from exc
    after = _structure_ids(_find_open_package(api, system, package))
    ok = [True if after is None else i in after for i in wanted]
    return pd.DataFrame(
        {
            "id": pd.array(wanted, dtype="string"),
            "ok": pd.array(ok, dtype="boolean"),
            "error": pd.array(
                [None if good else "not in the package after the addition" for good in ok],
                dtype="string",
            ),
            "already_in_package": pd.array(
                [pd.NA if before is None else i in before for i in wanted], dtype="boolean"
            ),
        }
    )


# --------------------------------------------------------------------------- deployment


def deploy(api: Api, structure_id: Any, deployment_id: Any) -> pd.Series:
    """Mark one element as deployed.

    Parameters
    ----------
    api : Api
    structure_id : str
    deployment_id : str

    Returns
    -------
    pandas.Series
        The element as the service answered (empty if it answered nothing).
    """
    for label, value in (("structure_id", structure_id), ("deployment_id", deployment_id)):
        if _is_missing(value) or not str(value).strip():
            raise InvalidArgumentError(f"deploy: {label} is empty")
    answer = api.deploy_structure(str(structure_id), str(deployment_id))
    if isinstance(answer, Mapping):
        return element_series(answer)
    return pd.Series({"id": str(structure_id), "deploymentId": str(deployment_id)}, dtype=object)


def deploy_many(
    api: Api,
    items: Any,
    deployment_id: Any = None,
    *,
    max_workers: int | None = None,
    progress: bool = True,
    on_progress: ProgressCallback | None = None,
) -> pd.DataFrame:
    """Mark many elements as deployed, concurrently.

    Parameters
    ----------
    api : Api
    items : DataFrame, list or Series
        A frame with an ``id`` column and a ``deployment_id`` (or ``deploymentId``)
        column, or ids with ``deployment_id`` given for all.
    deployment_id : str, optional
        The deployment of every id (overrides no frame column: give one or the other).
    max_workers : int, optional
    progress : bool
    on_progress : callable, optional
        Called as ``on_progress(done, total)`` after each element (see :func:`run_bulk`).

    Returns
    -------
    pandas.DataFrame
        ``id``, ``deployment_id``, ``ok``, ``error`` per pair; a failure is a row with
        ``ok`` False, never an exception.
    """
    pairs: list[tuple[str, str]] = []
    if isinstance(items, pd.DataFrame):
        column = next((c for c in ("deployment_id", "deploymentId") if c in items.columns), None)
        if (column is None) == (deployment_id is None):
            raise InvalidArgumentError(
                "deploy_many: give the deployment either as a 'deployment_id' column or as "
                "the deployment_id argument (exactly one of them)"
            )
        id_column = next(
            (c for c in ("id", "structure_id", "structureId") if c in items.columns), None
        )
        if id_column is None:
            raise DataShapeError(
                f"deploy_many: the frame has no id column (columns: {list(items.columns)})"
            )
        for pos in range(len(items)):
            sid = _cell(items, pos, id_column)
            did = _cell(items, pos, column) if column else str(deployment_id)
            if sid is None or did is None:
                raise InvalidArgumentError(
                    f"deploy_many: row {items.index[pos]!r} has an empty id or deployment id"
                )
            pairs.append((sid, did))
    else:
        if deployment_id is None or not str(deployment_id).strip():
            raise InvalidArgumentError("deploy_many: deployment_id is required with a list of ids")
        pairs = [(sid, str(deployment_id)) for sid in id_list(items, what="deploy_many ids")]
    pairs = list(dict.fromkeys(pairs))

    def one(pair: tuple[str, str]) -> dict[str, Any]:
        deploy(api, *pair)
        return {}

    result = bulk_status_frame(
        one,
        pairs,
        max_workers=api.max_workers if max_workers is None else max_workers,
        progress=progress,
        desc="deploy",
        label=lambda pair: f"{pair[0]} (deployment {pair[1]})",
        on_progress=on_progress,
    )
    return pd.DataFrame(
        {
            "id": pd.array([sid for sid, _ in pairs], dtype="string"),
            "deployment_id": pd.array([did for _, did in pairs], dtype="string"),
            "ok": result["ok"].to_numpy(),
            "error": result["error"].to_numpy(),
        }
    ).astype({"ok": "boolean", "error": "string"})


def _read_info(info: Any) -> dict[str, Any]:
    """The deployment info document, parsed and checked."""
    source = "the deployment info"
    if isinstance(info, bytes):
        text = info.decode("utf-8")
    elif isinstance(info, str | os.PathLike) and not (
        isinstance(info, str) and info.lstrip().startswith("{")
    ):
        path = Path(info)
        source = f"deployment info file {str(path)!r}"
        if not path.is_file():
            raise InvalidArgumentError(f"{source} does not exist")
        text = path.read_text(encoding="utf-8")
    elif isinstance(info, str):
        text = info
    elif isinstance(info, Mapping):
        text = None
        document = dict(info)
    else:
        raise InvalidArgumentError(
            f"confirm_deployed: info must be a path, a dict or bytes, not {type(info).__name__}"
        )
    if text is not None:
        try:
            document = json.loads(text)
        except json.JSONDecodeError as exc:
            raise DataShapeError(f"{source} is not JSON: {exc}") from None
    if not isinstance(document, dict):
        raise DataShapeError(f"{source} is not a JSON object")
    structures = document.get("structures")
    if not isinstance(structures, list) or not structures:
        raise DataShapeError(f"{source} has no 'structures' list (keys: {sorted(document)})")
    for pos, item in enumerate(structures):
        if not isinstance(item, Mapping) or item.get("id") is None:
            raise DataShapeError(f"{source}: structures[{pos}] has no 'id'")
    return document


def confirm_deployed(api: Api, info: Any) -> pd.DataFrame:
    """Mark the elements of a deployment info file as deployed.

    Parameters
    ----------
    api : Api
    info : path, dict, str or bytes
        The deployment info file made by the service's "push to git" action (a path to
        it, or its content): ``{"deploymentId", "systemName", "commit",
        "structures": [{"id", "version"}]}``.

    Returns
    -------
    pandas.DataFrame
        One row per structure of the file: ``id``, ``version``, ``deployment_id``,
        ``ok`` and ``error``. ``ok`` says the element is now deployed: read from the
        elements the service answers with, or, when it answers without them, from
        re-reading each element.

    Raises
    ------
    DataShapeError
        The file is not a deployment info document (checked before sending).
    MddError
        The service refused the confirmation (it confirms the file as a whole).
    """
    document = _read_info(info)
    answer = api.confirm_structure_deployment(document)
    structures = document["structures"]
    ids = [str(s["id"]) for s in structures]
    answered: dict[str, Any] = {}
    if isinstance(answer, list | Mapping):
        try:
            for item in _as_list(answer, "confirmStructureDeployment answer"):
                if isinstance(item, Mapping) and item.get("id") is not None:
                    answered[str(item["id"])] = item
        except DataShapeError:
            answered = {}
    missing = [i for i in ids if i not in answered]
    if missing:
        # the answer does not show them: read them back rather than assume success
        reread = bulk_status_frame(
            lambda sid: api.get_structure(sid),
            missing,
            max_workers=api.max_workers,
            progress=False,
            desc="verify",
        )
        for sid, good, value in zip(reread["id"], reread["ok"], reread["value"], strict=True):
            if good and isinstance(value, Mapping):
                answered[sid] = value
    wanted = document.get("deploymentId")
    ok: list[bool] = []
    errors: list[str | None] = []
    for sid in ids:
        element = answered.get(sid)
        if element is None:
            ok.append(False)
            errors.append("could not be read back after the confirmation")
        elif element.get("deployed") is False:
            ok.append(False)
            errors.append("still not deployed after the confirmation")
        elif wanted is not None and element.get("deploymentId") not in (None, wanted):
            ok.append(False)
            errors.append(f"deployed under {element.get('deploymentId')!r}, not {wanted!r}")
        else:
            ok.append(True)
            errors.append(None)
    return pd.DataFrame(
        {
            "id": pd.array(ids, dtype="string"),
            "version": pd.array(
                [
                    s.get("version")
                    if isinstance(s.get("version"), int) and not isinstance(s.get("version"), bool)
                    else None
                    for s in structures
                ],
                dtype="Int64",
            ),
            "deployment_id": pd.array([wanted] * len(ids), dtype="string"),
            "ok": pd.array(ok, dtype="boolean"),
            "error": pd.array(errors, dtype="string"),
        }
    )
