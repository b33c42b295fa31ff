"""mddframes: pandas DataFrames over a metadata-management service's integration API.

The public surface is small: :func:`connect` returns a :class:`Client`, whose
``read_*`` methods return DataFrames, ``write_*`` methods send edited frames back
losslessly, and export/package/deploy methods move work to production.
"""

import typing as _typing

from mddframes._version import __version__ as __version__

# The errors are light and caught by name before anything else is used: imported now.
from mddframes.errors import (
    AnswerLostError,
    AuthError,
    BackupError,
    BadRequestError,
    BusyError,
    ClientClosedError,
    ConcurrentModificationError,
    ConfigurationError,
    ConflictError,
    DataShapeError,
    DeclaredTypeWarning,
    ExportError,
    ExportFailedError,
    ExportTimeoutError,
    IncompletePayloadError,
    InvalidArgumentError,
    JournalError,
    LegacyExportWarning,
    LockTimeoutError,
    MappingShapeWarning,
    MddError,
    MddWarning,
    MissingDependencyError,
    NotFoundError,
    PackageClosedError,
    PartialFailureWarning,
    RateLimitError,
    RequestDetails,
    ResponseFormatError,
    ServerError,
    ServiceError,
    TransportError,
    TreeIntegrityWarning,
    UnsafeArchiveError,
    UnsupportedMediaTypeError,
    WriteRefusedError,
    WriteVerificationError,
)

if _typing.TYPE_CHECKING:  # for type checkers and readers; at run time each name loads when used
    from mddframes.archive import ExportArchive
    from mddframes.bulk import BulkResult, run_bulk
    from mddframes.client import Client
    from mddframes.codec import (
        CheckReport,
        Diff,
        check_payload,
        diff_payloads,
        from_payload,
        to_payload,
    )
    from mddframes.codec.values import JsonObject, JsonValue
    from mddframes.connection import connect
    from mddframes.context import ReadContext
    from mddframes.doctor import doctor_exit_code, run_doctor
    from mddframes.exports import ExportTask, Script
    from mddframes.frames import iter_groups, tree_frame
    from mddframes.frames.backends import DtypeBackend, to_polars
    from mddframes.ids import Ids
    from mddframes.lineage import Lineage, LineageAnswer, to_dot, to_mermaid
    from mddframes.snapshot import (
        History,
        diff_snapshots,
        read_history,
        read_review_excel,
        read_snapshot,
    )
    from mddframes.spreadsheet import read_excel, to_excel
    from mddframes.tables_as_code import Plan, apply_plan, plan_folder, pull_folder
    from mddframes.writing import WriteResult

#: Where each public name lives: ``import mddframes`` loads none of these modules (pandas,
#: openpyxl, networkx and pyarrow among their imports); the first use of a name does.
_LAZY: dict[str, str] = {
    "BulkResult": "mddframes.bulk",
    "CheckReport": "mddframes.codec",
    "Client": "mddframes.client",
    "Diff": "mddframes.codec",
    "DtypeBackend": "mddframes.frames.backends",
    "ExportArchive": "mddframes.archive",
    "ExportTask": "mddframes.exports",
    "History": "mddframes.snapshot",
    "Ids": "mddframes.ids",
    "JsonObject": "mddframes.codec.values",
    "JsonValue": "mddframes.codec.values",
    "Lineage": "mddframes.lineage",
    "LineageAnswer": "mddframes.lineage",
    "Plan": "mddframes.tables_as_code",
    "ReadContext": "mddframes.context",
    "Script": "mddframes.exports",
    "WriteResult": "mddframes.writing",
    "apply_plan": "mddframes.tables_as_code",
    "check_payload": "mddframes.codec",
    "connect": "mddframes.connection",
    "diff_payloads": "mddframes.codec",
    "diff_snapshots": "mddframes.snapshot",
    "doctor_exit_code": "mddframes.doctor",
    "from_payload": "mddframes.codec",
    "iter_groups": "mddframes.frames",
    "plan_folder": "mddframes.tables_as_code",
    "pull_folder": "mddframes.tables_as_code",
    "read_excel": "mddframes.spreadsheet",
    "read_history": "mddframes.snapshot",
    "read_review_excel": "mddframes.snapshot",
    "read_snapshot": "mddframes.snapshot",
    "run_bulk": "mddframes.bulk",
    "run_doctor": "mddframes.doctor",
    "to_dot": "mddframes.lineage",
    "to_excel": "mddframes.spreadsheet",
    "to_mermaid": "mddframes.lineage",
    "to_payload": "mddframes.codec",
    "to_polars": "mddframes.frames.backends",
    "tree_frame": "mddframes.frames",
}


def __getattr__(name: str) -> object:
    """Load a public name's module on its first use (PEP 562), then keep the name."""
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'mddframes' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


__all__ = [
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
