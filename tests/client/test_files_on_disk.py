"""What mddframes writes to disk (issue 35): every kind of file with its mode, whatever
the umask; any id as a file name; values nested as deep as the decoder takes them.

docs/guide/security.md states the rules these tests hold:

- kept (backups, journals, locks, caches): files 0600, folders 0700, whatever the umask;
- outputs to a folder the user names: the user's umask.
"""

from __future__ import annotations

import json
import os
import stat
import sys
import warnings
import zipfile
from pathlib import Path

import pytest
from hostile_ids import LAB_SYSTEM, LONG_IDS, PLAIN_LAB_ID, nest_attribute, nest_cell, rename_object
from hypothesis import given, settings
from hypothesis import strategies as st
from scripted_service import API, make_client

from mddframes import Client
from mddframes.archive import ExportArchive
from mddframes.codec import depth
from mddframes.disk_modes import current_umask, private_dir
from mddframes.disk_names import MAX_NAME_BYTES, MAX_STEM, id_file_name, served_file_name
from mddframes.errors import DataShapeError, MddError, MddWarning
from mddframes.snapshot import read_snapshot
from mddframes.spreadsheet import to_excel
from mddframes.tables_as_code import plan_folder, pull_folder
from mddframes.writing import load_backup

posix_only = pytest.mark.skipif(os.name != "posix", reason="file modes are POSIX")


@pytest.fixture
def umask():
    """Set the process umask for the test (``umask(0o022)``), restored after it."""
    previous = os.umask(0o022)
    os.umask(previous)

    def set_to(mask: int) -> None:
        os.umask(mask)

    yield set_to
    os.umask(previous)


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def _edit_first_label(client: Client, table_id: str):
    frame = client.read_table(table_id)
    frame.loc[frame.index[0], "label"] = f"changed {len(table_id)}"
    return frame


def write_every_kind(client: Client, tmp: Path) -> dict[str, list[Path]]:
    """Make mddframes write every kind of file it writes; the paths, by kind.

    Kinds named ``kept ...`` are what mddframes keeps (under the backup root and the lock
    folder); ``output ...`` are written where the user said.
    """
    backups, locks, out = tmp / "backups", tmp / "locks", tmp / "out"
    found: dict[str, list[Path]] = {}

    result = client.write_table(
        "lab-source", _edit_first_label(client, "lab-source"), backup_dir=backups
    )
    long_frame = client.read_tables(["lab-source"], progress=False)
    long_frame.loc[long_frame.index[0], "label"] = "changed again"
    batch = client.write_tables(long_frame, backup_dir=backups, progress=False)
    backup = Path(result.backup)
    journal = Path(batch.attrs["journal"])
    found["kept: backup file"] = [backup]
    found["kept: backup folders (root, tenant, kind, id)"] = [
        backups, backup.parent.parent.parent, backup.parent.parent, backup.parent
    ]  # fmt: skip
    found["kept: journal file"] = [journal]
    found["kept: journal folder"] = [journal.parent]
    lock_files = sorted(locks.rglob("*.lock"))
    found["kept: lock files"] = lock_files
    found["kept: lock holder files"] = sorted(locks.rglob("*.holder"))
    found["kept: lock folders"] = [locks, *{p.parent for p in lock_files}]

    frames = pull_folder(client.api, LAB_SYSTEM, out / "code", ids=["lab-source"], fmt="csv",
                         progress=False)  # fmt: skip
    assert frames["action"].tolist() == ["written"]
    pull_folder(client.api, LAB_SYSTEM, out / "code-json", ids=["lab-source"], fmt="json",
                progress=False)  # fmt: skip
    pull_folder(client.api, LAB_SYSTEM, out / "code-xlsx", ids=["lab-source"], fmt="xlsx",
                progress=False)  # fmt: skip
    found["output: pulled files (csv, sidecar, json, xlsx)"] = [
        p for p in (out / "code").rglob("*") if p.is_file()
    ] + [p for name in ("code-json", "code-xlsx") for p in (out / name).rglob("*") if p.is_file()]
    found["output: pulled folders"] = [out / "code", out / "code" / "tables"]
    plan = plan_folder(client.api, out / "code", progress=False)
    found["output: saved plan"] = [plan.save(out / "plan.json")]

    task = client.start_export(["lab-source"], "sql-ddl")
    task.wait(timeout=30)
    archive = task.download(out / "exports" / "export.zip")
    found["output: export zip"] = [Path(archive.path)]
    found["output: export folder"] = [out / "exports"]
    extracted = archive.extract(out / "extracted" / "deeper")
    found["output: extracted scripts"] = extracted
    found["output: extraction folders"] = [out / "extracted", out / "extracted" / "deeper"]
    scripts = client.export_scripts(["lab-source"], "sql-ddl", out / "scripts", progress=False)
    found["output: export_scripts files"] = [Path(p) for p in scripts["path"]]
    found["output: export_scripts folder"] = [out / "scripts"]
    found["output: Script.save"] = [
        client.export_script("lab-source", "sql-ddl").save(out / "one" / "script.sql")
    ]
    to_excel(client.read_table("lab-source"), out / "book.xlsx")
    found["output: workbook"] = [out / "book.xlsx"]
    client.snapshot(LAB_SYSTEM, out / "snap", progress=False)
    snap_files = [p for p in (out / "snap").rglob("*") if p.is_file()]
    found["output: snapshot files"] = snap_files
    found["output: snapshot folders"] = [out / "snap", *{p.parent for p in snap_files}]
    return found


def _expected(kind: str, path: Path, mask: int) -> int:
    if kind.startswith("kept"):
        return 0o700 if path.is_dir() else 0o600
    return (0o777 if path.is_dir() else 0o666) & ~mask


@posix_only
@pytest.mark.parametrize("mask", [0o022, 0o002, 0o077], ids=["022", "002", "077"])
def test_every_kind_of_file_has_the_mode_of_its_rule(emu, tmp_path, umask, mask):
    umask(mask)
    with Client.from_emulator(emu, lock_dir=str(tmp_path / "locks")) as client:
        found = write_every_kind(client, tmp_path)
    wrong = {}
    for kind, paths in found.items():
        assert paths, kind
        for path in paths:
            expected = _expected(kind, path, mask)
            if _mode(path) != expected:
                wrong[f"{kind}: {path.relative_to(tmp_path)}"] = (oct(_mode(path)), oct(expected))
    assert wrong == {}


@posix_only
def test_the_umask_is_read_without_being_changed(umask):
    umask(0o027)
    assert current_umask() == 0o027
    assert current_umask() == 0o027


@posix_only
def test_a_kept_folder_that_is_readable_by_others_is_named_in_one_warning(emu, tmp_path, umask):
    umask(0o022)
    backups = tmp_path / "wide-backups"
    backups.mkdir(mode=0o755)
    os.chmod(backups, 0o755)
    with Client.from_emulator(emu, lock_dir=str(tmp_path / "locks")) as client:
        with pytest.warns(MddWarning, match="readable by others") as caught:
            client.write_table("lab-source", _edit_first_label(client, "lab-source"),
                               backup_dir=backups)  # fmt: skip
        assert [str(backups) in str(w.message) for w in caught] == [True]
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            client.write_table("lab-source", _edit_first_label(client, "lab-source"),
                               backup_dir=backups)  # fmt: skip
    assert _mode(backups) == 0o755  # named, not changed: it is the user's folder


@posix_only
def test_private_dir_makes_missing_parents_owner_only_under_any_umask(tmp_path, umask):
    umask(0o000)
    target = private_dir(tmp_path / "a" / "b" / "c", root=tmp_path / "a")
    assert [_mode(p) for p in (tmp_path / "a", target.parent, target)] == [0o700] * 3


# --------------------------------------------------------------------------- any id, any name

hostile_ids = st.one_of(
    st.text(max_size=400),
    st.text(alphabet='é./\\%\x00~ :*?"<>|', max_size=300),
    st.sampled_from(
        [
            "CON",
            "con",
            "Nul",
            "COM1",
            "LPT9",
            "AUX",
            ".",
            "..",
            "...",
            "",
            "%2E%2E",
            "%00",
            "~",
            "a" * 300,
            "é" * 100,
            "../" * 80,
        ]
    ),  # fmt: skip
)


@settings(max_examples=300, deadline=None)
@given(object_id=hostile_ids)
def test_any_id_is_one_safe_file_name(tmp_path_factory, object_id):
    name = id_file_name(object_id)
    assert name.isascii() and name.isprintable()
    assert 0 < len(name) <= MAX_STEM
    assert "/" not in name and "\\" not in name and name not in (".", "..")
    assert not name.startswith(".")  # never hidden
    assert name.split(".")[0].upper() not in {"CON", "PRN", "AUX", "NUL", "COM1", "LPT9"}
    folder = tmp_path_factory.mktemp("names", numbered=True)
    (folder / (name + ".lock.holder.12345.140000000000000")).write_text("x")
    assert [p.name.startswith(name) for p in folder.iterdir()] == [True]


@settings(max_examples=300, deadline=None)
@given(a=hostile_ids, b=hostile_ids)
def test_different_ids_never_share_a_file_name(a, b):
    if a != b:
        assert id_file_name(a) != id_file_name(b)


def test_short_file_name_safe_ids_keep_their_name():
    # existing backups, locks and pulled files of ordinary ids keep their names
    for object_id in ("tbl-0109", "dwh_0001", "A-b_9"):
        assert id_file_name(object_id) == object_id
    assert id_file_name("a.b") == "a%2Eb"
    assert id_file_name("CON") == "%43ON"
    assert id_file_name("") != id_file_name("\x00")


@settings(max_examples=300, deadline=None)
@given(
    stem=st.text(max_size=300),
    extension=st.sampled_from(["sql", "yml", "md", "txt", ""]),
    prefix=st.sampled_from(["", "../", "..\\", "/abs/", "C:\\x\\"]),
)
def test_a_served_file_name_is_one_safe_name_that_keeps_its_extension(
    tmp_path_factory, stem, extension, prefix
):
    sent = f"{prefix}{stem}.{extension}" if extension else f"{prefix}{stem}"
    name = served_file_name(sent, fallback="fallback.txt")
    assert len(name.encode("utf-8", "surrogatepass")) <= MAX_NAME_BYTES
    assert "/" not in name and "\\" not in name and "\x00" not in name
    assert name.strip(".") and not name.endswith((".", " "))
    bare = stem.replace("\x00", "").strip().rstrip(". ")
    if extension and bare and "/" not in stem and "\\" not in stem and bare.strip("."):
        assert name.endswith(f".{extension}") or name == "fallback.txt"
    if "\ud800" <= min(name, default="a") or not name.isprintable():
        return
    folder = tmp_path_factory.mktemp("served", numbered=True)
    (folder / name).write_text("x")


@pytest.mark.parametrize("name", ["..", ".", "", "/", "a/..", None])
def test_an_unusable_served_name_takes_the_object_type_extension(script, name):
    plan, url = script
    headers = {"Content-Type": "text/plain; charset=utf-8"}
    if name is not None:
        headers["Content-Disposition"] = f'attachment; filename="{name}"'
    plan.routes[f"{API}/structure/dwh-0064/export/sql-ddl"] = lambda h: (200, headers, b"x;")
    plan.routes[f"{API}/object-type"] = lambda h: (
        200,
        {"Content-Type": "application/json"},
        json.dumps([{"id": "sql-ddl", "fileExtension": "sql"}]).encode(),
    )
    with make_client(url) as client:
        assert client.export_script("dwh-0064", "sql-ddl").file_name == "dwh-0064.sql"


def test_a_served_name_of_300_characters_is_cut_keeping_its_extension(script, tmp_path):
    plan, url = script
    long_name = "é" * 150 + "x" * 150 + ".sql"
    plan.routes[f"{API}/structure/e1/export/sql-ddl"] = lambda h: (
        200,
        {"Content-Type": "text/plain; charset=utf-8",
         "Content-Disposition": f"attachment; filename*=UTF-8''{'%C3%A9' * 150}{'x' * 150}.sql"},
        b"select 1;",
    )  # fmt: skip
    with make_client(url) as client:
        frame = client.export_scripts(["e1"], "sql-ddl", tmp_path, progress=False)
    assert frame["ok"].tolist() == [True], frame["error"].tolist()
    path = Path(frame["path"][0])
    assert path.read_text() == "select 1;" and path.suffix == ".sql"
    assert path.name.startswith("é" * 10) and path.name != long_name


def test_an_export_zip_entry_of_a_300_character_id_is_extracted(tmp_path):
    entry = "x" * 300 + "__" + "y" * 20 + ".sql"
    with zipfile.ZipFile(tmp_path / "a.zip", "w") as zf:
        zf.writestr(entry, "select 1;")
        zf.writestr("folder/" + "é" * 200 + ".md", "# doc")
    written = ExportArchive(tmp_path / "a.zip").extract(tmp_path / "out")
    assert [p.read_text() for p in written] == ["select 1;", "# doc"]
    assert [p.suffix for p in written] == [".sql", ".md"]
    assert written[1].parent == tmp_path / "out" / "folder"


@pytest.mark.parametrize("long_id", LONG_IDS, ids=["300 characters", "100 é"])
def test_a_long_id_is_read_written_backed_up_locked_snapshotted_pulled_and_extracted(
    emu, tmp_path, long_id
):
    rename_object(emu, PLAIN_LAB_ID, long_id)  # element, table and mapping, all three
    with Client.from_emulator(emu, lock_dir=str(tmp_path / "locks")) as client:
        result = client.write_table(long_id, _edit_first_label(client, long_id),
                                    backup_dir=tmp_path / "b")  # fmt: skip
        assert result.status == "written"
        assert load_backup(result.backup)["id"] == long_id  # the backup maps the name back
        stacked = client.read_tables([long_id], progress=False)
        stacked.loc[stacked.index[0], "label"] = "batch"
        batch = client.write_tables(stacked, backup_dir=tmp_path / "b", progress=False)
        assert batch["status"].tolist() == ["written"]
        assert client.pending_writes(backup_dir=tmp_path / "b").empty
        assert any(long_id[:20] not in p.name for p in (tmp_path / "locks").rglob("*.lock"))

        snap = client.snapshot(LAB_SYSTEM, tmp_path / "snap", progress=False)
        assert read_snapshot(snap.path).read_table(long_id)["label"].iloc[0] == "batch"

        pulled = pull_folder(client.api, LAB_SYSTEM, tmp_path / "code", ids=[long_id],
                             progress=False)  # fmt: skip
        assert set(pulled["action"]) == {"written"}
        plan = plan_folder(client.api, tmp_path / "code", progress=False)
        assert plan.exit_code == 0

        scripts = client.export_scripts([long_id], "sql-ddl", tmp_path / "scripts", progress=False)
        assert scripts["ok"].tolist() == [True], scripts["error"].tolist()
        archive = client.export_batch([long_id], "sql-ddl", tmp_path / "zip", progress=False)
        extracted = archive.extract(tmp_path / "extracted")
        assert len(extracted) == 1 and extracted[0].suffix == ".sql"
        assert archive.list_files()["structure_id"].tolist() == [long_id]
    every_name = [p.name for p in tmp_path.rglob("*")]
    assert max(len(n.encode()) for n in every_name) <= 255


# --------------------------------------------------------------------------- nesting


def test_dumps_and_loads_take_what_the_decoder_takes_and_refuse_beyond_naming_the_object():
    deep: object = 1
    for _ in range(depth.MAX_DEPTH - 1):
        deep = {"a": deep}
    text = depth.dumps(deep, ensure_ascii=False, separators=(",", ":"), sort_keys=True)
    assert text == '{"a":' * (depth.MAX_DEPTH - 1) + "1" + "}" * (depth.MAX_DEPTH - 1)
    assert depth.equal(depth.loads(text), deep)
    assert depth.depth_of(depth.loads(text)) == depth.MAX_DEPTH - 1
    too_deep = [deep, [[[]]]]
    too_deep = {"b": [too_deep]}
    if sys.version_info >= (3, 12):
        # the C encoder of 3.12+ is bounded by the C stack, far past MAX_DEPTH: the value
        # is written as json writes it; only a value past that bound is refused
        assert depth.dumps(too_deep, what="table 'tbl-1'") == json.dumps(too_deep)
        for _ in range(100_000):
            too_deep = [too_deep]
    with pytest.raises(DataShapeError, match="table 'tbl-1'.*1024"):
        depth.dumps(too_deep, what="table 'tbl-1'")


@settings(max_examples=200, deadline=None)
@given(
    value=st.recursive(
        st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
        lambda children: st.lists(children) | st.dictionaries(st.text(), children),
        max_leaves=20,
    ),
    sort_keys=st.booleans(),
    ensure_ascii=st.booleans(),
    compact=st.booleans(),
)
def test_the_flat_encoder_gives_json_dumps_text(value, sort_keys, ensure_ascii, compact):
    options = {"sort_keys": sort_keys, "ensure_ascii": ensure_ascii,
               "separators": (",", ":") if compact else None}  # fmt: skip
    assert depth._dumps_flat(value, **options) == json.dumps(value, **options)


def test_a_structure_nested_1000_levels_is_snapshotted_read_and_searched(emu, tmp_path):
    nest_attribute(emu, "lab-source", 1000)
    nest_cell(emu, "lab-source", 1000)
    with Client.from_emulator(emu, lock_dir=str(tmp_path / "locks")) as client:
        snap = client.snapshot(LAB_SYSTEM, tmp_path / "snap", progress=False)
        assert snap.failures.empty
        kept = read_snapshot(tmp_path / "snap")
        deep = dict(kept.iter_structures())["lab-source"]["attributes"]["deep"]
        assert depth.depth_of(deep) == 1000
        series = client.read_structure("lab-source")
        assert any(name.startswith("attributes.deep.a.a") for name in series.index)
        client.search(LAB_SYSTEM, "no such text")
        client.read_lineage(LAB_SYSTEM)
        frame = client.read_table("lab-source")
        to_excel(frame, tmp_path / "deep.xlsx")
        for fmt in ("csv", "json", "xlsx"):
            pull_folder(client.api, LAB_SYSTEM, tmp_path / fmt, ids=["lab-source"], fmt=fmt,
                        progress=False)  # fmt: skip
            assert plan_folder(client.api, tmp_path / fmt, progress=False).exit_code == 0
        # the emulator takes no body nested deeper than 100 levels: refused, in words
        edited = _edit_first_label(client, "lab-source")
        with pytest.raises(MddError, match="nested deeper than 100"):
            client.write_table("lab-source", edited, backup_dir=tmp_path / "b")


@posix_only
def test_a_shared_sticky_folder_is_not_named(tmp_path, umask):
    umask(0o022)
    shared = tmp_path / "shared"
    shared.mkdir()
    os.chmod(shared, 0o1777)  # as /tmp
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        made = private_dir(shared / "mddframes" / "locks", root=shared)
    assert _mode(made) == 0o700
