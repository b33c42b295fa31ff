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

from mddframes.errors import DataShapeError, InvalidArgumentError

_ENVELOPE_KEYS = ("content", "items", "data", "results", "packages", "deploymentPackages")


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


def _require_text(where: str, **values: Any) -> None:
    """Refuse, naming it, the first of ``values`` that is missing or blank."""
    for label, value in values.items():
        if _is_missing(value) or not str(value).strip():
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


def _element_id(element: Any, where: str) -> str:
    if isinstance(element, Mapping):
        for key in ("id", "structureId", "structure_id"):
            if element.get(key) is not None:
                return str(element[key])
    raise DataShapeError(f"{where}: the service's answer carries no element id: {element!r:.200}")


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


def _as_list(answer: Any, what: str) -> list[Any]:
    if isinstance(answer, list):
        return answer
    if isinstance(answer, Mapping):
        for key in _ENVELOPE_KEYS:
            if isinstance(answer.get(key), list):
                return answer[key]
    raise DataShapeError(f"{what}: expected a list, got {type(answer).__name__}")
