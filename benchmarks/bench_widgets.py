"""The ElementPicker on a 100,000-element system: building it and filtering it.

Baselines are what the picker cannot avoid: reading the tree (``read_tree``) for the
build, and one pandas ``str.contains`` over the paths for a search keystroke.
"""

from __future__ import annotations

from benchmarks.common import Result, median_at_most, paired_times, remote_emulator
from mddframes import Client
from mddframes.widgets import ElementPicker

ELEMENTS = 100_000


def run() -> list[Result]:
    """Build and filter times of the picker against their floors."""
    with remote_emulator(ELEMENTS) as emu, Client.from_emulator(emu) as client:
        tree = client.read_tree("SCALE")
        build_floor, build = paired_times(
            lambda: client.read_tree("SCALE"), lambda: ElementPicker(client, "SCALE"), repeat=3
        )
        picker = ElementPicker(client, "SCALE", tree=tree)
        word = str(tree["name"].iloc[len(tree) // 2])[:6].lower()
        paths = tree["path"].astype("string")

        def floor_filter() -> None:  # two keystrokes' worth of pandas filtering
            for _ in range(2):
                tree[paths.str.lower().str.contains(word, regex=False).fillna(False)]

        def keystroke() -> None:
            picker.search.value = ""
            picker.search.value = word

        def type_filter() -> None:
            picker.type_filter.value = "HUB"
            picker.type_filter.value = ""

        search_floor, searching = paired_times(floor_filter, keystroke, repeat=5)
        type_floor, typing = paired_times(floor_filter, type_filter, repeat=5)
    return [
        median_at_most(
            f"ElementPicker build, {ELEMENTS:,} elements vs read_tree", build_floor, build, 1.5
        ),
        median_at_most(
            "ElementPicker search (2 keystrokes) vs 2x pandas str.contains",
            search_floor,
            searching,
            1.5,
        ),
        median_at_most(
            "ElementPicker type filter (2 changes) vs 2x pandas str.contains",
            type_floor,
            typing,
            1.5,
        ),
    ]
