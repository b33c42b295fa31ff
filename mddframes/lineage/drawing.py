"""A lineage graph as text (Graphviz DOT, Mermaid) and as a picture (matplotlib).

DOT and Mermaid let a pipeline put the graph in a pull-request comment; :func:`draw`
lays the nodes out by depth (sources left, targets right), readable at the ~155
elements of a warehouse.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import networkx as nx

from mddframes.lineage.answer import LineageAnswer
from mddframes.lineage.graph import Lineage

if TYPE_CHECKING:
    from matplotlib.axes import Axes


def _graph(what: LineageAnswer | Lineage) -> nx.DiGraph[Any]:
    if isinstance(what, Lineage):
        graph: nx.DiGraph[Any] = nx.DiGraph(what.elements)
        for node in graph:
            graph.nodes[node]["label"] = what.names.get(node, node)
        return graph
    return what.graph


def _statements(
    what: LineageAnswer | Lineage,
    node: Callable[[str, str], str],
    edge: Callable[[str, str, str], str],
) -> list[str]:
    """The lines of a graph's nodes, then of its edges, indented: ``node(id, label)`` and
    ``edge(id, id, transformation)`` write them in one notation, the nodes named ``n0``,
    ``n1``... in the graph's order (a label may hold any character; an id is safe)."""
    graph = _graph(what)
    ids = {name: f"n{i}" for i, name in enumerate(graph)}
    nodes = [node(ids[name], str(data.get("label", name))) for name, data in graph.nodes(data=True)]
    edges = [
        edge(ids[a], ids[b], str(data.get("transformation") or ""))
        for a, b, data in graph.edges(data=True)
    ]
    return [f"  {line}" for line in [*nodes, *edges]]


def to_dot(what: LineageAnswer | Lineage, *, name: str = "lineage") -> str:
    """The graph of a lineage answer (or a whole lineage) in Graphviz DOT.

    Parameters
    ----------
    what : LineageAnswer or Lineage
        An answer (its nodes and edges) or a lineage (all its elements).
    name : str, default "lineage"
        The digraph's name.

    Returns
    -------
    str
        ``digraph "lineage" { ... }``, left to right, one statement per line; a
        transformation labels its edge.

    Examples
    --------
    >>> lineage = mddframes.Lineage(client.read_lineage("FLOW"))
    >>> print(mddframes.to_dot(lineage.impact("flow-02.amount")))
    digraph "lineage" {
      rankdir=LR;
      node [shape=box];
      n0 [label="shop_returns.amount"];
      n1 [label="stg_sales.amount"];
      n2 [label="sales_by_customer.total_amount"];
      n3 [label="sales_by_day.total_amount"];
      n4 [label="customer_value.value_band"];
      n0 -> n1 [label="-src.amount"];
      n1 -> n2 [label="SUM(src.amount)"];
      n1 -> n3 [label="SUM(src.amount)"];
      n2 -> n4 [label="CASE WHEN src.total_amount > 1000 THEN 'HIGH' ELSE 'LOW' END"];
    }
    """
    statements = _statements(
        what,
        lambda n, label: f"{n} [label={json.dumps(label)}];",
        lambda a, b, text: f"{a} -> {b}" + (f" [label={json.dumps(text)}]" if text else "") + ";",
    )
    head = [f"digraph {json.dumps(name)} {{", "  rankdir=LR;", "  node [shape=box];"]
    return "\n".join([*head, *statements, "}"]) + "\n"


def to_mermaid(what: LineageAnswer | Lineage) -> str:
    """The graph of a lineage answer (or a whole lineage) as a Mermaid flowchart.

    Parameters
    ----------
    what : LineageAnswer or Lineage
        An answer (its nodes and edges) or a lineage (all its elements).

    Returns
    -------
    str
        ``flowchart LR`` and one line per node and edge; GitHub renders it in a
        fenced ``mermaid`` block.

    Examples
    --------
    >>> lineage = mddframes.Lineage(client.read_lineage("FLOW"))
    >>> print(mddframes.to_mermaid(lineage.upstream("flow-08")))
    flowchart LR
      n0["customer_value"]
      n1["sales_by_customer"]
      n2["stg_sales"]
      n3["shop_returns"]
      n4["shop_orders"]
      n1 --> n0
      n2 --> n1
      n3 --> n2
      n4 --> n2
    """
    statements = _statements(
        what,
        lambda n, label: f'{n}["{_mermaid_text(label)}"]',
        lambda a, b, text: f'{a} -->|"{_mermaid_text(text)}"| {b}' if text else f"{a} --> {b}",
    )
    return "\n".join(["flowchart LR", *statements]) + "\n"


def _mermaid_text(text: str) -> str:
    # Mermaid ends a quoted label at '"'; its entity code keeps the character.
    return text.replace('"', "#quot;")


def layers(graph: nx.DiGraph[Any]) -> dict[Any, int]:
    """Each node's depth from the sources: the topological generation of its cycle group.

    Parameters
    ----------
    graph : networkx.DiGraph
        Any directed graph; the nodes of a cycle share one depth.

    Returns
    -------
    dict
        Node -> depth (0 for the sources).
    """
    condensed = nx.condensation(graph)
    depth_of_group = {
        group: depth
        for depth, groups in enumerate(nx.topological_generations(condensed))
        for group in groups
    }
    members = condensed.graph["mapping"]
    return {node: depth_of_group[members[node]] for node in graph}


def draw(
    what: LineageAnswer | Lineage,
    *,
    ax: Axes | None = None,
    highlight: LineageAnswer | None = None,
    font_size: float | None = None,
) -> Axes:
    """Draw a lineage answer or a whole lineage, laid out by depth (sources on the left).

    Needs matplotlib (the ``notebooks`` extra).

    Parameters
    ----------
    what : LineageAnswer or Lineage
        What to draw: an answer's subgraph, or every element of a lineage.
    ax : matplotlib.axes.Axes, optional
        Where to draw; default a new figure sized to the number of nodes.
    highlight : LineageAnswer, optional
        Nodes and edges of this answer are drawn in colour, the rest in grey (e.g. a
        mart's upstream within the whole warehouse).
    font_size : float, optional
        Label size; default shrinks as the graph grows.

    Returns
    -------
    matplotlib.axes.Axes
        The axes drawn on.

    Examples
    --------
    >>> lineage = mddframes.Lineage(client.read_lineage("FLOW"))
    >>> ax = mddframes.lineage.draw(lineage, highlight=lineage.upstream("flow-08"))
    >>> len(ax.texts)  # a label per element; what feeds customer_value in colour
    9
    >>> ax.figure.savefig("lineage.png")
    """
    import matplotlib.pyplot as plt

    graph = _graph(what).copy()
    layer_of = layers(graph)
    for node in graph:
        graph.nodes[node]["depth"] = layer_of[node]
    widest = max([list(layer_of.values()).count(d) for d in set(layer_of.values())] or [1])
    if ax is None:
        width = 3.2 * (max(layer_of.values(), default=0) + 1)
        _figure, ax = plt.subplots(figsize=(max(width, 6.0), max(4.0, 0.22 * widest)))
    position = _ordered(graph, nx.multipartite_layout(graph, subset_key="depth"))
    marked = set(highlight.graph.nodes) if highlight is not None else set(graph.nodes)
    marked_edges = set(highlight.graph.edges) if highlight is not None else set(graph.edges)
    if font_size is None:
        points = ax.get_window_extent().height * 72 / ax.figure.dpi
        font_size = max(3.0, min(9.0, 0.45 * points / max(widest, 1)))
    size = font_size
    nx.draw_networkx_edges(
        graph,
        position,
        ax=ax,
        edge_color=["#1f77b4" if e in marked_edges else "#d0d0d0" for e in graph.edges],
        arrows=True,
        arrowsize=6,
        width=0.6,
        node_size=0,
    )
    texts = nx.draw_networkx_labels(
        graph,
        position,
        ax=ax,
        labels={n: str(graph.nodes[n].get("label", n)) for n in graph},
        font_size=size,
        bbox={"boxstyle": "round,pad=0.15", "facecolor": "white", "linewidth": 0.4},
    )
    for node, text in texts.items():
        text.set_color("black" if node in marked else "#a0a0a0")
    xs = [x for x, _y in position.values()] or [0.0]
    ys = [y for _x, y in position.values()] or [0.0]
    ax.set_xlim(min(xs) - 0.5, max(xs) + 0.5)
    ax.set_ylim(min(ys) - 0.5 / widest, max(ys) + 0.5 / widest)
    ax.set_axis_off()
    return ax


def _ordered(graph: nx.DiGraph[Any], position: dict[Any, Any]) -> dict[Any, tuple[float, float]]:
    """The multipartite layout's columns, spread to the full height, ordered to cross less.

    Column ``i`` (the i-th depth) sits at ``x = i``; its nodes take evenly spaced slots
    from 0 to 1 (a short column as tall as a long one, so every label has room), in the
    order of the mean slot of their neighbours already placed (the barycentre
    heuristic), one sweep from the sources on.
    """
    by_x: dict[float, list[Any]] = {}
    for node, (x, _y) in position.items():
        by_x.setdefault(float(x), []).append(node)
    placed: dict[Any, tuple[float, float]] = {}
    for column, x in enumerate(sorted(by_x)):
        nodes = by_x[x]
        slots = [1 - (i + 0.5) / len(nodes) for i in range(len(nodes))]

        def key(node: Any) -> tuple[float, str]:
            seen = [placed[p][1] for p in graph.pred[node] if p in placed]
            seen += [placed[s][1] for s in graph.succ[node] if s in placed]
            # slots run top (1) down: the highest mean neighbour first
            return (-sum(seen) / len(seen) if seen else 0.0, str(graph.nodes[node].get("label")))

        for node, y in zip(sorted(nodes, key=key), slots, strict=True):
            placed[node] = (float(column), y)
    return placed
