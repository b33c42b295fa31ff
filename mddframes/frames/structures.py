"""Elements ("structures") as a Series (one) or a DataFrame (many, fetched concurrently)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

import pandas as pd

from mddframes.bulk import ErrorPolicy, resolve_workers, run_bulk
from mddframes.codec.dtypes import in_time_unit
from mddframes.doc_sections import documented
from mddframes.errors import DataShapeError
from mddframes.frames.backends import (
    DtypeBackend,
    backend_documented,
    check_dtype_backend,
    to_backend,
)
from mddframes.frames.bulk_tables import failure_records
from mddframes.frames.record_frames import records_frame
from mddframes.frames.shaping import snake_case
from mddframes.frames.tree_shape import STRING_COLUMNS
from mddframes.ids import id_list

if TYPE_CHECKING:
    from mddframes.api import Api

#: The columns a structures frame starts with (those present), in this order.
LEADING_COLUMNS: tuple[str, ...] = ("id", "name", "type", "parent_id")

#: Timestamp fields turned into UTC datetimes when every value parses.
DATETIME_COLUMNS: tuple[str, ...] = ("modified_at", "created_at")


def structure_record(payload: Any, *, what: str = "element") -> dict[str, Any]:
    """Flatten one ``getStructure`` answer into one level of named fields.

    The service's own field names become snake_case (``parentId`` -> ``parent_id``);
    nested objects are flattened with dots, keeping their inner keys as sent, since
    they are the user's attribute names (``attributes.schemaName``). Lists stay lists.

    Raises
    ------
    DataShapeError
        When the payload is not a JSON object.
    """
    if not isinstance(payload, Mapping):
        raise DataShapeError(f"expected an object for the {what}; got {type(payload).__name__}")
    flat: dict[str, Any] = {}
    for key, value in payload.items():
        name = snake_case(key)
        if isinstance(value, Mapping) and value:
            flat.update(_flatten(value, name))
        else:
            flat[name] = value
    return flat


def _flatten(value: Mapping[str, Any], prefix: str) -> dict[str, Any]:
    """``value``'s leaves under dotted names, depth first, without recursion (a served
    value may nest as deep as the decoder goes: codec/depth.py)."""
    flat: dict[str, Any] = {}
    stack = [(prefix, iter(value.items()))]
    while stack:
        name, items = stack[-1]
        for key, item in items:
            if isinstance(item, Mapping) and item:
                stack.append((f"{name}.{key}", iter(item.items())))
                break
            flat[f"{name}.{key}"] = item
        else:
            stack.pop()
    return flat


@documented
def read_structure(api: Api, structure_id: str) -> pd.Series:
    """Read one element as a Series, nested attributes flattened with dots.

    Parameters
    ----------
    {api}
    structure_id : str
        The element id.

    Returns
    -------
    pandas.Series
        Indexed by field name (``id``, ``name``, ``type``, ``parent_id``, ...,
        ``attributes.schema``), ``object`` dtype (values exactly as decoded), named
        after the element id.
    """
    payload = api.get_structure(structure_id)
    record = structure_record(payload, what=f"element {structure_id!r}")
    return pd.Series(record, dtype=object, name=structure_id)


@backend_documented
def read_structures(
    api: Api,
    ids: Iterable[str],
    *,
    max_workers: int | None = None,
    progress: bool | None = None,
    errors: ErrorPolicy = "raise",
    dtype_backend: DtypeBackend = "numpy_nullable",
) -> pd.DataFrame:
    """Read many elements concurrently, one row per element.

    Parameters
    ----------
    {api}
    ids : iterable of str
        Element ids (a list, a Series such as ``tree["id"]``, ...); repeats are read
        once.
    {max_workers}
    {progress}
    errors : {"raise", "skip"}, default "raise"
        See :func:`mddframes.bulk.run_bulk`. With ``"skip"`` the failed ids are
        listed in ``frame.attrs["failures"]`` (records of ``id``, ``error_type``,
        ``status``, ``message``) and named in a warning.
    {dtype_backend}

    Returns
    -------
    pandas.DataFrame
        Columns ``id``, ``name``, ``type``, ``parent_id`` first, then every other field
        (see :func:`structure_record`) in order of first appearance; rows in the
        order of ``ids``. Ids and names ``string``, ``version`` ``Int64``, ``deployed``
        ``boolean``, ``modified_at`` a UTC datetime when every value parses.
    """
    wanted = id_list(ids, what="element ids")
    check_dtype_backend(dtype_backend)
    outcome = run_bulk(
        lambda sid: structure_record(api.get_structure(sid), what=f"element {sid!r}"),
        wanted,
        max_workers=resolve_workers(max_workers, api.max_workers),
        progress=progress,
        errors=errors,
        desc="read_structures",
    )
    records = [record for _sid, record in outcome.succeeded]
    frame = structures_frame(records)
    frame.attrs["failures"] = failure_records(outcome.failures)
    return to_backend(frame, dtype_backend, consume=True)


def structures_frame(records: list[dict[str, Any]]) -> pd.DataFrame:
    """The frame of flattened element records (see :func:`structure_record`)."""
    if not records:
        return pd.DataFrame({name: pd.Series(dtype="string") for name in LEADING_COLUMNS})
    # Not frame_from_objects: the attribute names inside are the user's, kept as sent.
    frame = records_frame(records)
    for name in STRING_COLUMNS:
        if name in frame.columns and frame[name].dtype != "string":
            frame[name] = _string_if_scalar(frame[name])
    for name in DATETIME_COLUMNS:
        if name in frame.columns:
            frame[name] = _datetime_if_all_parse(frame[name])
    leading = [c for c in LEADING_COLUMNS if c in frame.columns]
    return frame[leading + [c for c in frame.columns if c not in leading]]


def _string_if_scalar(column: pd.Series) -> pd.Series:
    if column.map(lambda v: isinstance(v, (Mapping, list))).any():
        return column
    return column.astype("string")


def _datetime_if_all_parse(column: pd.Series) -> pd.Series:
    """ISO timestamps as UTC datetimes; anything that does not parse stays as sent."""
    if column.dtype != "string":
        return column
    try:
        parsed = pd.to_datetime(column, utc=True, format="ISO8601")
    except (ValueError, TypeError):
        return column
    return in_time_unit(parsed)
