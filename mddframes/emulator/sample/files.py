"""The data files of the sample (``mddframes/emulator/data/``), read fresh on every call.

The literal data lives in JSON and CSV files so that the Python modules hold only the
rules that turn it into records. JSON keeps every value's type exact: integers above
2**53 stay integers (Python's ``json`` reads them without loss), ``3.0`` stays a float,
``null`` stays None, and objects keep their key order.
"""

from __future__ import annotations

import csv
import json
from importlib import resources
from typing import Any

JSON = dict[str, Any]


def _text(file_name: str) -> str:
    return resources.files("mddframes.emulator").joinpath("data", file_name).read_text("utf-8")


def read_json(file_name: str) -> JSON:
    """The JSON object of ``data/<file_name>``, parsed anew (callers may mutate it).

    Parameters
    ----------
    file_name : str
        E.g. ``"sample_warehouse.json"``.

    Returns
    -------
    dict
        The file's top-level object, keys in file order.
    """
    value = json.loads(_text(file_name))
    if not isinstance(value, dict):
        raise ValueError(f"data/{file_name} must hold a JSON object, not {type(value).__name__}")
    return value


def read_csv(file_name: str) -> list[dict[str, str]]:
    """The rows of ``data/<file_name>`` as dicts of strings (header row gives the keys)."""
    return list(csv.DictReader(_text(file_name).splitlines()))


def iso_countries() -> list[JSON]:
    """The ISO 3166-1 country list: ``{"alpha2", "alpha3", "numeric", "name"}`` rows.

    ``numeric`` is a three-digit string that keeps its leading zeros (``"004"``).
    """
    return [
        {"alpha2": r["alpha2"], "alpha3": r["alpha3"], "numeric": r["numeric"], "name": r["name"]}
        for r in read_csv("iso3166_countries.csv")
    ]


def iso_currencies() -> list[JSON]:
    """The ISO 4217 currency list: ``{"code", "numeric", "minor_units", "name"}`` rows.

    ``numeric`` keeps its leading zeros (``"008"``); ``minor_units`` is an int, or
    None for the funds and metals that have none (``XAU``...).
    """
    return [
        {
            "code": r["code"],
            "numeric": r["numeric"],
            "minor_units": int(r["minor_units"]) if r["minor_units"] else None,
            "name": r["name"],
        }
        for r in read_csv("iso4217_currencies.csv")
    ]


#: Row readers of the CSV files a reference table may name as its ``rows_file``.
ROW_FILES = {
    "iso3166_countries.csv": iso_countries,
    "iso4217_currencies.csv": iso_currencies,
}
