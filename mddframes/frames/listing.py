"""Object types, deployment packages and raw data as frames."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pandas as pd

from mddframes.codec.dtypes import in_time_unit
from mddframes.codec.values import JsonValue, json_type
from mddframes.doc_sections import documented
from mddframes.errors import InvalidArgumentError
from mddframes.frames.backends import (
    DtypeBackend,
    backend_documented,
    check_dtype_backend,
    to_backend,
)
from mddframes.frames.record_frames import frame_from_objects
from mddframes.frames.shaping import leaf_rows, unwrap_list

if TYPE_CHECKING:
    from mddframes.api import Api

#: Leading columns of :func:`read_object_types`.
OBJECT_TYPE_COLUMNS: tuple[str, ...] = (
    "id",
    "name",
    "description",
    "file_extension",
    "element_types",
)

#: Leading columns of :func:`read_packages`.
PACKAGE_COLUMNS: tuple[str, ...] = (
    "name",
    "description",
    "status",
    "created_at",
    "structure_ids",
    "n_structures",
)


@backend_documented
def read_object_types(api: Api, *, dtype_backend: DtypeBackend = "numpy_nullable") -> pd.DataFrame:
    """Read every object type (the output-template selections) as a frame.

    Parameters
    ----------
    {api}
    {dtype_backend}

    Returns
    -------
    pandas.DataFrame
        One row per object type: ``id``, ``name``, ``description``,
        ``file_extension`` (``string``), ``element_types`` (a list per row: the
        element types it renders; empty means all; ``list<string>`` under
        ``pyarrow``), then any other field the service sends, in snake_case.
    """
    check_dtype_backend(dtype_backend)
    frame = to_backend(object_types_frame(api.get_object_types()), dtype_backend, consume=True)
    return _id_lists(frame, "element_types", dtype_backend)


def object_types_frame(payload: Any) -> pd.DataFrame:
    """The frame of a decoded ``getObjectTypes`` answer (see :func:`read_object_types`)."""
    records = unwrap_list(payload, what="object types")
    frame = frame_from_objects(records, what="object types")
    frame = _with_columns(frame, OBJECT_TYPE_COLUMNS, lists=("element_types",))
    return _leading(frame, OBJECT_TYPE_COLUMNS)


@backend_documented
def read_packages(
    api: Api, system: str, *, dtype_backend: DtypeBackend = "numpy_nullable"
) -> pd.DataFrame:
    """Read the open deployment packages of a system as a frame.

    Parameters
    ----------
    {api}
    system : str
        The system name.
    {dtype_backend}

    Returns
    -------
    pandas.DataFrame
        One row per package: ``name``, ``description``, ``status`` (``string``),
        ``created_at`` (UTC datetime when every value parses, else as sent),
        ``structure_ids`` (a list of element ids per row; ``list<string>`` under
        ``pyarrow``), ``n_structures``
        (``Int64``), then any other field the service sends, in snake_case.
    """
    if not isinstance(system, str) or not system:
        raise InvalidArgumentError(f"system must be a non-empty string, got {system!r}")
    check_dtype_backend(dtype_backend)
    frame = packages_frame(
        api.list_deployment_packages(system), what=f"packages of system {system!r}"
    )
    frame = to_backend(frame, dtype_backend, consume=True)
    return _id_lists(frame, "structure_ids", dtype_backend)


def _id_lists(frame: pd.DataFrame, name: str, dtype_backend: DtypeBackend) -> pd.DataFrame:
    """Under ``pyarrow``, a listing's list field as ``list<string>`` (the field is a list
    of names or ids, empty or not); ``object`` when a value is not a list of strings."""
    if dtype_backend != "pyarrow":
        return frame
    import pyarrow as pa

    values = frame[name].tolist()
    if all(v is None or (type(v) is list and all(type(x) is str for x in v)) for v in values):
        arrow = pa.array(values, type=pa.list_(pa.string()))
        frame[name] = pd.Series(pd.arrays.ArrowExtensionArray(arrow), index=frame.index)
    return frame


def packages_frame(payload: Any, *, what: str = "packages") -> pd.DataFrame:
    """The frame of a decoded package listing (see :func:`read_packages`)."""
    records = unwrap_list(payload, what=what)
    frame = frame_from_objects(records, what=what)
    frame = _with_columns(frame, PACKAGE_COLUMNS[:-1], lists=("structure_ids",))
    frame["n_structures"] = pd.array(
        [len(ids) if isinstance(ids, list) else pd.NA for ids in frame["structure_ids"]],
        dtype="Int64",
    )
    if frame["created_at"].dtype == "string":
        try:
            parsed = pd.to_datetime(frame["created_at"], utc=True, format="ISO8601")
            frame["created_at"] = in_time_unit(parsed)
        except (ValueError, TypeError):
            pass  # not ISO timestamps: kept exactly as sent
    return _leading(frame, PACKAGE_COLUMNS)


@documented
def read_raw_data(api: Api, structure_id: str, *, flatten: bool = False) -> JsonValue:
    """Read the data the service feeds to a template for one element.

    Parameters
    ----------
    {api}
    structure_id : str
        The element id.
    flatten : bool, default False
        ``False``: return the decoded JSON as it is. ``True``: return a long frame
        with one row per leaf (see :func:`raw_data_frame`), which reads better than
        a one-row ``json_normalize`` for raw data full of nested lists (columns,
        mappings).

    Returns
    -------
    Any or pandas.DataFrame
    """
    payload = api.get_raw_data(structure_id)
    return raw_data_frame(payload) if flatten else payload


def raw_data_frame(payload: Any) -> pd.DataFrame:
    """Every leaf of a JSON document as a row: ``path``, ``value``, ``type``.

    ``path`` joins object keys with ``.`` and list positions as ``[i]``
    (``"table.columns[0].name"``); ``value`` is the leaf exactly as decoded
    (``object`` dtype: ints stay ints, an empty list or object stays itself);
    ``type`` is its JSON type (``string``, ``integer``, ``number``, ``boolean``,
    ``null``, ``object``/``array`` for empty containers). Document order is kept.
    """
    rows = leaf_rows(payload)
    return pd.DataFrame(
        {
            "path": pd.array([path for path, _ in rows], dtype="string"),
            "value": pd.Series([value for _, value in rows], dtype=object),
            "type": pd.array([json_type(value) for _, value in rows], dtype="string"),
        }
    )


def _with_columns(
    frame: pd.DataFrame, names: tuple[str, ...], *, lists: tuple[str, ...] = ()
) -> pd.DataFrame:
    """Make sure the documented columns exist (all missing if the service omits them)."""
    for name in names:
        if name not in frame.columns:
            frame[name] = pd.Series(index=frame.index, dtype=object if name in lists else "string")
    return frame


def _leading(frame: pd.DataFrame, names: tuple[str, ...]) -> pd.DataFrame:
    return frame[list(names) + [c for c in frame.columns if c not in names]]
