"""The lineage edge frame: every mapping of a system, one row per column mapping.

A mapping names its source and target element and maps source columns to target
columns (``sourceId``, ``targetId``, ``columnMappings[].source/target/transformation``,
row 17 of ``docs/wire-format.md``). :func:`read_lineage` reads every mapping of a
system concurrently and :func:`edges_frame` (no HTTP) joins them with the tree into one
frame. A mapping that lacks one of the assumed fields is named in one warning and left
out: lineage never guesses an edge.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import pandas as pd

from mddframes.api import Api
from mddframes.bulk import ProgressCallback, run_bulk
from mddframes.codec.fastjson import gc_paused
from mddframes.doc_sections import documented
from mddframes.errors import MappingShapeWarning, issue_warning
from mddframes.frames.tree import read_tree
from mddframes.wire.spelling import to_camel

#: The columns of the edge frame, in this order (all ``string`` dtype).
EDGE_COLUMNS: tuple[str, ...] = (
    "mapping_id",
    "source_id",
    "source_name",
    "source_type",
    "source_column",
    "target_id",
    "target_name",
    "target_type",
    "target_column",
    "transformation",
)

_ROW = "row 17 of docs/wire-format.md"
_NAMED_LIMIT = 20  # how many mapping ids the warning lists before it just counts


@documented
def read_lineage(
    api: Api,
    system: str,
    *,
    max_workers: int | None = None,
    progress: bool | None = None,
    on_progress: ProgressCallback | None = None,
) -> pd.DataFrame:
    """Read every mapping of ``system`` into one lineage edge frame.

    The tree says which elements own a mapping (``mappingId``); those mappings are read
    concurrently (as :func:`~mddframes.frames.bulk_tables.read_mappings` does) and
    joined with the tree for the names and types of their source and target.

    Parameters
    ----------
    {api}
    system : str
        The system whose mappings are read.
    {max_workers}
    {progress}
    on_progress : callable, optional
        Called as ``on_progress(done, total)`` after each mapping (notebook panels).

    Returns
    -------
    pandas.DataFrame
        One row per column mapping, columns :data:`EDGE_COLUMNS`: the mapping id, the
        source element's id, name and type, the source column, the target element's
        id, name and type, the target column and the transformation. A mapping without
        column mappings gives one element-level row whose column cells are missing;
        an entry whose ``source`` is null (a constant, a hash of several columns) has
        a missing ``source_column``.

    Warns
    -----
    MappingShapeWarning
        Once, naming the mappings that lack ``sourceId``, ``targetId`` or
        ``columnMappings`` (row 17 of ``docs/wire-format.md``); they are left out.

    Examples
    --------
    >>> edges = client.read_lineage("FLOW")
    >>> len(edges)
    23
    >>> edges[["source_name", "source_column", "target_name", "target_column"]].head(3)
        source_name source_column target_name target_column
    0  shop_returns     return_id   stg_sales       sale_id
    1  shop_returns   customer_no   stg_sales   customer_no
    2  shop_returns        amount   stg_sales        amount
    """
    tree = read_tree(api, system)
    ids = tree["mapping_id"].dropna().drop_duplicates().tolist()
    outcome = run_bulk(
        api.get_mapping,
        ids,
        max_workers=max_workers if max_workers is not None else api.max_workers,
        progress=progress,
        desc="read_lineage",
        on_progress=on_progress,
    )
    return edges_frame(tree, [r for r in outcome.results if r is not None])


def edges_frame(tree: pd.DataFrame, mappings: Iterable[Mapping[str, Any]]) -> pd.DataFrame:
    """The lineage edge frame of ``mappings`` (decoded ``getMapping`` answers); no HTTP.

    Parameters
    ----------
    tree : pandas.DataFrame
        The system's tree (:func:`~mddframes.frames.tree.read_tree`), for element names
        and types; an element it lacks gets missing name and type.
    mappings : iterable of dict
        The mapping documents, camelCase or snake_case.

    Returns
    -------
    pandas.DataFrame
        As :func:`read_lineage`.

    Warns
    -----
    MappingShapeWarning
        Once, for the mappings lacking an assumed field (they are left out).
    """
    with gc_paused():  # one tuple per column mapping: no collector passes meanwhile
        rows, lacking = _rows(mappings)
    if lacking:
        _warn_lacking(lacking)
    raw = pd.DataFrame(
        rows,
        columns=[
            "mapping_id",
            "source_id",
            "source_column",
            "target_id",
            "target_column",
            "transformation",
        ],
        dtype=object,
    )
    # plain dicts: a lookup per edge beats aligning against a 100,000-element index
    ids = tree["id"].tolist()
    names = dict(zip(reversed(ids), reversed(tree["name"].tolist()), strict=True))
    types = dict(zip(reversed(ids), reversed(tree["type"].tolist()), strict=True))
    sources, targets = raw["source_id"].tolist(), raw["target_id"].tolist()
    frame = pd.DataFrame(
        {
            "mapping_id": raw["mapping_id"],
            "source_id": raw["source_id"],
            "source_name": [names.get(i) for i in sources],
            "source_type": [types.get(i) for i in sources],
            "source_column": raw["source_column"],
            "target_id": raw["target_id"],
            "target_name": [names.get(i) for i in targets],
            "target_type": [types.get(i) for i in targets],
            "target_column": raw["target_column"],
            "transformation": raw["transformation"],
        }
    )
    return frame.astype("string")


def _rows(mappings: Iterable[Mapping[str, Any]]) -> tuple[list[tuple[Any, ...]], list[str]]:
    """One tuple per column mapping, and the ids of the mappings lacking a field."""
    rows: list[tuple[Any, ...]] = []
    lacking: list[str] = []
    for document in mappings:
        mapping = to_camel(dict(document))
        mapping_id = mapping.get("id")
        source, target = mapping.get("sourceId"), mapping.get("targetId")
        entries = mapping.get("columnMappings")
        if not isinstance(source, str) or not isinstance(target, str):
            lacking.append(str(mapping_id))
            continue
        if not isinstance(entries, list) or not all(isinstance(e, dict) for e in entries):
            lacking.append(str(mapping_id))
            continue
        if not entries:
            rows.append((mapping_id, source, None, target, None, None))
        for entry in entries:
            rows.append(
                (
                    mapping_id,
                    source,
                    _text(entry.get("source")),
                    target,
                    _text(entry.get("target")),
                    _text(entry.get("transformation")),
                )
            )
    return rows, lacking


def _text(value: Any) -> str | None:
    """A column name or transformation as text; null stays missing."""
    if value is None:
        return None
    return value if isinstance(value, str) else str(value)


def _warn_lacking(mapping_ids: list[str]) -> None:
    named = ", ".join(repr(i) for i in mapping_ids[:_NAMED_LIMIT])
    more = len(mapping_ids) - _NAMED_LIMIT
    if more > 0:
        named += f" and {more} more"
    issue_warning(
        f"lineage left out {len(mapping_ids)} mapping(s) lacking sourceId, targetId or a "
        f"columnMappings list of objects (the fields {_ROW} assumes): {named}",
        MappingShapeWarning,
    )
