"""Workbooks opened and saved by a real spreadsheet program read back exactly.

LibreOffice Calc (headless ``soffice --convert-to xlsx``, a temporary profile) re-saves
the workbooks of every sample table with rows, of every mapping and of the hardest
texts, as a reviewer who opens the file and saves it without touching a cell would;
the frames read back must write nothing (an empty dry-run diff). Then cells are
edited in the re-saved files and the files saved by LibreOffice again: the diff must
be exactly the edited cells.

soffice starts slowly (seconds per start), so each phase converts all its files in
one invocation. Without ``soffice`` the tests skip, except under CI, where .ci/run
installs it (Debian package ``libreoffice-calc-nogui``) and a skip would hide a gap.
"""

from __future__ import annotations

import re
import time
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import openpyxl
import pandas as pd
import pytest
from spreadsheet_program import resave  # noqa: E402

from mddframes import Client
from mddframes.codec import from_payload, to_payload
from mddframes.codec.frame import payload_rows
from mddframes.context import ATTRS_KEY, ReadContext
from mddframes.spreadsheet import read_excel, to_excel
from mddframes.spreadsheet.cells import EMPTY_STRING_FORMULA, encoding_of

pytestmark = [
    pytest.mark.spreadsheet_program,
    pytest.mark.slow,  # the marker requires soffice (tests/needs.py)
]

# Texts a reviewer's program must give back unchanged: formula-looking text, control
# characters and the characters XML cannot hold (as _xHHHH_ escapes), escape
# look-alikes (openpyxl's own reader loses "x005F_"), line breaks (LibreOffice keeps
# CR LF as LF), astral-plane text.
HARD_TEXTS = [
    "=SUM(A1:A3)", "+1", "-2", "@x", "=TRUE()", "#N/A", "TRUE", "1e5", "'quoted", " padded ",
    "a\x00b", "\x01\x1f", "\ufffe", "_x0041_", "_x005F_", "x005F_", "ax005F_b", "_x0001_",
    "tab\there", "a\r\nb", "cr\r", "lf\n", "🙂", "é\u2028", "", None,
]  # fmt: skip


def sheet_xml(path: Path) -> str:
    """The XML of every worksheet of a workbook, concatenated."""
    with zipfile.ZipFile(path) as archive:
        names = [n for n in archive.namelist() if n.startswith("xl/worksheets/sheet")]
        return "".join(archive.read(n).decode("utf-8") for n in names)


@dataclass
class Batch:
    """The workbooks of the first phase: exported, then re-saved by LibreOffice."""

    folder: Path
    tables: dict[str, tuple[str, Path, Path]] = field(default_factory=dict)  # id -> system..
    mappings: dict[str, tuple[list[str], Path, Path]] = field(default_factory=dict)  # system
    texts: tuple[dict[str, Any], Path, Path] | None = None
    seconds: float = 0.0


def _hard_texts_frame() -> tuple[dict[str, Any], pd.DataFrame]:
    payload = {
        "id": "texts", "name": "texts",
        "metadata": {"columns": [{"name": "s", "dataType": "VARCHAR"},
                                 {"name": "j", "dataType": "JSON"}]},
        "data": [{"s": t, "j": [t]} for t in HARD_TEXTS],
    }  # fmt: skip
    frame = from_payload(payload, "table")
    frame.attrs[ATTRS_KEY] = ReadContext("table", "texts", payload)
    return payload, frame


@pytest.fixture(scope="module")
def resaved(emulator, tmp_path_factory) -> Batch:
    """Every sample table with rows (both systems), every mapping and the hard texts,
    exported with ``to_excel`` and re-saved once by LibreOffice."""
    batch = Batch(tmp_path_factory.mktemp("program"))
    exported = batch.folder / "exported"
    exported.mkdir()
    emulator.reset()
    sources: list[Path] = []
    with Client.from_emulator(emulator) as client:
        for system in ("DWH", "LAB"):
            tree = client.read_tree(system)
            for table_id in tree["table_id"].dropna():
                frame = client.read_table(table_id)
                if len(frame):
                    path = exported / f"table-{len(batch.tables):03d}.xlsx"
                    to_excel(frame, path)
                    batch.tables[table_id] = (system, path, path)
                    sources.append(path)
            mapping_ids = tree["mapping_id"].dropna().tolist()
            path = exported / f"mappings-{system}.xlsx"
            to_excel({m: client.read_mapping(m) for m in mapping_ids}, path, kind="mapping")
            batch.mappings[system] = (mapping_ids, path, path)
            sources.append(path)
    payload, frame = _hard_texts_frame()
    to_excel(frame, exported / "texts.xlsx")
    sources.append(exported / "texts.xlsx")

    started = time.perf_counter()
    saved = dict(zip(sources, resave(sources, batch.folder / "resaved"), strict=True))
    batch.seconds = time.perf_counter() - started
    batch.tables = {t: (s, p, saved[p]) for t, (s, p, _) in batch.tables.items()}
    batch.mappings = {s: (ids, p, saved[p]) for s, (ids, p, _) in batch.mappings.items()}
    batch.texts = (payload, exported / "texts.xlsx", saved[exported / "texts.xlsx"])
    return batch


def test_every_sample_table_reads_back_unchanged_after_a_resave(resaved, client):
    per_system: dict[str, int] = {}
    with_formulas = []
    for table_id, (system, _, path) in resaved.tables.items():
        result = client.write_table(table_id, read_excel(path), dry_run=True)

        assert result.diff.empty, (table_id, result.diff.summary)
        assert result.status == "unchanged"
        per_system[system] = per_system.get(system, 0) + 1
        if re.search(r"<f[^>]*>(TRUE|FALSE)\(\)</f>", sheet_xml(path)):
            with_formulas.append(table_id)

    print(f"LibreOffice re-saved {per_system} tables in {resaved.seconds:.1f} s")
    # both systems take part, and the boolean cells really came back as formulas
    assert per_system["DWH"] >= 20 and per_system["LAB"] >= 10, per_system
    assert len(with_formulas) >= 5, with_formulas


def test_every_mapping_reads_back_unchanged_after_a_resave(resaved, client):
    for system, (mapping_ids, _, path) in resaved.mappings.items():
        frames = read_excel(path)

        assert list(frames) == mapping_ids, system
        for mapping_id, frame in frames.items():
            result = client.write_mapping(mapping_id, frame, dry_run=True)
            assert result.diff.empty, (system, mapping_id, result.diff.summary)


def test_hard_texts_survive_a_resave(resaved):
    payload, _, path = resaved.texts

    back = read_excel(path)

    assert back["s"].tolist()[:-1] == HARD_TEXTS[:-1] and pd.isna(back["s"].iloc[-1])
    assert back["j"].tolist() == [[t] for t in HARD_TEXTS]
    assert to_payload(back, payload)["data"] == payload["data"]


def test_formula_looking_text_stays_text_and_no_other_formula_is_written(resaved):
    samples = [p for _, p, _ in resaved.tables.values()] + [resaved.texts[1]]
    for path in samples:  # what to_excel wrote: no formula but the empty string's
        formulas = set(re.findall(r"<f[^>]*>([^<]*)</f>", sheet_xml(path)))
        assert formulas <= {"&quot;&quot;", '""'}, (path.name, formulas)
    assert EMPTY_STRING_FORMULA == '=""'

    book = openpyxl.load_workbook(resaved.texts[2])  # what LibreOffice saved
    try:
        cells = {c.value: c for c in book["texts"]["B"][1:] if c.value is not None}
    finally:
        book.close()
    for text in ("=SUM(A1:A3)", "+1", "-2", "@x", "=TRUE()", "#N/A"):
        assert cells[text].data_type == "s", text
    assert {c.value for c in cells.values() if c.data_type == "f"} == {'=""'}


# -- edits made in the re-saved file, saved by LibreOffice again ---------------------------


def _new_value(encoding: str, old: Any, salt: int) -> tuple[Any, Any] | None:
    """(what to type into the cell, the JSON value the service then holds), or None."""
    if encoding == "text":
        text = ["=1+1", "+49 30", "-5", "@home"][salt % 4] + f" #{salt}"
        return text, text
    if encoding == "integer":
        number = 4242 if old != 4242 else 4243
        return number, number
    if encoding == "number":
        number = 2.5 if old != 2.5 else 3.25
        return number, number
    if encoding == "boolean":
        flag = not old if isinstance(old, bool) else True
        return flag, flag
    return None


def _edit_resaved(path: Path, out: Path, salt: int) -> dict[tuple[int, str], Any]:
    """Type one new value per editable column type into a re-saved sheet (openpyxl)."""
    frame = read_excel(path)
    rows = payload_rows(frame.attrs[ATTRS_KEY].load_document(), "table")
    book = openpyxl.load_workbook(path)
    sheet = book.worksheets[0]  # the object's sheet; the hidden one comes after it
    assert sheet.sheet_state == "visible"
    header = [c.value for c in sheet[1]]
    edits: dict[tuple[int, str], Any] = {}
    done: set[str] = set()
    for name in frame.columns:
        encoding = encoding_of(frame[name].dtype)
        if encoding in done or encoding is None:
            continue
        position = (salt + len(done)) % len(frame)
        new = _new_value(encoding, rows[position].get(name), salt)
        if new is None:
            continue
        typed, value = new
        cell = sheet.cell(position + 2, header.index(name) + 1)
        assert sheet.cell(position + 2, 1).value == position
        cell.value = typed
        if isinstance(typed, str):
            cell.data_type = "s"  # typed into a text cell
        edits[(position, name)] = value
        done.add(encoding)
    book.save(out)
    book.close()
    return edits


def test_edits_in_the_resaved_file_change_exactly_those_cells(resaved, client, tmp_path):
    edited = tmp_path / "edited"
    edited.mkdir()
    plan = {}
    for salt, (table_id, (_, _, path)) in enumerate(resaved.tables.items()):
        out = edited / path.name
        plan[table_id] = (out, _edit_resaved(path, out, salt))
    saved = resave([out for out, _ in plan.values()], tmp_path / "resaved")

    kinds = set()
    for (table_id, (_, edits)), path in zip(plan.items(), saved, strict=True):
        result = client.write_table(table_id, read_excel(path), dry_run=True)

        changed = {(r, c): new for r, c, _, new in result.diff.changed.itertuples(index=False)}
        assert changed == edits, (table_id, result.diff.summary)
        assert result.diff.added.empty and result.diff.deleted.empty
        kinds.update(type(v).__name__ for v in edits.values())
    assert kinds == {"str", "int", "float", "bool"}

    # and one of them written for real: the service holds exactly the edited cells
    table_id = next(t for t, (_, e) in plan.items() if any(isinstance(v, bool) for v in e.values()))
    before = client.api.get_table(table_id)
    frame = read_excel(saved[list(plan).index(table_id)])
    result = client.write_table(table_id, frame, backup_dir=tmp_path / "backups")
    assert result.status == "written" and result.verified
    after = client.api.get_table(table_id)
    for position, (old, new) in enumerate(zip(before["data"], after["data"], strict=True)):
        want = dict(old)
        want.update({c: v for (r, c), v in plan[table_id][1].items() if r == position})
        assert new == want, position
