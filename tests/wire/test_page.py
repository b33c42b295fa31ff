"""docs/wire-format.md's tables are the wire profile's: made from it, never edited apart."""

from __future__ import annotations

import re
from pathlib import Path

from mddframes.wire import dialects, page
from mddframes.wire.dialects import DialectEntry
from mddframes.wire.rows import ROWS

PAGE = Path(__file__).parents[2] / "docs" / "wire-format.md"


def test_the_page_holds_exactly_the_generated_tables():
    text = PAGE.read_text("utf-8")
    found = page.tables(text)
    assert found == {
        page.ASSUMPTIONS_HEADER: page.assumptions_markdown(),
        page.DIALECTS_HEADER: page.dialects_markdown(),
    }
    assert page.rendered(text) == text


def test_the_tables_have_a_row_per_assumption_and_per_dialect():
    text = PAGE.read_text("utf-8")
    found = page.tables(text)
    assert len(found[page.ASSUMPTIONS_HEADER].splitlines()) == 29 + 2
    numbers = [line.split(" | ")[0] for line in found[page.ASSUMPTIONS_HEADER].splitlines()[2:]]
    assert numbers == [f"| {n}" for n in range(1, 30)]
    names = [line.split(" | ")[0] for line in found[page.DIALECTS_HEADER].splitlines()[2:]]
    assert names == ["| `default`", "| `spring-page`", "| `snake-case`", "| `nested-tree`",
                     "| `unprefixed`", "| `literal-realm`", "| `etag`"]  # fmt: skip


def test_a_new_dialect_entry_changes_the_page_and_the_drift_check_sees_it(monkeypatch, tmp_path):
    entry = DialectEntry("child-structures", "nested", "the tree nested under childStructures",
                         "11", "the tree as nested `childStructures`",
                         "flattened in pre-order", "tree", children_key="childStructures")  # fmt: skip
    before = PAGE.read_text("utf-8")
    monkeypatch.setitem(dialects.DIALECTS, entry.name, entry)
    assert page.rendered(before) != before  # the committed page is now stale: the test above fails
    copy = tmp_path / "wire-format.md"
    copy.write_text(before, "utf-8")
    assert page.main([str(copy)]) == 0
    rewritten = copy.read_text("utf-8")
    assert "| `child-structures` | the tree as nested `childStructures` |" in rewritten
    assert page.tables(rewritten)[page.DIALECTS_HEADER] == page.dialects_markdown()
    # nothing but the table of dialects changed
    assert rewritten.replace(page.dialects_markdown(), "") == before.replace(
        page.tables(before)[page.DIALECTS_HEADER], ""
    )


def test_rows_are_numbered_in_order_and_name_only_known_dialects():
    assert [row.number for row in ROWS] == list(range(1, 30))
    for row in ROWS:
        named = set(re.findall(r"`([a-z]+(?:-[a-z]+)*)`", row.dialects))
        assert named <= set(dialects.DIALECTS), row.number
