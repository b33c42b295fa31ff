"""Lineage and impact analysis from a system's mappings, and search across a system.

:func:`read_lineage` reads every mapping of a system into an edge frame;
:class:`Lineage` answers ``upstream``, ``downstream``, ``impact`` and ``path``
questions over it and lists its ``cycles``; :func:`to_dot`, :func:`to_mermaid` and
:func:`draw` show an answer; :func:`search` finds text in names, tables and mappings.

Examples
--------
>>> lineage = mddframes.Lineage(client.read_lineage("FLOW"))
>>> lineage
<Lineage: 9 elements, 8 element edges, 21 column edges>
>>> lineage.impact("flow-02.customer_no").to_frame()[["element_name", "column", "depth"]]
        element_name       column  depth
0          stg_sales  customer_no      1
1  sales_by_customer  customer_no      2
2     customer_value  customer_no      3
>>> found = client.search("FLOW", "customer_no")
>>> len(found)
17
"""

from __future__ import annotations

from mddframes.lineage.answer import LineageAnswer
from mddframes.lineage.drawing import draw, layers, to_dot, to_mermaid
from mddframes.lineage.edges import EDGE_COLUMNS, edges_frame, read_lineage
from mddframes.lineage.graph import Lineage
from mddframes.lineage.search import PLACES, search

__all__ = [
    "EDGE_COLUMNS",
    "PLACES",
    "Lineage",
    "LineageAnswer",
    "draw",
    "edges_frame",
    "layers",
    "read_lineage",
    "search",
    "to_dot",
    "to_mermaid",
]
