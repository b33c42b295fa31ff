"""Deployment: mark one or many elements as deployed, or confirm a deployment info file."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from mddframes.bulk import ProgressCallback, bulk_status_frame, resolve_workers
from mddframes.codec.values import JsonObject, JsonValue
from mddframes.doc_sections import documented
from mddframes.elements.records import as_list, cell, element_series, require_text
from mddframes.elements.settling import Acted, deployed_under, settle_lost
from mddframes.errors import (
    AnswerLostError,
    DataShapeError,
    InvalidArgumentError,
    MddError,
    NotFoundError,
)
from mddframes.ids import Ids, id_list

if TYPE_CHECKING:
    from mddframes.api import Api


@documented
def deploy(api: Api, structure_id: str, deployment_id: str) -> pd.Series:
    """Mark one element as deployed.

    Parameters
    ----------
    {api}
    structure_id : str
    deployment_id : str

    Returns
    -------
    pandas.Series
        The element as the service answered (empty if it answered nothing), or, when
        the answer was lost, as the service shows it.

    Raises
    ------
    AnswerLostError
        The answer was lost and the element could not be read, or does not say whether
        it is deployed under ``deployment_id``; or every attempt lost its answer.

    Notes
    -----
    After a lost answer (:class:`~mddframes.errors.AnswerLostError`) the element is
    read: deployed under ``deployment_id``, the deploy acted and the element is
    returned; not deployed (or under another deployment), it did not act and is sent
    again (:mod:`mddframes.elements.settling`).
    """
    require_text("deploy", structure_id=structure_id, deployment_id=deployment_id)
    sid, did = str(structure_id), str(deployment_id)
    where = f"deploy of element {sid!r} (deployment {did!r})"

    def ask(exc: AnswerLostError) -> Acted[JsonValue] | None:
        element = _read_after_loss(api, sid, exc, where)
        shown = deployed_under(element, did)
        if shown is None:
            raise AnswerLostError(
                f"{where}: {exc.message}. The element as read does not say under which "
                "deployment it is deployed, so whether this request acted cannot be told",
                **exc.request_details(),
            ) from exc
        return Acted(element) if shown else None

    answer = settle_lost(
        lambda: api.deploy_structure(sid, did),
        ask,
        not_done=lambda: f"element {sid!r} not deployed under {did!r}",
    )
    if isinstance(answer, Mapping):
        return element_series(answer)
    return pd.Series({"id": sid, "deploymentId": did}, dtype=object)


def _read_after_loss(api: Api, sid: str, exc: AnswerLostError, where: str) -> JsonValue:
    """The element ``sid`` as the service shows it now, read to settle ``exc``."""
    try:
        return api.get_structure(sid)
    except MddError as failed:
        raise AnswerLostError(
            f"{where}: {exc.message}. Reading element {sid!r} to see whether it acted "
            f"failed too ({type(failed).__name__}: {failed.message})",
            **exc.request_details(),
        ) from exc


@documented
def deploy_many(
    api: Api,
    items: Ids,
    deployment_id: str | None = None,
    *,
    max_workers: int | None = None,
    progress: bool | None = None,
    on_progress: ProgressCallback | None = None,
) -> pd.DataFrame:
    """Mark many elements as deployed, concurrently.

    Parameters
    ----------
    {api}
    items : DataFrame, list or Series
        A frame with an ``id`` column and a ``deployment_id`` (or ``deploymentId``)
        column, or ids with ``deployment_id`` given for all.
    deployment_id : str, optional
        The deployment of every id (overrides no frame column: give one or the other).
    {max_workers}
    {progress}
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
            sid = cell(items, pos, id_column)
            did = cell(items, pos, column) if column else str(deployment_id)
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
        max_workers=resolve_workers(max_workers, api.max_workers),
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


def _unknown_ids(api: Api, ids: list[str]) -> set[str]:
    """The ids the service answers 404 for (each read once, concurrently)."""

    def known(sid: str) -> bool:
        try:
            api.get_structure(sid)
        except NotFoundError:
            return False
        return True

    read = bulk_status_frame(known, ids, max_workers=api.max_workers, progress=False, desc="check")
    return {
        str(sid) for sid, value in zip(read["id"], read["value"], strict=True) if value is False
    }


def _confirm_settled(api: Api, document: dict[str, Any]) -> JsonValue:
    """Send the confirmation; after a lost answer read its elements and send again only
    the ones that do not show the deployment (the service confirms a file all or none).

    Returns the service's answer, or the elements read when they show that it acted.
    """
    wanted = document.get("deploymentId")
    wanted = None if wanted is None else str(wanted)
    pending: list[Any] = list(document["structures"])
    shown: list[JsonValue] = []

    def send() -> JsonValue:
        answer = api.confirm_structure_deployment({**document, "structures": pending})
        if shown and isinstance(answer, list):
            return [*shown, *answer]  # the elements settled earlier, and the rest
        return answer

    def ask(exc: AnswerLostError) -> Acted[JsonValue] | None:
        ids = [str(s["id"]) for s in pending]
        where = f"confirmation of deployment {wanted!r}"
        read = bulk_status_frame(api.get_structure, ids, max_workers=api.max_workers,
                                 progress=False, desc="settle")  # fmt: skip
        left: list[Any] = []
        for structure, sid, good, value in zip(
            pending, read["id"], read["ok"], read["value"], strict=True
        ):
            state = deployed_under(value, wanted) if good else None
            if state is None:
                why = "could not be read" if not good else "does not say whether it is deployed"
                raise AnswerLostError(
                    f"{where}: {exc.message}. Element {sid!r} {why}, so whether the "
                    "confirmation acted cannot be told",
                    **exc.request_details(),
                ) from exc
            if state:
                shown.append(value)
            else:
                left.append(structure)
        pending[:] = left
        return None if left else Acted(list(shown))

    return settle_lost(
        send,
        ask,
        not_done=lambda: f"{len(pending)} element(s) not deployed under {wanted!r}",
    )


def _confirmed_elements(api: Api, answer: Any, ids: list[str], unknown: set[str]) -> dict[str, Any]:
    """Each known id's element as the confirmation answered it, else as read back."""
    answered: dict[str, Any] = {}
    if isinstance(answer, list | Mapping):
        try:
            for item in as_list(answer, "confirmStructureDeployment answer"):
                if isinstance(item, Mapping) and item.get("id") is not None:
                    answered[str(item["id"])] = item
        except DataShapeError:
            answered = {}
    missing = [i for i in ids if i not in answered and i not in unknown]
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
    return answered


def _not_confirmed(element: Any, unknown: bool, wanted: Any) -> str | None:
    """Why an element of the file is not confirmed (None: it is)."""
    if unknown:
        return "not found on the service (the file's other elements were confirmed)"
    if element is None:
        return "could not be read back after the confirmation"
    if element.get("deployed") is False:
        return "still not deployed after the confirmation"
    if wanted is not None and element.get("deploymentId") not in (None, wanted):
        return f"deployed under {element.get('deploymentId')!r}, not {wanted!r}"
    return None


@documented
def confirm_deployed(api: Api, info: str | os.PathLike[str] | JsonObject | bytes) -> pd.DataFrame:
    """Mark the elements of a deployment info file as deployed.

    Parameters
    ----------
    {api}
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
    NotFoundError
        The service answered 404 although it knows every element of the file.
    MddError
        The service refused the confirmation otherwise.

    Notes
    -----
    The service confirms a file all or none: one unknown element (404) confirms nothing.
    On a 404 each element is read; the unknown ones become rows with ``ok`` False and
    the file's other elements are confirmed in a second call.

    After a lost answer (:class:`~mddframes.errors.AnswerLostError`) the file's elements
    are read: those deployed under the file's deployment were confirmed; the rest are
    sent again (:mod:`mddframes.elements.settling`).
    """
    document = _read_info(info)
    structures = document["structures"]
    ids = [str(s["id"]) for s in structures]
    unknown: set[str] = set()
    try:
        answer = _confirm_settled(api, document)
    except NotFoundError:
        # the service confirms a file all or none: find the ids it does not know and
        # confirm the rest, so each id gets its own outcome (as deploy_many gives)
        unknown = _unknown_ids(api, ids)
        if not unknown:
            raise
        rest = [s for s in structures if str(s["id"]) not in unknown]
        answer = _confirm_settled(api, {**document, "structures": rest}) if rest else []
    answered = _confirmed_elements(api, answer, ids, unknown)
    wanted = document.get("deploymentId")
    errors = [_not_confirmed(answered.get(sid), sid in unknown, wanted) for sid in ids]
    ok = [error is None for error in errors]
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
