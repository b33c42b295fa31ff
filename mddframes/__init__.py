"""mddframes: pandas DataFrames over a metadata-management service's integration API.

The public surface is small: :func:`connect` returns a :class:`Client`, whose
``read_*`` methods return DataFrames, ``write_*`` methods send edited frames back
losslessly, and export/package/deploy methods move work to production.
"""

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
from mddframes.errors import (
    AnswerLostError,
    AuthError,
    BackupError,
    BadRequestError,
    ClientClosedError,
    ConcurrentModificationError,
    ConfigurationError,
    ConflictError,
    DataShapeError,
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
from mddframes.exports import ExportTask, Script
from mddframes.frames import iter_groups, tree_frame
from mddframes.frames.backends import DtypeBackend, to_polars
from mddframes.ids import Ids
from mddframes.lineage import Lineage, LineageAnswer, to_dot, to_mermaid
from mddframes.snapshot import diff_snapshots, read_snapshot
from mddframes.spreadsheet import read_excel, to_excel
from mddframes.tables_as_code import Plan, apply_plan, plan_folder, pull_folder
from mddframes.writing import WriteResult

__version__ = "0.1.0"

__all__ = [
    "AnswerLostError",
    "AuthError",
    "BackupError",
    "BadRequestError",
    "BulkResult",
    "CheckReport",
    "Client",
    "ClientClosedError",
    "ConcurrentModificationError",
    "ConfigurationError",
    "ConflictError",
    "DataShapeError",
    "Diff",
    "DtypeBackend",
    "ExportArchive",
    "ExportError",
    "ExportFailedError",
    "ExportTask",
    "ExportTimeoutError",
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
