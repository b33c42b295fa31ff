"""Search a whole system: element names, table cells and mapping columns, in one frame.

"Where is ``customer_no`` used?" is one call: the tree, every table and every mapping
are read (concurrently, with the bulk loaders), and each long frame is searched a whole
column at a time with pandas' ``str.contains``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

import pandas as pd

from mddframes.api import Api
from mddframes.codec import depth
from mddframes.doc_sections import documented
from mddframes.errors import InvalidArgumentError
from mddframes.frames.bulk_tables import ROW_COLUMN, read_mappings, read_tables
from mddframes.frames.tree import read_tree

#: Where :func:`search` can look.
PLACES: tuple[str, ...] = ("names", "tables", "mappings")

#: The columns of the hits frame, in this order.
HIT_COLUMNS: tuple[str, ...] = (
    "where",
    "element_id",
    "element_name",
    "object_id",
    "row",
    "column",
    "value",
)


@documented
def search(
    api: Api,
    system: str,
    text_or_regex: str | re.Pattern[str],
    *,
    in_: Iterable[str] = PLACES,
    max_workers: int | None = None,
    progress: bool | None = None,
) -> pd.DataFrame:
    """Every place in ``system`` where ``text_or_regex`` occurs.

    Parameters
    ----------
    {api}
    system : str
        The system to search.
    text_or_regex : str or re.Pattern
        A ``str`` is plain text, matched anywhere in a value, ignoring case; a
        compiled pattern (``re.compile(r"^customer_")``) is a regular expression, with
        its own flags.
    in_ : iterable of str, default ("names", "tables", "mappings")
        Where to look: element ``"names"``, ``"tables"`` (every cell of every table,
        as text) and ``"mappings"`` (every cell of every column mapping: source,
        target, transformation...).
    {max_workers}
    {progress}

    Returns
    -------
    pandas.DataFrame
        One row per hit: ``where`` (``"element"``, ``"table"`` or ``"mapping"``),
        ``element_id`` and ``element_name`` (the element, or the owner of the table or
        mapping), ``object_id`` (the table or mapping id), ``row`` (the row's position
        in its table or mapping), ``column`` and ``value`` (the matching text).

    Raises
    ------
    InvalidArgumentError
        For an empty text, or an unknown place in ``in_``.

    Examples
    --------
    >>> found = client.search("FLOW", "customer_no")
    >>> len(found)
    17
    >>> found[["where", "element_name", "column", "value"]].tail(3)
          where   element_name          column                  value
    14  mapping   shop_returns  transformation  TRIM(src.customer_no)
    15  mapping      stg_sales  transformation  TRIM(src.customer_no)
    16  mapping  stg_customers  transformation  TRIM(src.customer_no)
    >>> client.search("DWH", re.compile(r"^DE$"), in_=("tables",))
       where element_id  element_name object_id  row        column value
    0  table   dwh-0005  crm_customer  tbl-0001    0  country_code    DE
    1  table   dwh-0007   crm_address  tbl-0003    0  country_code    DE
    2  table   dwh-0015  erp_supplier  tbl-0011    0  country_code    DE
    3  table   dwh-0152   ref_country  tbl-0109   56        alpha2    DE
    """
    pattern = _pattern(text_or_regex)
    places = _places(in_)
    tree = read_tree(api, system)
    parts = []
    if "names" in places:
        parts.append(_name_hits(tree, pattern))
    for place, id_column, read in (
        ("tables", "table_id", read_tables),
        ("mappings", "mapping_id", read_mappings),
    ):
        if place not in places:
            continue
        owners = tree.dropna(subset=[id_column]).drop_duplicates(id_column)
        ids = owners[id_column].tolist()
        if not ids:
            continue
        long = read(api, ids, max_workers=max_workers, progress=progress)
        parts.append(_cell_hits(long, id_column, owners, place[:-1], pattern))
    hits = [p for p in parts if len(p)]
    if not hits:
        return _empty()
    return pd.concat(hits, ignore_index=True)


def _pattern(text_or_regex: Any) -> re.Pattern[str]:
    if isinstance(text_or_regex, re.Pattern):
        return text_or_regex
    if not isinstance(text_or_regex, str) or not text_or_regex:
        raise InvalidArgumentError(
            f"search needs a non-empty text or a compiled re.Pattern, got {text_or_regex!r}"
        )
    return re.compile(re.escape(text_or_regex), re.IGNORECASE)


def _places(in_: Iterable[str]) -> set[str]:
    places = {in_} if isinstance(in_, str) else set(in_)
    unknown = sorted(places - set(PLACES))
    if unknown or not places:
        raise InvalidArgumentError(
            f"search in_ takes some of {', '.join(PLACES)}; got {sorted(places)!r}"
        )
    return places


def _matches(values: pd.Series, pattern: re.Pattern[str]) -> pd.Series:
    """Whether each value, as text, matches; missing values never do."""
    text = values.astype("string") if values.dtype != object else values.map(_as_text)
    return text.astype("string").str.contains(pattern, regex=True).fillna(False).astype(bool)


def _as_text(value: Any) -> str | None:
    if value is None or (isinstance(value, float) and value != value):
        return None
    if isinstance(value, str):
        return value
    try:
        return str(value)
    except RecursionError:  # a value nested past repr's reach: its JSON text instead
        return depth.dumps(value, what="a searched value", default=str)


def _name_hits(tree: pd.DataFrame, pattern: re.Pattern[str]) -> pd.DataFrame:
    found = tree[_matches(tree["name"], pattern)]
    return pd.DataFrame(
        {
            "where": "element",
            "element_id": found["id"],
            "element_name": found["name"],
            "object_id": pd.NA,
            "row": pd.NA,
            "column": "name",
            "value": found["name"],
        }
    ).pipe(_typed)


def _cell_hits(
    long: pd.DataFrame,
    id_column: str,
    owners: pd.DataFrame,
    where: str,
    pattern: re.Pattern[str],
) -> pd.DataFrame:
    row_column = long.attrs.get("row_column", ROW_COLUMN)
    owner_id = owners.set_index(id_column)["id"]
    owner_name = owners.set_index(id_column)["name"]
    parts = []
    for column in long.columns:
        if column in (id_column, row_column):
            continue
        values = long[column]
        mask = _matches(values, pattern)
        if not mask.any():
            continue
        found = long.loc[mask]
        object_ids = found[id_column]
        parts.append(
            pd.DataFrame(
                {
                    "where": where,
                    "element_id": object_ids.map(owner_id),
                    "element_name": object_ids.map(owner_name),
                    "object_id": object_ids,
                    "row": found[row_column],
                    "column": str(column),
                    "value": values[mask].map(_as_text),
                }
            )
        )
    if not parts:
        return _empty()
    return pd.concat(parts, ignore_index=True).pipe(_typed)


def _typed(frame: pd.DataFrame) -> pd.DataFrame:
    frame = frame.reset_index(drop=True)
    frame = frame.astype({c: "string" for c in HIT_COLUMNS if c != "row"})
    frame["row"] = frame["row"].astype("Int64")
    return frame[list(HIT_COLUMNS)]


def _empty() -> pd.DataFrame:
    return _typed(pd.DataFrame({c: pd.Series([], dtype=object) for c in HIT_COLUMNS}))
