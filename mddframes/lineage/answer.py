"""One answer of a lineage question: the nodes reached, how, and the subgraph to draw."""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

import networkx as nx
import pandas as pd

from mddframes.lineage.addressing import Node, address_of, label

Direction = Literal["upstream", "downstream"]

#: The columns of :meth:`LineageAnswer.to_frame`, in this order.
ANSWER_COLUMNS: tuple[str, ...] = (
    "element_id",
    "element_name",
    "element_type",
    "column",
    "depth",
    "path",
    "mappings",
    "transformations",
)

_ARROW = " -> "
_COPY = "="  # a hop that copies the column unchanged (no transformation)


@dataclass(frozen=True)
class LineageAnswer:
    """What an ``upstream``, ``downstream``, ``impact`` or ``path`` question found.

    Attributes
    ----------
    question : str
        ``"upstream"``, ``"downstream"``, ``"impact"`` or ``"path"``.
    start : str or tuple of (str, str)
        The element id or ``(element_id, column)`` asked about.
    graph : networkx.DiGraph
        The start, the nodes reached and the edges between them, in the direction data
        flows. Node attributes ``label``, ``name``, ``type`` and ``layer`` (the signed
        depth: upstream nodes negative); edge attributes ``mapping_ids`` and
        ``transformation``.
    reached : dict
        Node -> ``(depth, path)``: the nodes found, each with its depth and the nodes
        from the start to it (in the order they were found).
    """

    question: str
    start: Node
    graph: nx.DiGraph[Any]
    reached: Mapping[Node, tuple[int, tuple[Node, ...]]]

    def to_frame(self) -> pd.DataFrame:
        """The nodes found, one row each, nearest first.

        Returns
        -------
        pandas.DataFrame
            Columns ``element_id``, ``element_name``, ``element_type``, ``column``
            (missing for an element), ``depth`` (1 = one mapping away), ``path`` (the
            addresses from source to target, as data flows, ``" -> "``-joined),
            ``mappings`` (the mapping ids along it) and ``transformations`` (each
            hop's transformation, ``=`` for a plain copy; missing for elements).

        Examples
        --------
        >>> lineage = mddframes.Lineage(client.read_lineage("FLOW"))
        >>> lineage.impact("flow-02.customer_no").to_frame()[["element_name", "column", "depth"]]
                element_name       column  depth
        0          stg_sales  customer_no      1
        1  sales_by_customer  customer_no      2
        2     customer_value  customer_no      3
        """
        rows = []
        upstream = self.question == "upstream"
        for node, (depth, path) in self.reached.items():
            flow = tuple(reversed(path)) if upstream else path
            hops = list(zip(flow, flow[1:], strict=False))
            edges = [self.graph.edges[a, b] for a, b in hops]
            element = node[0] if isinstance(node, tuple) else node
            attributes = self.graph.nodes[node]
            rows.append(
                (
                    element,
                    attributes.get("name"),
                    attributes.get("type"),
                    node[1] if isinstance(node, tuple) else None,
                    depth,
                    _ARROW.join(address_of(n) for n in flow),
                    _ARROW.join("/".join(e["mapping_ids"]) for e in edges),
                    _ARROW.join(e["transformation"] or _COPY for e in edges)
                    if isinstance(node, tuple)
                    else None,
                )
            )
        frame = pd.DataFrame(rows, columns=list(ANSWER_COLUMNS), dtype=object)
        frame = frame.astype({c: "string" for c in ANSWER_COLUMNS if c != "depth"})
        frame["depth"] = frame["depth"].astype("Int64")
        return frame.sort_values("depth", kind="stable").reset_index(drop=True)

    def __len__(self) -> int:
        return len(self.reached)

    def __repr__(self) -> str:
        return (
            f"<LineageAnswer {self.question} of {address_of(self.start)!r}: "
            f"{len(self.reached)} node(s)>"
        )


def traverse(
    graph: nx.DiGraph[Any],
    start: Node,
    direction: Direction,
    depth: int | None,
) -> dict[Node, tuple[int, tuple[Node, ...]]]:
    """Breadth-first from ``start`` against or along the edges, each node once.

    A cycle ends where it meets a node already found (the start included), so a cycle
    is never followed twice; :meth:`Lineage.cycles` reports it.
    """
    neighbours = graph.pred if direction == "upstream" else graph.succ
    found: dict[Node, tuple[int, tuple[Node, ...]]] = {}
    queue: deque[tuple[Node, int, tuple[Node, ...]]] = deque([(start, 0, (start,))])
    seen = {start}
    while queue:
        node, level, path = queue.popleft()
        if depth is not None and level >= depth:
            continue
        for neighbour in neighbours[node]:
            if neighbour in seen:
                continue
            seen.add(neighbour)
            step = (neighbour, level + 1, (*path, neighbour))
            found[neighbour] = (level + 1, step[2])
            queue.append(step)
    return found


def answer(
    question: str,
    graph: nx.DiGraph[Any],
    start: Node,
    reached: dict[Node, tuple[int, tuple[Node, ...]]],
    names: Mapping[str, str],
    *,
    sign: int,
) -> LineageAnswer:
    """The answer whose subgraph holds ``start``, the ``reached`` nodes and their edges."""
    nodes = [start, *reached]
    # built node by node in the order found: a subgraph view iterates a set of nodes,
    # whose order changes with the hash seed, and DOT/Mermaid number nodes in graph order
    sub: nx.DiGraph[Any] = nx.DiGraph()
    sub.add_nodes_from((node, graph.nodes[node]) for node in nodes)
    sub.add_edges_from((a, b, data) for a, b, data in graph.edges(nodes, data=True) if b in sub)
    for node in nodes:
        level = reached[node][0] if node in reached else 0
        sub.nodes[node]["layer"] = sign * level
        sub.nodes[node]["label"] = label(node, names)
    return LineageAnswer(question, start, sub, reached)
