"""What creation, packages and deployment share: a frame's cells, the service's answers.

Cells are read as JSON-native values (numpy and pandas scalars unwrapped, NA as
missing); answers as element Series, element ids, or lists (also inside an envelope).
"""

from __future__ import annotations

import datetime as dt
import decimal
import math
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from mddframes.codec.values import is_missing_cell
from mddframes.errors import DataShapeError, InvalidArgumentError
from mddframes.frames.shaping import listed_in
from mddframes.wire.profile import ENTRY_ID_KEYS, PACKAGE_ENVELOPE_KEYS


def json_value(value: Any, where: str) -> Any:
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
        return [json_value(v, where) for v in value.tolist()]
    return value


def require_text(where: str, **values: Any) -> None:
    """Refuse, naming it, the first of ``values`` that is missing or blank."""
    for label, value in values.items():
        if is_missing_cell(value) or not str(value).strip():
            raise InvalidArgumentError(f"{where}: {label} is empty")


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


def element_id(element: Any, where: str) -> str:
    """The id of an element answer (``id``, else ``structureId``), as text."""
    if isinstance(element, Mapping):
        for key in ENTRY_ID_KEYS:
            if element.get(key) is not None:
                return str(element[key])
    raise DataShapeError(f"{where}: the service's answer carries no element id: {element!r:.200}")


def field_of(item: Any, *names: str) -> Any:
    """The first of ``names`` that ``item`` (an answer's object) holds a value for (any
    spelling a dialect uses); None when it holds none or is not an object."""
    if isinstance(item, Mapping):
        for name in names:
            if item.get(name) is not None:
                return item[name]
    return None


def cell(frame: pd.DataFrame, pos: int, column: str) -> str | None:
    """A frame cell as stripped text; None when the column is absent, or the cell
    missing or blank."""
    if column not in frame.columns:
        return None
    value = frame[column].iloc[pos]
    if is_missing_cell(value):
        return None
    if isinstance(value, np.generic):
        value = value.item()
    text = str(value).strip()
    return text or None


def as_list(answer: Any, what: str) -> list[Any]:
    """The list an answer carries, bare or under an envelope key (``what`` names it in
    the error)."""
    listed = listed_in(answer, PACKAGE_ENVELOPE_KEYS)
    if listed is None:
        raise DataShapeError(f"{what}: expected a list, got {type(answer).__name__}")
    return listed
