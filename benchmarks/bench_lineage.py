"""Lineage benchmarks (goals of issue 27), on the 100,000-element scale system.

1. Building the lineage from fetched mappings (:func:`mddframes.lineage.edges_frame`
   plus :class:`mddframes.Lineage`: the edge frame and both networkx graphs) against
   ``read_mappings`` fetching the same mappings (8 workers, no progress bar). Goal: at
   most 1.0x, the build is not the bottleneck.
2. ``impact`` of one column, answer frame included, against a fixed budget of 50 ms.
   The column is the one whose impact reaches the most columns (the worst case).

The scale data has one mapping for about 40 elements (2,500 here, each with 5-10
column mappings, sources drawn from earlier source, stage and hub elements, so chains
form). Each figure is the median of repeats with its min and max; the emulator runs in
a child process (:func:`benchmarks.common.remote_emulator`), as a real service is
remote.
"""

from __future__ import annotations

import time

import networkx as nx

from benchmarks.common import Result, median_at_most, paired_times, remote_emulator
from mddframes import Client, Lineage
from mddframes.bulk import run_bulk
from mddframes.lineage import edges_frame

ELEMENTS = 100_000
SYSTEM = "SCALE"
WORKERS = 8
BUILD_REPEAT = 5
IMPACT_REPEAT = 25
IMPACT_BUDGET = 0.050  # seconds


def run() -> list[Result]:
    with remote_emulator(ELEMENTS) as emu, Client.from_emulator(emu) as client:
        tree = client.read_tree(SYSTEM)
        ids = tree["mapping_id"].dropna().tolist()
        fetched = run_bulk(client.api.get_mapping, ids, max_workers=WORKERS, progress=False)
        payloads = [p for p in fetched.results if p is not None]

        def fetch() -> object:
            return client.read_mappings(ids, max_workers=WORKERS, progress=False)

        def build() -> Lineage:
            return Lineage(edges_frame(tree, payloads))

        lineage = build()
        base, cand = paired_times(fetch, build, repeat=BUILD_REPEAT)

    start = _widest_impact(lineage)
    reached = len(lineage.impact(start))
    times = []
    for _ in range(IMPACT_REPEAT):
        began = time.perf_counter()
        lineage.impact(start).to_frame()
        times.append(time.perf_counter() - began)
    edges = lineage.columns.number_of_edges()
    return [
        median_at_most(
            f"lineage build ({len(ids):,} mappings, {edges:,} column edges) vs read_mappings",
            base,
            cand,
            1.0,
        ),
        median_at_most(
            f"impact of {start[0]}.{start[1]} ({reached} columns) vs a 50 ms budget",
            [IMPACT_BUDGET] * len(times),
            times,
            1.0,
        ),
    ]


def _widest_impact(lineage: Lineage) -> tuple[str, str]:
    """The column with the most dependent columns (the slowest impact question)."""
    graph = lineage.columns
    starts = [node for node in graph if graph.in_degree(node) == 0 and graph.out_degree(node)]
    return max(starts, key=lambda node: (len(nx.descendants(graph, node)), node))
