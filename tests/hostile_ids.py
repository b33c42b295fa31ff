"""Hostile ids and answers put straight into a running emulator's store, for the tests of
what mddframes writes to disk (issue 35): ids the service accepts but the emulator's
sample does not hold (300 characters, 100 ``é``), and answers nested 1,000 levels deep.

The store is changed under its own lock, by text: every JSON string ``"<old>"`` in the
stored documents (element, tree entry, table, mapping) becomes ``"<new>"``, and the id
columns follow. Import it by name (the tests folder is on ``sys.path``).
"""

from __future__ import annotations

import json
import re
from typing import Any

#: Ids of the "awkward ids" folder of the sample's LAB system: element, table and mapping
#: of one id each.
LAB_SYSTEM = "LAB"
PLAIN_LAB_ID = "tbl"
LONG_IDS = ("x" * 120 + "/../" + "y" * 176, "é" * 100)


def rename_object(emu: Any, old: str, new: str) -> None:
    """Give the element, table and mapping ``old`` (of one id) the id ``new``."""
    store = emu._state.store
    quoted_old, quoted_new = json.dumps(old), json.dumps(new)
    with store._lock:
        conn = store._conn
        for table, columns in {"elements": ("doc", "entry"), "tables": ("doc",),
                               "mappings": ("doc",)}.items():  # fmt: skip
            for column in columns:
                conn.execute(
                    f"UPDATE {table} SET {column} = replace({column}, ?, ?)",  # noqa: S608
                    (quoted_old, quoted_new),
                )
        for table, column in (("elements", "id"), ("elements", "parent_id"),
                              ("tables", "id"), ("tables", "structure_id"),
                              ("mappings", "id"), ("mappings", "structure_id"),
                              ("mappings", "target_id")):  # fmt: skip
            conn.execute(
                f"UPDATE {table} SET {column} = ? WHERE {column} = ?",  # noqa: S608
                (new, old),
            )


def nested_text(depth: int, leaf: str = "1") -> str:
    """The JSON text of ``{"a": {"a": ... leaf}}``, ``depth`` objects deep."""
    return '{"a":' * depth + leaf + "}" * depth


def nest_attribute(emu: Any, element_id: str, depth: int) -> None:
    """Give element ``element_id`` an attribute ``deep`` nested ``depth`` levels."""
    store = emu._state.store
    with store._lock:
        doc = store._conn.execute(
            "SELECT doc FROM elements WHERE id = ?", (element_id,)
        ).fetchone()[0]
        doc, found = re.subn(
            r'"attributes":\s*\{',
            lambda _: f'"attributes":{{"deep":{nested_text(depth)},',
            doc,
            count=1,
        )
        assert found, doc[:200]
        store._conn.execute("UPDATE elements SET doc = ? WHERE id = ?", (doc, element_id))


def nest_cell(emu: Any, table_id: str, depth: int) -> None:
    """Give the first row of table ``table_id`` a cell ``deep`` nested ``depth`` levels."""
    store = emu._state.store
    with store._lock:
        doc = store._conn.execute("SELECT doc FROM tables WHERE id = ?", (table_id,)).fetchone()[0]
        doc, found = re.subn(
            r'"data":\s*\[\s*\{', lambda _: f'"data":[{{"deep":{nested_text(depth)},', doc, count=1
        )
        assert found, doc[:200]
        store._conn.execute("UPDATE tables SET doc = ? WHERE id = ?", (doc, table_id))
