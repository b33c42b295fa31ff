"""Adding a dialect is one entry (plus, for a new spelling, the spelling in the profile).

A subprocess adds them to the wire profile before anything of mddframes reads it (as an
edit of mddframes/wire/ would), then runs the client, doctor, the emulator and the
recording learner: each follows the entry, none needs a change of its own. The second
case leaves the spelling out of the profile and shows it is what the readers go by.
The new spelling, ``subElements``, is one no built-in dialect or reader knew.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytestmark = [pytest.mark.emulator, pytest.mark.slow]

SCRIPT = textwrap.dedent(
    """
    import json, sys
    from pathlib import Path

    from mddframes.wire import dialects, profile

    if sys.argv[2] == "profile and dialect":  # the spelling, as one more entry of the profile
        profile.CHILDREN_KEYS = (*profile.CHILDREN_KEYS, "subElements")
    dialects.DIALECTS["sub-elements"] = dialects.DialectEntry(  # the dialect's entry
        "sub-elements", "nested", "the tree nested under subElements", "11",
        "the tree as nested `subElements` without parent ids",
        "flattened in pre-order, each child given its parent's id", "tree",
        children_key="subElements",
    )

    from mddframes import Client, run_doctor
    from mddframes.emulator import serve
    from mddframes.emulator.recordings import Recording, learn

    def shape(tree):
        kept = tree[["id", "parent_id", "depth", "path"]].astype("string")
        return kept.sort_values("id").reset_index(drop=True).to_dict("list")

    har = Path(sys.argv[1])
    out = {}
    with serve() as emu, Client.from_emulator(emu) as client:
        out["reference"] = shape(client.read_tree("DWH"))
    with serve(dialect="sub-elements") as emu, Client.from_emulator(emu) as client:
        raw = client.api.get_tree("DWH")
        out["served"] = {"roots": len(raw), "keys": sorted(raw[0])}
        with client.recording(har):
            try:
                out["tree"] = shape(client.read_tree("DWH"))
            except Exception as exc:
                out["tree"] = repr(exc)
            report = run_doctor(client.api, system="DWH")
    out["doctor"] = {r["check"]: [r["result"], r["evidence"]] for r in report.to_dict("records")}
    learned = learn(Recording.read(har))
    out["learned"] = [learned.dialect, sorted(learned.differences), learned.uncovered]
    if learned.dialect == "sub-elements":
        with serve(replay=har) as emu, Client.from_emulator(emu) as client:
            out["replayed"] = [emu.dialect, shape(client.read_tree("DWH"))]
    print(json.dumps(out))
    """
)


def _run(tmp_path: Path, mode: str) -> dict:
    root = Path(__file__).parents[2]
    env = {**os.environ, "PYTHONPATH": str(root)}
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(tmp_path / "tenant.har"), mode],
        capture_output=True, text=True, env=env, timeout=300, cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_client_doctor_emulator_and_learner_follow_a_new_dialect_entry(tmp_path):
    out = _run(tmp_path, "profile and dialect")
    # the emulator serves the entry: the roots only, their children nested under its key
    assert out["served"]["roots"] < len(out["reference"]["id"])
    assert "subElements" in out["served"]["keys"] and "parentId" not in out["served"]["keys"]
    # the client reads the same tree as from the reference dialect
    assert out["tree"] == out["reference"]
    # doctor names the difference, and only that one
    differs = {check: found for check, found in out["doctor"].items() if found[0] != "ok"}
    assert list(differs) == ["tree"] and differs["tree"][0] == "differs"
    assert "nested subElements lists" in differs["tree"][1]
    # the learner names the new dialect; its replay serves it, and reads the same again
    assert out["learned"] == ["sub-elements", ["sub-elements"], []]
    assert out["replayed"] == ["sub-elements", out["reference"]]


def test_without_the_profile_entry_no_reader_knows_the_spelling(tmp_path):
    out = _run(tmp_path, "dialect only")
    assert "subElements" in out["served"]["keys"]  # the emulator serves the dialect all the same
    assert out["tree"] != out["reference"]  # the client reads the roots only (or fails)
    assert "nested subElements" not in out["doctor"]["tree"][1]
    assert out["learned"][0] == "default"  # the learner sees no nesting to name
