"""Export pieces that need no server: scripts, status records, back-off, zip safety."""

from __future__ import annotations

import hashlib
import stat
import sys
import zipfile
from pathlib import Path

import pandas as pd
import pytest
from needs import require

from mddframes.archive import (
    ExportArchive,
    archive_entry_name,
    safe_file_name,
    structure_id_from_entry,
)
from mddframes.errors import DataShapeError, InvalidArgumentError, UnsafeArchiveError
from mddframes.exports import ExportStatus, Script, poll_intervals


def make_zip(path: Path, entries: dict[str, bytes], *, symlinks: tuple[str, ...] = ()) -> Path:
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for name, data in entries.items():
            zf.writestr(name, data)
        for name in symlinks:
            info = zipfile.ZipInfo(name)
            info.external_attr = (stat.S_IFLNK | 0o777) << 16
            zf.writestr(info, "/etc/passwd")
    return path


# --------------------------------------------------------------------------- Script


def test_script_html_is_highlighted_and_escaped():
    require("pygments")
    script = Script("orders.sql", "SELECT '<b>' FROM t; -- </pre><script>", "s1", "ot1")
    out = script._repr_html_()
    assert "<span" in out  # Pygments coloured it
    assert "<script>" not in out and "&lt;script&gt;" in out
    assert "orders.sql" in out


def test_script_html_without_pygments_is_an_escaped_pre(monkeypatch):
    monkeypatch.setitem(sys.modules, "pygments", None)  # import now raises ImportError
    out = Script("x.sql", "a < b && c", "s1")._repr_html_()
    assert "<pre>a &lt; b &amp;&amp; c</pre>" in out
    assert "<span" not in out


def test_script_str_repr_and_save(tmp_path):
    script = Script("x.sql", "line1\r\nline2\n", "s1", "ot")
    assert str(script) == "line1\r\nline2\n"
    assert "lines=2" in repr(script) and "x.sql" in repr(script)
    path = script.save(tmp_path)
    assert path == tmp_path / "x.sql"
    assert path.read_bytes() == b"line1\r\nline2\n"  # line endings kept


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("a.sql", "a.sql"),
        ("../../etc/passwd", "passwd"),
        ("..\\..\\win.ini", "win.ini"),
        ("/abs/path.sql", "path.sql"),
        ("..", "fallback.txt"),
        ("", "fallback.txt"),
    ],
)
def test_safe_file_name_keeps_only_the_last_component(name, expected):
    assert safe_file_name(name, fallback="fallback.txt") == expected


# --------------------------------------------------------------------------- ids, status, back-off


def test_poll_intervals_grow_by_half_up_to_the_ceiling():
    gen = poll_intervals(0.5, 5.0)
    seq = [next(gen) for _ in range(10)]
    assert seq[:3] == [0.5, 0.75, 1.125]
    assert all(b >= a for a, b in zip(seq, seq[1:], strict=False))
    assert seq[-1] == 5.0 and max(seq) == 5.0


@pytest.mark.parametrize(("initial", "maximum", "factor"), [(0, 5, 1.5), (2, 1, 1.5), (1, 2, 0.5)])
def test_poll_intervals_refuse_nonsense(initial, maximum, factor):
    with pytest.raises(InvalidArgumentError):
        next(poll_intervals(initial, maximum, factor))


def test_export_status_reads_tolerantly_and_acts_as_a_dict():
    status = ExportStatus.from_json(
        "t1", {"taskId": "t1", "status": "running", "total": "10", "done": 4, "extra": 1}
    )
    assert status.status == "RUNNING" and not status.finished and not status.failed
    assert (status.total, status.done) == (10, 4)
    assert status["extra"] == 1 and dict(status)["taskId"] == "t1"
    failed = ExportStatus.from_json("t2", {"state": "FAILED", "message": "template broke"})
    assert failed.failed and failed.message == "template broke"
    with pytest.raises(DataShapeError, match="no 'status'"):
        ExportStatus.from_json("t3", {"taskId": "t3"})


# --------------------------------------------------------------------------- archives


def test_files_lists_names_sizes_and_ids(tmp_path):
    zpath = make_zip(tmp_path / "e.zip", {"s-1__a.sql": b"x" * 100, "readme": b"hi"})
    files = ExportArchive(zpath).list_files()
    assert list(files.columns) == ["name", "size", "compressed_size", "structure_id"]
    assert files["size"].dtype == "Int64"
    assert files["size"].tolist() == [100, 2]
    assert files["compressed_size"].iloc[0] < 100  # deflated
    assert files["structure_id"].iloc[0] == "s-1"
    assert pd.isna(files["structure_id"].iloc[1])


@pytest.mark.parametrize(
    ("structure_id", "file_name", "entry"),
    [
        ("tbl-1", "orders.sql", "tbl-1__orders.sql"),
        ("a/b", "x.sql", f"a_b-{hashlib.sha1(b'a/b').hexdigest()[:8]}__x.sql"),
        ("..", "x.sql", f"__-{hashlib.sha1(b'..').hexdigest()[:8]}__x.sql"),
        (".hidden", "x.sql", f"_hidden-{hashlib.sha1(b'.hidden').hexdigest()[:8]}__x.sql"),
        ("s1", "../up.sql", "s1__.._up.sql"),
        ("s1", "", "s1__script"),
    ],
)
def test_entry_names_follow_the_batch_rule_and_map_back(structure_id, file_name, entry):
    assert archive_entry_name(structure_id, file_name) == entry
    assert "/" not in entry and "\\" not in entry
    assert structure_id_from_entry(entry, ["other", structure_id, "s"]) == structure_id


def test_known_ids_resolve_ids_that_contain_the_separator():
    entry = archive_entry_name("a__b", "x.sql")
    assert structure_id_from_entry(entry) == "a"  # best effort without the ids
    assert structure_id_from_entry(entry, ["a", "a__b"]) == "a__b"
    assert structure_id_from_entry("nothing.sql") is None


def test_extract_writes_the_files(tmp_path):
    zpath = make_zip(tmp_path / "e.zip", {"a.sql": b"A", "sub/b.sql": b"B"})
    written = ExportArchive(zpath).extract(tmp_path / "out")
    assert sorted(p.relative_to((tmp_path / "out").resolve()).as_posix() for p in written) == [
        "a.sql",
        "sub/b.sql",
    ]
    assert (tmp_path / "out" / "sub" / "b.sql").read_bytes() == b"B"


@pytest.mark.parametrize(
    ("bad", "reason"),
    [
        ("../evil.sql", "'..'"),
        ("ok/../../evil.sql", "'..'"),
        ("..\\evil.sql", "'..'"),
        ("/tmp/evil.sql", "absolute"),
        ("C:/evil.sql", "absolute"),
    ],
)
def test_extract_refuses_escaping_entries_and_writes_nothing(tmp_path, bad, reason):
    zpath = make_zip(tmp_path / "e.zip", {"first.sql": b"1", bad: b"evil"})
    out = tmp_path / "deep" / "out"
    with pytest.raises(UnsafeArchiveError, match=reason) as info:
        ExportArchive(zpath).extract(out)
    assert repr(bad) in str(info.value)  # names the entry
    assert not (out / "first.sql").exists()  # checked before the first write
    assert not (tmp_path / "deep" / "evil.sql").exists()
    assert not (tmp_path / "evil.sql").exists()


def test_extract_refuses_symlinks(tmp_path):
    zpath = make_zip(tmp_path / "e.zip", {"a.sql": b"A"}, symlinks=("link",))
    with pytest.raises(UnsafeArchiveError, match="'link' is a symbolic link"):
        ExportArchive(zpath).extract(tmp_path / "out")


def test_extract_refuses_archives_beyond_the_limits(tmp_path):
    zpath = make_zip(tmp_path / "bomb.zip", {f"f{i}.sql": b"0" * 1000 for i in range(5)})
    with pytest.raises(UnsafeArchiveError, match="max_total_bytes=4000"):
        ExportArchive(zpath).extract(tmp_path / "out", max_total_bytes=4000)
    with pytest.raises(UnsafeArchiveError, match="5 entries, more than max_files=4"):
        ExportArchive(zpath).extract(tmp_path / "out", max_files=4)
    assert len(ExportArchive(zpath).extract(tmp_path / "out", max_total_bytes=5000)) == 5


def test_extract_refuses_an_entry_whose_header_lies_about_its_size(tmp_path):
    zpath = make_zip(tmp_path / "liar.zip", {"big.sql": b"0" * 50_000})
    archive = ExportArchive(zpath)
    infos = archive.check()
    infos[0].file_size = 10  # what a lying central directory would declare
    archive.check = lambda **_: infos  # type: ignore[method-assign]
    with pytest.raises(UnsafeArchiveError, match="'big.sql' is corrupt"):
        archive.extract(tmp_path / "out")
    assert not (tmp_path / "out" / "big.sql").exists()


def test_extract_counts_the_bytes_really_expanded(tmp_path):
    """The budget holds while streaming even if the up-front check was passed."""
    zpath = make_zip(tmp_path / "big.zip", {"a.sql": b"0" * 800, "big.sql": b"0" * 50_000})
    archive = ExportArchive(zpath)
    infos = archive.check()
    archive.check = lambda **_: infos  # type: ignore[method-assign]  # skip the pre-check
    with pytest.raises(UnsafeArchiveError, match="'big.sql' expands beyond the size limit"):
        archive.extract(tmp_path / "out", max_total_bytes=1000)
    assert (tmp_path / "out" / "a.sql").exists()
    assert not (tmp_path / "out" / "big.sql").exists()


def test_a_file_that_is_not_a_zip_is_named(tmp_path):
    path = tmp_path / "no.zip"
    path.write_text("<html>proxy error</html>")
    with pytest.raises(DataShapeError, match="not a readable zip archive"):
        ExportArchive(path).list_files()


def test_read_text_reads_one_entry_and_names_a_missing_one(tmp_path):
    path = tmp_path / "a.zip"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("e1/one.sql", "SELECT 'ü';\n")
    archive = ExportArchive(path)
    assert archive.read_text("e1/one.sql") == "SELECT 'ü';\n"
    assert archive.read_text("e1/one.sql", max_chars=6) == "SELECT"
    with pytest.raises(InvalidArgumentError, match="no file named 'e2/two.sql'"):
        archive.read_text("e2/two.sql")
