"""print(plan) is a short summary; render.plan_text(plan) the full rendering (issue 24)."""

from __future__ import annotations

from mddframes import plan_folder, pull_folder
from mddframes.tables_as_code.plan import REPR_LIMIT
from mddframes.tables_as_code.render import plan_text


def test_a_plan_prints_a_bounded_summary_and_text_keeps_the_rendering(client, tmp_path):
    pull_folder(client.api, "DWH", tmp_path, progress=False)
    edited = sorted((tmp_path / "tables").glob("*.csv"))[: REPR_LIMIT + 5]
    for path in edited:  # one more row at the end of each file's first data line
        lines = path.read_text("utf-8").splitlines(keepends=True)
        path.write_text("".join(lines) + (lines[-1] if len(lines) > 1 else ""), "utf-8")
    plan = plan_folder(client.api, tmp_path, progress=False)
    shown = repr(plan)
    assert shown == str(plan)
    assert shown.startswith(f"<Plan of {len(plan.objects)} object(s) in {str(tmp_path)!r}")
    lines = shown.splitlines()
    assert len(lines) <= REPR_LIMIT + 3
    assert len(shown) < 4000
    pending = [o for o in plan.objects if o.status != "unchanged"]
    assert len(pending) > REPR_LIMIT
    assert f"... and {len(pending) - REPR_LIMIT} more (plan.frame lists all)" in shown
    full = plan_text(plan)
    assert len(full) > len(shown) and pending[0].id in full
