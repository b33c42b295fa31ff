"""Deployment packages: add elements to an open one, checking first that it is open."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import pandas as pd

from mddframes.doc_sections import documented
from mddframes.elements.records import as_list, require_text
from mddframes.elements.settling import Acted, settle_lost
from mddframes.errors import (
    AnswerLostError,
    ConflictError,
    InvalidArgumentError,
    NotFoundError,
    PackageClosedError,
)
from mddframes.ids import Ids, id_list
from mddframes.wire.profile import PACKAGE_IDS_KEYS

if TYPE_CHECKING:
    from mddframes.api import Api


def _package_name(entry: Mapping[str, Any]) -> str | None:
    for key in ("name", "dpName", "packageName", "package_name"):
        if entry.get(key) is not None:
            return str(entry[key])
    return None


def _find_open_package(api: Api, system: str, package: str) -> Mapping[str, Any]:
    listed = as_list(api.list_deployment_packages(system), f"packages of system {system!r}")
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
    for key in PACKAGE_IDS_KEYS:
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


def _send(api: Api, system: str, package: str, ids: list[str]) -> None:
    """Add ``ids``; after a lost answer ask the package listing before sending again.

    An answer lost after the service acted (:class:`AnswerLostError`) is settled by
    the listing: the ids it holds are added, the others are sent again (only those;
    :mod:`mddframes.elements.settling`).
    """
    missing = list(ids)

    def ask(exc: AnswerLostError) -> Acted[None] | None:
        held = _structure_ids(_find_open_package(api, system, package))
        if held is None:
            raise AnswerLostError(
                f"{exc.message}. The package listing does not name its elements, so "
                "whether they were added cannot be told",
                **exc.request_details(),
            ) from exc
        missing[:] = [i for i in missing if i not in held]
        return None if missing else Acted(None)  # all in the package: it acted

    settle_lost(
        lambda: _send_once(api, system, package, missing),
        ask,
        not_done=lambda: f"{len(missing)} id(s) not in package {package!r}",
    )


def _send_once(api: Api, system: str, package: str, ids: list[str]) -> None:
    try:
        api.add_to_deployment_package(system, package, ids)
    except PackageClosedError:
        raise
    except ConflictError as exc:
        raise PackageClosedError(
            f"deployment package {package!r} of system {system!r} refused the addition "
            "(409): it was closed or is not open",
            **exc.request_details(),
        ) from exc


def _tree_ids(api: Api, system: str) -> set[str]:
    """The element ids of ``system`` (to tell which ids a 404 was about)."""
    found: set[str] = set()
    pending: list[Any] = [api.get_tree(system)]
    while pending:  # nested trees (children lists) too, whatever the dialect
        item = pending.pop()
        if isinstance(item, Mapping):
            if item.get("id") is not None:
                found.add(str(item["id"]))
            pending.extend(v for v in item.values() if isinstance(v, list | Mapping))
        elif isinstance(item, list):
            pending.extend(item)
    return found


@documented
def add_to_package(api: Api, system: str, package: str, ids: Ids) -> pd.DataFrame:
    """Add elements to an open deployment package.

    Parameters
    ----------
    {api}
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
        ``error`` and ``already_in_package``. An id that is not an element of the system
        is a row with ``ok`` False: the service takes a list all or none (one unknown id,
        404, adds nothing), so on a 404 the system's tree is read and the known ids are
        added in a second call.

    Raises
    ------
    PackageClosedError
        The package is not listed as open (checked before anything is sent), or the
        service refused the addition with 409.
    NotFoundError
        The service answered 404 although every id is in the system's tree.

    Examples
    --------
    >>> client.add_to_package("DWH", "release-2024.07", ["dwh-0064", "dwh-0067"])
             id    ok error  already_in_package
    0  dwh-0064  True  <NA>               False
    1  dwh-0067  True  <NA>               False
    """
    require_text("add_to_package", system=system, package=package)
    wanted = id_list(ids, what="add_to_package ids")
    if not wanted:
        raise InvalidArgumentError("add_to_package: no element ids given")
    before = _structure_ids(_find_open_package(api, system, package))
    unknown: set[str] = set()
    try:
        _send(api, system, package, wanted)
    except NotFoundError:
        unknown = set(wanted) - _tree_ids(api, system)
        known = [i for i in wanted if i not in unknown]
        if not unknown:
            raise
        if known:
            _send(api, system, package, known)
    after = _structure_ids(_find_open_package(api, system, package))
    ok = [i not in unknown and (after is None or i in after) for i in wanted]
    errors = [
        f"not an element of system {system!r}"
        if i in unknown
        else None
        if good
        else "not in the package after the addition"
        for i, good in zip(wanted, ok, strict=True)
    ]
    return pd.DataFrame(
        {
            "id": pd.array(wanted, dtype="string"),
            "ok": pd.array(ok, dtype="boolean"),
            "error": pd.array(errors, dtype="string"),
            "already_in_package": pd.array(
                [pd.NA if before is None else i in before for i in wanted], dtype="boolean"
            ),
        }
    )
