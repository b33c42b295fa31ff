"""One shape for results (issue 44; the rule is in docs/contributing.md): on every public
class that holds a result, what describes it is a property (or a field), and every
method without required arguments is named by a verb or is a ``to_*`` conversion.

The classes are found by walking ``mddframes.__all__``; the verbs are this test's own
(English verbs a method may start with), not a list the implementation keeps.
"""

from __future__ import annotations

import dataclasses
import inspect
import warnings
import zipfile
from pathlib import Path

import pytest

import mddframes
from mddframes import Client, ExportArchive
from mddframes.emulator import serve

#: First words that make a method name a verb (``list_files``, ``find_cycles``...).
VERBS = frozenset({
    "check", "close", "download", "extract", "find", "list", "load", "read", "refresh",
    "save", "summarize", "to", "wait", "write",
})  # fmt: skip


def _result_classes() -> list[type]:
    """Every public class but the errors, the warnings and the facade that asks."""
    found = []
    for name in mddframes.__all__:
        value = getattr(mddframes, name)
        if not inspect.isclass(value) or issubclass(value, BaseException | Warning):
            continue
        if value is Client:  # the facade: every method of it asks the service
            continue
        found.append(value)
    return found


def _members(cls: type) -> list[tuple[str, object]]:
    seen: dict[str, object] = {}
    for klass in reversed(cls.__mro__):
        if klass.__module__.startswith("mddframes"):
            seen.update(vars(klass))
    return [(k, v) for k, v in seen.items() if not k.startswith("_")]


def _required(function: object) -> list[str]:
    parameters = list(inspect.signature(function).parameters.values())[1:]  # type: ignore[arg-type]
    return [
        p.name
        for p in parameters
        if p.default is p.empty and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
    ]


def test_the_public_result_classes_are_found():
    names = {cls.__name__ for cls in _result_classes()}
    assert {"Diff", "CheckReport", "ExportTask", "ExportArchive", "Plan", "BulkResult",
            "ReadContext", "WriteResult", "Lineage", "LineageAnswer", "Script"} <= names  # fmt: skip


@pytest.mark.parametrize("cls", _result_classes(), ids=lambda c: c.__name__)
def test_describing_is_a_property_and_acting_a_verb(cls):
    wrong = []
    for name, member in _members(cls):
        if isinstance(member, staticmethod | classmethod):
            continue  # constructors (``Plan.load``, ``CheckReport.from_records``)
        if not inspect.isfunction(member):
            continue  # a property, cached_property, field or constant: describes
        if getattr(member, "__deprecated__", None):
            continue  # a former name kept for a release (errors.renamed)
        if _required(member):
            continue  # takes what it looks up (``Lineage.node(address)``)
        if name.split("_")[0] not in VERBS:
            wrong.append(f"{cls.__name__}.{name}()")
    assert not wrong, (
        f"{wrong}: a method without arguments must be named by a verb (it asks, reads, "
        "waits or works anew each call); what describes the result is a property"
    )


def test_the_dataclass_results_have_fields_not_getters():
    for cls in _result_classes():
        if dataclasses.is_dataclass(cls):
            for field in dataclasses.fields(cls):
                assert not field.name.startswith("get_"), (cls.__name__, field.name)


@pytest.mark.emulator
def test_the_issues_examples_print_values_not_bound_methods(tmp_path):
    """``Diff.summary`` and ``ExportTask.status`` print what they hold; a task's repr its
    last known status, and a renamed method still works under its old name, warning at
    the caller's line."""
    with serve() as emu, Client.from_emulator(emu) as client:
        frame = client.read_table("tbl-0109")
        frame.loc[0, "name"] = "shaped"
        preview = client.write_table("tbl-0109", frame, dry_run=True)
        assert isinstance(preview.diff.summary, str) and "1 cell(s) changed" in preview.diff.summary
        assert isinstance(preview.report.summary, str)
        assert str(preview.diff.empty) == "False"

        task = client.start_export(["dwh-0005", "dwh-0006"], "sql-ddl")
        assert task.status is None and "status=None" in repr(task) and "polls=0" in repr(task)
        task.wait(timeout=60, poll_interval=0.05, progress=False)
        assert task.status is not None and task.status.status == "FINISHED"
        shown = repr(task)
        assert "status='FINISHED'" in shown and f"polls={task.polls}" in shown
        assert "done=2/2" in shown and "unknown" not in shown and "bound method" not in shown
        asked_before = task.polls
        _ = task.status  # reading the property sends nothing
        assert task.polls == asked_before
        assert task.refresh().finished and task.polls == asked_before + 1

        archive = task.download(tmp_path / "out.zip")
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            old = archive.files()
        assert old.equals(archive.list_files())
        assert [(w.category, Path(w.filename).name) for w in caught] == [
            (DeprecationWarning, Path(__file__).name)
        ]
        assert "list_files()" in str(caught[0].message)


def test_a_plans_counts_and_frame_are_properties(tmp_path):
    path = tmp_path / "e.zip"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("s-1__a.sql", "select 1")
    assert ExportArchive(path).list_files()["structure_id"].tolist() == ["s-1"]
    for name in ("counts", "frame", "exit_code"):
        assert isinstance(inspect.getattr_static(mddframes.Plan, name), property), name
