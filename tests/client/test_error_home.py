"""Every exception of the client side lives in mddframes/errors.py, but for the signals
named here: each goes from one raiser to its catcher in the same package, and none
reaches a caller (mddframes/errors.py's notes say why they are not in the tree)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import mddframes
from mddframes import errors

PACKAGE = Path(__file__).parents[2] / "mddframes"

#: module:class -> what catches it (written here by hand: a new exception outside
#: errors.py fails the test below until it joins the tree or this list, with a reason)
SIGNALS = {
    "cli._output:StdoutClosed": "cli.main: the exit code 141",
    "codec.fastjson:NestingTooDeep": "codec.depth: DataShapeError naming the document",
    "codec.fingerprint:_Unmatched": "codec.fingerprint: the block's digest is UNMATCHED",
    "codec.stream:_NeedsExact": "codec.stream: parsed again exactly",
    "codec.stream:_Unsure": "codec.stream: json.loads vouches instead",
    "codec.streamed_overlay:StreamUnsupported": "writing.changes: the parsed write",
    "frames.tree_arrow:StepAside": "frames.tree_arrow: the default read",
    "http.guard:BoundExceeded": "http.translation: ResponseFormatError or TransportError",
    "http.authorised:_TokenNotFetched": "http.authorised: the token's own error",
    "spreadsheet.cells:CellError": "spreadsheet: DataShapeError naming the cell",
    "tables_as_code.apply:_Refused": "tables_as_code.apply: a refused object's row",
    "snapshot.history_review:_Conflict": "snapshot.history_review: a refused object in the plan",
    "tables_as_code.csvtext:CsvSyntaxError": "tables_as_code.files: DataShapeError naming the file",
}


def _exceptions_outside_errors_py() -> set[str]:
    found = set()
    for path in PACKAGE.rglob("*.py"):
        module = ".".join(path.relative_to(PACKAGE).with_suffix("").parts)
        if module == "errors" or module.startswith("emulator"):
            continue  # the emulator is apart: it imports nothing of the client side
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef) and any(
                ast.unparse(base).endswith(("Error", "Exception", "Warning")) for base in node.bases
            ):
                found.add(f"{module}:{node.name}")
    return found


def test_every_exception_outside_errors_py_is_a_named_signal():
    assert _exceptions_outside_errors_py() == set(SIGNALS)


def test_the_panels_busy_error_is_in_the_tree_and_at_its_old_place():
    from mddframes.widgets import BusyError

    assert BusyError is errors.BusyError is mddframes.BusyError
    assert issubclass(BusyError, errors.MddError)
    with pytest.raises(errors.MddError, match="still busy"):
        raise BusyError("export: the panel is still busy with its previous work")
