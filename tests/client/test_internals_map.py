"""docs/internals.md's module map lists every module of mddframes, and only those."""

from __future__ import annotations

import re
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parents[2]


def _map_entries() -> list[str]:
    text = (REPOSITORY / "docs" / "internals.md").read_text(encoding="utf-8")
    section = text.split("## Module map", 1)[1]
    blocks = re.findall(r"```\n(.*?)```", section, flags=re.DOTALL)
    listing = blocks[1]  # the first block draws the layers, the second lists the modules
    return re.findall(r"^(\S+\.py)\s+\S", listing, flags=re.MULTILINE)


def test_the_module_map_names_every_module_once():
    package = REPOSITORY / "mddframes"
    modules = sorted(str(p.relative_to(package)) for p in package.rglob("*.py"))
    entries = _map_entries()
    assert len(entries) == len(set(entries)), "a module is listed twice"
    assert sorted(set(modules) - set(entries)) == [], "modules missing from docs/internals.md"
    assert sorted(set(entries) - set(modules)) == [], (
        "docs/internals.md names modules that are gone"
    )
