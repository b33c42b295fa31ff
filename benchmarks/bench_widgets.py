"""The ElementPicker on a 100,000-element system: building it and filtering it.

Baselines are what the picker cannot avoid: reading the tree (``read_tree``) for the
build, and one pandas ``str.contains`` over the paths for a search keystroke.
"""

from __future__ import annotations

import pandas as pd

from benchmarks.common import Result, at_most, best_time, remote_emulator
from mddframes import Client
from mddframes.widgets import ElementPicker

ELEMENTS = 100_000


def run() -> list[Result]:
    """Build and filter times of the picker against their floors."""
    with remote_emulator(ELEMENTS) as emu, Client.from_emulator(emu) as client:
        tree = client.read_tree("SCALE")
        build_floor = best_time(lambda: client.read_tree("SCALE"))
        build = best_time(lambda: ElementPicker(client, "SCALE"))
        picker = ElementPicker(client, "SCALE", tree=tree)
        word = str(tree["name"].iloc[len(tree) // 2])[:6].lower()
        paths = tree["path"].astype("string")

        def floor_filter() -> pd.DataFrame:
            return tree[paths.str.lower().str.contains(word, regex=False).fillna(False)]

        def keystroke() -> None:
            picker.search.value = ""
            picker.search.value = word

        filter_floor = best_time(floor_filter, repeat=5) * 2  # two keystrokes' worth
        filtering = best_time(keystroke, repeat=5)
        hub = best_time(lambda: setattr(picker.type_filter, "value", "HUB") or
                        setattr(picker.type_filter, "value", ""), repeat=5)  # fmt: skip
    return [
        at_most(
            f"ElementPicker build, {ELEMENTS:,} elements vs read_tree", build_floor, build, 1.5
        ),
        at_most(
            "ElementPicker search (2 keystrokes) vs 2x pandas str.contains",
            filter_floor,
            filtering,
            1.5,
        ),
        at_most(
            "ElementPicker type filter (2 changes) vs 2x pandas str.contains",
            filter_floor,
            hub,
            1.5,
        ),
    ]
