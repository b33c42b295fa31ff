"""The public line: what ``import mddframes`` offers, and the Client's methods, pinned.

A name added to or removed from the public surface changes a list in this file, so it
shows in review (and gets a CHANGELOG.md line). ``__all__`` is kept in plain ``sorted()``
order, i.e. by code point: the classes (capitalised) first, then ``__version__``, then
the functions, each group alphabetical.
"""

from __future__ import annotations

import importlib
import inspect
import json
import os
import subprocess
import sys
import types
from pathlib import Path

import mddframes
from mddframes import Client, errors


def client_members() -> dict[str, object]:
    """Client's attributes, its own and those of its mddframes bases (the facade is
    split by job: client_writes.Writes, client_panels.Panels)."""
    members: dict[str, object] = {}
    for cls in reversed(Client.__mro__):
        if cls.__module__.startswith("mddframes"):
            members.update(vars(cls))
    return members


REPOSITORY = Path(__file__).resolve().parents[2]

EXPORTED = [
    "AnswerLostError",
    "AuthError",
    "BackupError",
    "BadRequestError",
    "BulkResult",
    "BusyError",
    "CheckReport",
    "Client",
    "ClientClosedError",
    "ConcurrentModificationError",
    "ConfigurationError",
    "ConflictError",
    "DataShapeError",
    "DeclaredTypeWarning",
    "Diff",
    "DtypeBackend",
    "ExportArchive",
    "ExportError",
    "ExportFailedError",
    "ExportTask",
    "ExportTimeoutError",
    "History",
    "Ids",
    "IncompletePayloadError",
    "InvalidArgumentError",
    "JournalError",
    "JsonObject",
    "JsonValue",
    "LegacyExportWarning",
    "Lineage",
    "LineageAnswer",
    "LockTimeoutError",
    "MappingShapeWarning",
    "MddError",
    "MddWarning",
    "MissingDependencyError",
    "NotFoundError",
    "PackageClosedError",
    "PartialFailureWarning",
    "Plan",
    "RateLimitError",
    "ReadContext",
    "RequestDetails",
    "ResponseFormatError",
    "Script",
    "ServerError",
    "ServiceError",
    "TransportError",
    "TreeIntegrityWarning",
    "UnsafeArchiveError",
    "UnsupportedMediaTypeError",
    "WriteRefusedError",
    "WriteResult",
    "WriteVerificationError",
    "__version__",
    "apply_plan",
    "check_payload",
    "connect",
    "diff_payloads",
    "diff_snapshots",
    "doctor_exit_code",
    "from_payload",
    "iter_groups",
    "plan_folder",
    "pull_folder",
    "read_excel",
    "read_history",
    "read_review_excel",
    "read_snapshot",
    "run_bulk",
    "run_doctor",
    "to_dot",
    "to_excel",
    "to_mermaid",
    "to_payload",
    "to_polars",
    "tree_frame",
]

CLIENT_METHODS = [
    "add_to_package",
    "close",
    "confirm_deployed",
    "create_child",
    "create_children",
    "deploy",
    "deploy_many",
    "deploy_panel",
    "doctor",
    "export_batch",
    "export_panel",
    "export_script",
    "export_scripts",
    "export_task",
    "from_emulator",
    "iter_mappings",
    "iter_tables",
    "lineage_panel",
    "package_panel",
    "pending_writes",
    "read_lineage",
    "read_mapping",
    "read_mappings",
    "read_object_types",
    "read_packages",
    "read_raw_data",
    "read_structure",
    "read_structures",
    "read_table",
    "read_table_columns",
    "read_tables",
    "read_tree",
    "recording",
    "restore",
    "restore_backups",
    "resume",
    "review_write",
    "roll_back",
    "search",
    "snapshot",
    "start_export",
    "write_mapping",
    "write_mappings",
    "write_table",
    "write_tables",
]

CLIENT_PROPERTIES = ["base_url", "contexts", "http", "max_workers", "tenant"]


def test_all_is_exactly_the_pinned_list():
    assert mddframes.__all__ == EXPORTED


def test_all_is_sorted_without_duplicates():
    assert mddframes.__all__ == sorted(set(mddframes.__all__))


def test_every_exported_name_exists_after_a_bare_import():
    # A fresh interpreter: in this one, other tests' imports could supply a missing name.
    env = {**os.environ, "PYTHONPATH": str(REPOSITORY)}
    code = (
        "import json, mddframes; "
        "print(json.dumps([n for n in mddframes.__all__ if not hasattr(mddframes, n)]))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == []


def test_star_import_gives_exactly_all():
    namespace: dict[str, object] = {}
    exec("from mddframes import *", namespace)
    assert sorted(set(namespace) - {"__builtins__"}) == EXPORTED


#: The exported type aliases (for annotations; not classes) and their home modules.
TYPE_ALIASES = {
    "DtypeBackend": "mddframes.frames.backends",
    "Ids": "mddframes.ids",
    "JsonObject": "mddframes.codec.values",
    "JsonValue": "mddframes.codec.values",
}


def test_exported_objects_are_mddframes_own():
    for name in mddframes.__all__:
        member = getattr(mddframes, name)
        if name == "__version__":
            assert isinstance(member, str) and member
            continue
        if name in TYPE_ALIASES:
            assert getattr(importlib.import_module(TYPE_ALIASES[name]), name) is member, name
            continue
        assert inspect.isclass(member) or inspect.isfunction(member), name
        assert member.__module__.split(".")[0] == "mddframes", (name, member.__module__)


def test_every_other_public_attribute_is_a_submodule():
    # A public class or function of mddframes that is not in __all__ is either missing
    # from it or should be underscored; only the package's own submodules may sit beside.
    unlisted = {
        name: member
        for name, member in vars(mddframes).items()
        if not name.startswith("_") and name not in mddframes.__all__
    }
    not_modules = {
        name: type(member).__name__
        for name, member in unlisted.items()
        if not (isinstance(member, types.ModuleType) and member.__name__ == f"mddframes.{name}")
    }
    assert not_modules == {}


def test_every_error_and_warning_is_exported_from_the_top():
    assert set(errors.__all__) <= set(mddframes.__all__)
    for name in errors.__all__:
        assert getattr(mddframes, name) is getattr(errors, name), name


def test_client_public_methods_are_pinned():
    public = {name: member for name, member in client_members().items() if not name.startswith("_")}
    methods = sorted(name for name, member in public.items() if not isinstance(member, property))
    assert methods == CLIENT_METHODS
    assert all(callable(getattr(Client, name)) for name in methods)


def test_client_public_properties_are_pinned():
    properties = sorted(
        name for name, member in client_members().items() if isinstance(member, property)
    )
    assert properties == CLIENT_PROPERTIES


def test_the_retired_names_stay_retired():
    for name in ("ExportTimeout", "ExportFailed"):
        assert not hasattr(mddframes, name) and not hasattr(errors, name), name
    assert not hasattr(Client, "read_contexts")
