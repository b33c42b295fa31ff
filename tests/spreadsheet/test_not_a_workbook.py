"""read_excel of a file that is not a workbook: an MddError naming the file (issue 24)."""

from __future__ import annotations

import io
import zipfile

import pytest

from mddframes import DataShapeError, read_excel


@pytest.mark.parametrize(
    ("name", "content"),
    [("countries.xlsx", b"alpha2,name\nAF,Afghanistan\n"), ("countries.csv", b"alpha2\n")],
)
def test_a_file_that_is_not_a_workbook_is_named(tmp_path, name, content):
    path = tmp_path / name
    path.write_bytes(content)
    with pytest.raises(DataShapeError) as caught:
        read_excel(path)
    assert str(path) in str(caught.value)
    assert "is not an Excel workbook (.xlsx)" in str(caught.value)


def test_a_zip_that_is_not_a_workbook_is_named(tmp_path):
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("readme.txt", "not a workbook")
    path = tmp_path / "scripts.xlsx"
    path.write_bytes(buffer.getvalue())
    with pytest.raises(DataShapeError, match="scripts.xlsx"):
        read_excel(path)
