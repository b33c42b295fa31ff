"""Lineage: the graph of a system's mappings, and the questions it answers."""

from __future__ import annotations

from typing import Any

import networkx as nx
import pandas as pd

from mddframes.codec.fastjson import gc_paused
from mddframes.doc_sections import documented_with
from mddframes.errors import InvalidArgumentError, renamed
from mddframes.lineage.addressing import Address, ColumnNode, Node, resolve
from mddframes.lineage.answer import Direction, LineageAnswer, answer, traverse
from mddframes.lineage.edges import EDGE_COLUMNS

#: What the docstrings of ``upstream`` and ``downstream`` share, written once.
_documented = documented_with(
    {
        "address": "address : str or tuple of (str, str)\n"
        '    An element, or a column (``"element_id.column"`` or a tuple).',
        "walked": "Returns\n-------\nLineageAnswer\n"
        "    The nodes found, with depth and path; ``.to_frame()`` lists them.\n\n"
        "Raises\n------\nInvalidArgumentError\n"
        "    For an unknown element or column, or a depth below 1.",
    },
    "walked",
)


class Lineage:
    """The lineage of a system: which element and column feeds which, through what.

    Two directed graphs (networkx) built from an edge frame: ``elements`` (element id
    -> element id, one edge per pair, with the mapping ids) and ``columns``
    (``(element_id, column)`` -> ``(element_id, column)``, with the mapping id and the
    transformation). A cycle is data: questions stop where they meet a node already
    found, and :meth:`cycles` lists every cycle.

    Parameters
    ----------
    edges : pandas.DataFrame
        The edge frame of :func:`~mddframes.lineage.read_lineage` (columns
        :data:`~mddframes.lineage.edges.EDGE_COLUMNS`).

    Raises
    ------
    InvalidArgumentError
        If ``edges`` lacks one of those columns.

    Examples
    --------
    >>> lineage = mddframes.Lineage(client.read_lineage("FLOW"))
    >>> lineage.upstream("flow-07").to_frame()[["element_name", "depth", "path"]]
       element_name  depth                           path
    0     stg_sales      1             flow-04 -> flow-07
    1  shop_returns      2  flow-02 -> flow-04 -> flow-07
    2   shop_orders      2  flow-01 -> flow-04 -> flow-07
    >>> impact = lineage.impact("flow-02.customer_no")  # what a change would reach
    >>> impact.to_frame()[["element_name", "column", "depth"]]
            element_name       column  depth
    0          stg_sales  customer_no      1
    1  sales_by_customer  customer_no      2
    2     customer_value  customer_no      3
    >>> lineage.path("flow-02.amount", "flow-08.value_band").to_frame()[["element_name", "column"]]
            element_name        column
    0          stg_sales        amount
    1  sales_by_customer  total_amount
    2     customer_value    value_band
    >>> lineage.find_cycles()
       cycle  position element_id    element_name  element_type
    0      0         0    flow-03  shop_customers  SOURCE_TABLE
    1      0         1    flow-05   stg_customers   STAGE_TABLE
    2      0         2    flow-09  customer_score          VIEW
    """

    def __init__(self, edges: pd.DataFrame) -> None:
        missing = [c for c in EDGE_COLUMNS if c not in edges.columns]
        if missing:
            raise InvalidArgumentError(
                f"a lineage edge frame needs the columns {', '.join(missing)} "
                "(as read_lineage returns it)"
            )
        self.edges = edges
        self.names: dict[str, str] = {}
        self.types: dict[str, str] = {}
        for side in ("source", "target"):
            ids = edges[f"{side}_id"].tolist()
            self.names.update(zip(ids, _texts(edges[f"{side}_name"], ids), strict=True))
            self.types.update(zip(ids, _texts(edges[f"{side}_type"], ids), strict=True))
        self.elements: nx.DiGraph[Any] = nx.DiGraph()
        self.columns: nx.DiGraph[Any] = nx.DiGraph()
        self.columns_of: dict[str, set[str]] = {}
        with gc_paused():  # tens of thousands of small tuples: no collector passes meanwhile
            self._build()

    def _build(self) -> None:
        e = self.edges
        mapping_ids = e["mapping_id"].tolist()
        sources, targets = e["source_id"].tolist(), e["target_id"].tolist()
        pairs: dict[tuple[str, str], list[str]] = {}
        for pair, mapping_id in zip(zip(sources, targets, strict=True), mapping_ids, strict=True):
            kept = pairs.setdefault(pair, [])
            if mapping_id not in kept:
                kept.append(mapping_id)
        self.elements.add_nodes_from(
            (i, {"name": self.names[i], "type": self.types[i]}) for i in self.names
        )
        self.elements.add_edges_from(
            (a, b, {"mapping_ids": ids, "transformation": None}) for (a, b), ids in pairs.items()
        )
        source_columns = _or_none(e["source_column"])
        target_columns = _or_none(e["target_column"])
        transformations = _or_none(e["transformation"])
        columns_of = self.columns_of
        column_edges = []
        for source, source_column, target, target_column, mapping_id, transformation in zip(
            sources,
            source_columns.tolist(),
            targets,
            target_columns.tolist(),
            mapping_ids,
            transformations.tolist(),
            strict=True,
        ):
            if target_column is not None:
                columns_of.setdefault(target, set()).add(target_column)
            if source_column is not None:
                columns_of.setdefault(source, set()).add(source_column)
            if source_column is not None and target_column is not None:
                column_edges.append(
                    (
                        (source, source_column),
                        (target, target_column),
                        {"mapping_ids": [mapping_id], "transformation": transformation},
                    )
                )
        self.columns.add_nodes_from(
            ((element, column), {"name": self.names[element], "type": self.types[element]})
            for element, names in columns_of.items()
            for column in names
        )
        self.columns.add_edges_from(column_edges)

    # -- questions -----------------------------------------------------------------------

    def node(self, address: Address) -> Node:
        """The element id or ``(element_id, column)`` that ``address`` names.

        Parameters
        ----------
        address : str or tuple of (str, str)
            An element id or name, ``"element_id.column"`` or ``(element_id, column)``.

        Returns
        -------
        str or tuple of (str, str)
            The node.

        Raises
        ------
        InvalidArgumentError
            For an unknown element or column, naming close matches.
        """
        return resolve(address, names=self.names, columns=self.columns_of)

    @_documented
    def upstream(self, address: Address, depth: int | None = None) -> LineageAnswer:
        """What feeds ``address``: the elements (or columns) it is loaded from.

        Parameters
        ----------
        {address}
        depth : int, optional
            How many mappings back to go; default: all the way to the sources.

        {walked}

        Examples
        --------
        >>> lineage = mddframes.Lineage(client.read_lineage("FLOW"))
        >>> lineage.upstream("flow-07", depth=1).to_frame()[["element_name", "depth", "mappings"]]
          element_name  depth     mappings
        0    stg_sales      1  flow-map-04
        """
        return self._walk("upstream", address, depth)

    @_documented
    def downstream(self, address: Address, depth: int | None = None) -> LineageAnswer:
        """What ``address`` feeds: the elements (or columns) loaded from it.

        Parameters
        ----------
        {address}
        depth : int, optional
            How many mappings forward to go; default: all the way.

        {walked}

        Examples
        --------
        >>> lineage = mddframes.Lineage(client.read_lineage("FLOW"))
        >>> lineage.downstream("flow-05").to_frame()[["element_name", "depth", "path"]]
             element_name  depth                           path
        0  customer_score      1             flow-05 -> flow-09
        1  shop_customers      2  flow-05 -> flow-09 -> flow-03
        """
        return self._walk("downstream", address, depth)

    def impact(self, source_column: Address) -> LineageAnswer:
        """Every column that depends on ``source_column``, at any depth.

        Parameters
        ----------
        source_column : str or tuple of (str, str)
            ``"element_id.column"`` or ``(element_id, column)``.

        Returns
        -------
        LineageAnswer
            One node per dependent column; ``.to_frame()`` gives each one's depth, path
            and the transformations along it.

        Raises
        ------
        InvalidArgumentError
            If ``source_column`` is unknown or names an element, not a column.

        Examples
        --------
        >>> lineage = mddframes.Lineage(client.read_lineage("FLOW"))
        >>> reached = lineage.impact(("flow-02", "amount")).to_frame()
        >>> reached[["element_name", "column", "depth"]]
                element_name        column  depth
        0          stg_sales        amount      1
        1  sales_by_customer  total_amount      2
        2       sales_by_day  total_amount      2
        3     customer_value    value_band      3
        >>> print(reached.loc[1, "transformations"])  # each hop's, from the source on
        -src.amount -> SUM(src.amount)
        """
        node = self.node(source_column)
        if not isinstance(node, tuple):
            raise InvalidArgumentError(
                f"impact takes a column ('element_id.column' or a tuple), got the element "
                f"{node!r}; use downstream() for an element"
            )
        reached = traverse(self.columns, node, "downstream", None)
        return answer("impact", self.columns, node, reached, self.names, sign=1)

    def path(self, source: Address, target: Address) -> LineageAnswer:
        """The shortest way data takes from ``source`` to ``target``.

        Parameters
        ----------
        source, target : str or tuple of (str, str)
            Two elements, or two columns.

        Returns
        -------
        LineageAnswer
            The nodes after ``source`` on the way, ``target`` last; empty when data
            never flows from one to the other.

        Raises
        ------
        InvalidArgumentError
            For unknown addresses, or an element paired with a column.

        Examples
        --------
        >>> lineage = mddframes.Lineage(client.read_lineage("FLOW"))
        >>> lineage.path("flow-02", "flow-08").to_frame()[["element_name", "depth", "mappings"]]
                element_name  depth                                   mappings
        0          stg_sales      1                                flow-map-02
        1  sales_by_customer      2                 flow-map-02 -> flow-map-03
        2     customer_value      3  flow-map-02 -> flow-map-03 -> flow-map-05
        """
        a, b = self.node(source), self.node(target)
        if isinstance(a, tuple) != isinstance(b, tuple):
            raise InvalidArgumentError(
                f"path() joins two elements or two columns, got {source!r} and {target!r}"
            )
        graph = self.columns if isinstance(a, tuple) else self.elements
        try:
            nodes: list[Node] = nx.shortest_path(graph, a, b)
        except nx.NetworkXNoPath:
            nodes = [a]
        reached = {node: (i, tuple(nodes[: i + 1])) for i, node in enumerate(nodes) if i}
        return answer("path", graph, a, reached, self.names, sign=1)

    def find_cycles(self) -> pd.DataFrame:
        """Every cycle of elements: data that flows back into where it came from (searched
        anew on each call).

        Returns
        -------
        pandas.DataFrame
            One row per element of each cycle: ``cycle`` (a number from 0),
            ``position`` (its place in the cycle), ``element_id``, ``element_name``,
            ``element_type``. Empty when the lineage has no cycle.

        Examples
        --------
        >>> lineage = mddframes.Lineage(client.read_lineage("FLOW"))
        >>> lineage.find_cycles()
           cycle  position element_id    element_name  element_type
        0      0         0    flow-03  shop_customers  SOURCE_TABLE
        1      0         1    flow-05   stg_customers   STAGE_TABLE
        2      0         2    flow-09  customer_score          VIEW
        """
        rows = [
            (number, position, node, self.names[node], self.types[node])
            for number, cycle in enumerate(sorted(nx.simple_cycles(self.elements), key=min))
            for position, node in enumerate(_rotated(cycle))
        ]
        frame = pd.DataFrame(
            rows,
            columns=["cycle", "position", "element_id", "element_name", "element_type"],
            dtype=object,
        )
        return frame.astype(
            {
                "cycle": "Int64",
                "position": "Int64",
                "element_id": "string",
                "element_name": "string",
                "element_type": "string",
            }
        )

    cycles = renamed(find_cycles, "cycles")

    def to_frame(self) -> pd.DataFrame:
        """The edge frame this lineage was built from (a copy).

        Returns
        -------
        pandas.DataFrame
            As :func:`~mddframes.lineage.read_lineage` returns it.
        """
        return self.edges.copy()

    def _walk(self, direction: str, address: Address, depth: int | None) -> LineageAnswer:
        if depth is not None and (isinstance(depth, bool) or not isinstance(depth, int)):
            raise InvalidArgumentError(f"depth must be a whole number or None, got {depth!r}")
        if depth is not None and depth < 1:
            raise InvalidArgumentError(f"depth must be at least 1, got {depth}")
        node = self.node(address)
        graph = self.columns if isinstance(node, tuple) else self.elements
        way: Direction = "upstream" if direction == "upstream" else "downstream"
        reached = traverse(graph, node, way, depth)
        return answer(
            direction, graph, node, reached, self.names, sign=-1 if way == "upstream" else 1
        )

    def __repr__(self) -> str:
        return (
            f"<Lineage: {self.elements.number_of_nodes()} elements, "
            f"{self.elements.number_of_edges()} element edges, "
            f"{self.columns.number_of_edges()} column edges>"
        )


def _or_none(values: pd.Series) -> pd.Series:
    """The values as objects, ``None`` where missing (``where`` alone would give NaN)."""
    return values.astype(object).where(values.notna(), None)


def _texts(values: pd.Series, ids: list[str]) -> list[str]:
    """Names or types, the id standing in where the tree had none."""
    return [v if isinstance(v, str) else i for v, i in zip(values.tolist(), ids, strict=True)]


def _rotated(cycle: list[Any]) -> list[Any]:
    """The cycle starting at its smallest node, so that two runs list it alike."""
    first = cycle.index(min(cycle))
    return cycle[first:] + cycle[:first]


__all__ = ["ColumnNode", "Lineage"]
