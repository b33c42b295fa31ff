"""The exceptions and warnings of mddframes, rooted at :class:`MddError` and :class:`MddWarning`.

Every error raised by the library is an ``MddError``. Errors that come from a service
call carry the operation name, the HTTP method, the URL, the status code and the
server's message, and never a token or a secret. Every error pickles round-trip with
all its attributes (process pools, joblib).

The tree::

    MddError                           everything mddframes raises
    ├── ConfigurationError             a setting is missing or invalid
    │   └── MissingDependencyError     an optional extra is not installed (also an ImportError)
    ├── InvalidArgumentError           an argument is unusable; nothing was sent (also a ValueError)
    ├── ClientClosedError              the client (its HTTP session) was closed
    ├── ServiceError                   the service answered with a non-success status
    │   │                              (this class itself: a redirect or an unmapped status)
    │   ├── BadRequestError            400
    │   │   └── UnsupportedMediaTypeError   415
    │   ├── AuthError                  401/403, or the token endpoint's 4xx
    │   ├── NotFoundError              404
    │   ├── ConflictError              409
    │   │   └── PackageClosedError     409 when adding to a package that is not open
    │   ├── RateLimitError             429, still after all retries
    │   └── ServerError                5xx, still after all retries
    ├── TransportError                 no answer: connection refused or dropped, time-out, TLS
    │                                  (``may_have_been_sent`` False: it never left)
    │   └── AnswerLostError            a request that acts went out, its answer was lost: it may have been done
    ├── ResponseFormatError            an answer that cannot be read: not JSON, cut off, wrong shape
    ├── DataShapeError                 a service answer or a user frame mddframes cannot read
    ├── WriteRefusedError              a write was stopped before anything was sent
    │   ├── ConcurrentModificationError    the object changed since it was read
    │   ├── IncompletePayloadError     the completeness check found errors
    │   └── LockTimeoutError           another writer held the object or batch too long
    ├── WriteVerificationError         a write was sent but reads back differently
    ├── BackupError                    a backup could not be written
    ├── JournalError                   a write journal cannot be written, read or acted on
    ├── ExportError                    an export task did not deliver (``task_id``)
    │   ├── ExportTimeoutError         still running at the time-out
    │   └── ExportFailedError          ended as FAILED
    ├── UnsafeArchiveError             an archive entry escapes its folder or expands too far
    └── BusyError                      a panel asked to start work while its last still runs

    MddWarning (UserWarning)           everything mddframes warns about
    ├── PartialFailureWarning          a bulk call skipped failed ids
    ├── LegacyExportWarning            no batch export on the service: single exports used
    ├── TreeIntegrityWarning           a tree has orphans or parent cycles
    ├── DeclaredTypeWarning            a column's values do not fit its declared type
    └── MappingShapeWarning            lineage left out mappings lacking assumed fields

Every warning is issued by :func:`issue_warning`, which names the first line outside mddframes:
the user's line, whichever public call it went through.

``AuthError`` sits under ``ServiceError``: mddframes raises it only when the service (its
API or its token endpoint) answered 401, 403 or another 4xx of the token request, so it
always has a status. Missing credentials, which never reach the service, are a
``ConfigurationError``.

Exceptions defined elsewhere are not in the tree, because none reaches a caller: each
is a signal between one raiser and its catcher in the same package, which falls back
(``StreamUnsupported``, ``StepAside``, the stream's ``_NeedsExact`` and ``_Unsure``,
the fingerprint's ``_Unmatched``),
translates it into an error of this tree with the place named (``CellError``,
``CsvSyntaxError``, ``NestingTooDeep``, ``BoundExceeded``, ``_TokenNotFetched``,
``_Refused``) or into an exit code (the command line's ``StdoutClosed``);
tests/client/test_error_home.py names each, and the emulator's are the emulator's.
"""

from __future__ import annotations

import contextlib
import functools
import os
import sys
import warnings
from collections.abc import Callable
from types import FrameType
from typing import Any, ParamSpec, TypedDict, TypeVar

_P = ParamSpec("_P")
_R = TypeVar("_R")

__all__ = [
    "AnswerLostError",
    "AuthError",
    "BackupError",
    "BadRequestError",
    "BusyError",
    "ClientClosedError",
    "ConcurrentModificationError",
    "ConfigurationError",
    "ConflictError",
    "DataShapeError",
    "ExportError",
    "ExportFailedError",
    "ExportTimeoutError",
    "IncompletePayloadError",
    "InvalidArgumentError",
    "JournalError",
    "LockTimeoutError",
    "LegacyExportWarning",
    "MappingShapeWarning",
    "MddError",
    "MddWarning",
    "MissingDependencyError",
    "NotFoundError",
    "PackageClosedError",
    "PartialFailureWarning",
    "RateLimitError",
    "ResponseFormatError",
    "ServerError",
    "ServiceError",
    "TransportError",
    "TreeIntegrityWarning",
    "UnsafeArchiveError",
    "UnsupportedMediaTypeError",
    "WriteRefusedError",
    "WriteVerificationError",
]


def _rebuild(cls: type[MddError], args: tuple[Any, ...], state: dict[str, Any]) -> MddError:
    """Unpickle an ``MddError`` without calling ``__init__`` (see :meth:`MddError.__reduce__`)."""
    error = cls.__new__(cls, *args)
    error.args = args
    error.__dict__.update(state)
    return error


class RequestDetails(TypedDict):
    """The call an error is about: the keyword arguments of every :class:`MddError`."""

    operation: str | None
    method: str | None
    url: str | None
    status: int | None
    server_message: str | None


class MddError(Exception):
    """Base class of every error raised by mddframes.

    Parameters
    ----------
    message : str
        What went wrong, in words.
    operation : str, optional
        The service operation (e.g. ``"getTable"``) that failed.
    method, url : str, optional
        The HTTP method and URL of the failed request (no credentials in it).
    status : int, optional
        The HTTP status code, when the server answered.
    server_message : str, optional
        The message the server sent, when there was one.

    Attributes
    ----------
    answers_lost : int
        How many earlier attempts of the call went out and lost their answer (the
        call was repeated after them): a 412 after one may be the call's own write.
    """

    #: earlier attempts of the call that lost their answer (set by the HTTP session)
    answers_lost: int = 0

    def __init__(
        self,
        message: str,
        *,
        operation: str | None = None,
        method: str | None = None,
        url: str | None = None,
        status: int | None = None,
        server_message: str | None = None,
    ) -> None:
        self.message = message
        self.operation = operation
        self.method = method
        self.url = url
        self.status = status
        self.server_message = server_message
        super().__init__(self._render())

    def request_details(self) -> RequestDetails:
        """The request this error is about, as keyword arguments for another MddError.

        For re-raising as a more specific error that still names the same call:
        ``raise PackageClosedError("...", **exc.request_details()) from exc``.

        Returns
        -------
        RequestDetails
            The request's operation, method, URL, status and the service's message.
        """
        return {
            "operation": self.operation,
            "method": self.method,
            "url": self.url,
            "status": self.status,
            "server_message": self.server_message,
        }

    def __reduce__(self) -> tuple[Any, ...]:
        # Exception's own reduce calls cls(*args), which fails for a subclass with a
        # required keyword (task_id, report) and drops the keywords anyway; the state
        # (every attribute, including a subclass's) is restored without __init__.
        return (_rebuild, (type(self), self.args, dict(self.__dict__)))

    def _render(self) -> str:
        parts = [self.message]
        where = " ".join(p for p in (self.method, self.url) if p)
        context = []
        if self.operation:
            context.append(f"operation {self.operation}")
        if where:
            context.append(where)
        if self.status is not None:
            context.append(f"status {self.status}")
        if context:
            parts.append(f"({', '.join(context)})")
        if self.server_message and self.server_message not in self.message:
            parts.append(f"server said: {self.server_message}")
        return " ".join(parts)


# -- before or without a call -----------------------------------------------------------


class ConfigurationError(MddError):
    """A setting is missing or invalid (names the argument and the environment variable)."""


class MissingDependencyError(ConfigurationError, ImportError):
    """An optional extra is needed and not installed (names the ``pip install`` to run)."""


class InvalidArgumentError(MddError, ValueError):
    """An argument given to mddframes is unusable (e.g. an empty id); nothing was sent."""


class BusyError(MddError):
    """A panel was asked to start work while its previous work still runs."""


class ClientClosedError(MddError):
    """The client was closed (``close()`` or the end of its ``with`` block); nothing was sent."""


# -- the service answered with a status ----------------------------------------------------


class ServiceError(MddError):
    """The service answered with a status that is not a success.

    The base of every "the service answered N" error; raised as itself for a redirect
    (mddframes never follows one) and for a status with no class of its own.

    Attributes
    ----------
    status : int
        The HTTP status of the answer (always set when mddframes raises it).
    server_message : str or None
        What the service said, from the body or the ``WWW-Authenticate`` header.
    """


class BadRequestError(ServiceError):
    """The service rejected the request as malformed (HTTP 400)."""


class UnsupportedMediaTypeError(BadRequestError):
    """The service did not accept the body's content type (HTTP 415)."""


class AuthError(ServiceError):
    """The token endpoint refused the credentials, or the API refused the token (401/403).

    Attributes
    ----------
    error, error_description : str or None
        The OAuth2 ``error`` and ``error_description`` fields of the answer (body or
        ``WWW-Authenticate`` header).
    """

    def __init__(
        self,
        message: str,
        *,
        error: str | None = None,
        error_description: str | None = None,
        **kwargs: Any,
    ) -> None:
        self.error = error
        self.error_description = error_description
        super().__init__(message, **kwargs)


class NotFoundError(ServiceError):
    """The resource does not exist (HTTP 404)."""


class ConflictError(ServiceError):
    """The request conflicts with the resource's state (HTTP 409), e.g. a closed package."""


class PackageClosedError(ConflictError):
    """The deployment package is not open, so elements cannot be added to it."""


class RateLimitError(ServiceError):
    """The service kept answering 429 Too Many Requests after all retries."""


class ServerError(ServiceError):
    """The service failed (HTTP 5xx) after all retries."""


# -- no answer, or one that cannot be read ------------------------------------------------


class TransportError(MddError):
    """The request did not complete: connection refused or dropped, time-out, TLS failure.

    Attributes
    ----------
    may_have_been_sent : bool
        False when the request never left: the connection could not be opened
        (refused, unreachable, the name not resolved, the connect time-out), so nothing
        reached the service. True otherwise (it may have been, and may have acted).
    """

    def __init__(self, message: str, *, may_have_been_sent: bool = True, **kwargs: Any) -> None:
        self.may_have_been_sent = may_have_been_sent
        super().__init__(message, **kwargs)


class AnswerLostError(TransportError):
    """A request that acts (a POST) went out and its answer was lost (the connection
    dropped, or it was answered with a 5xx, which does not say whether it acted): the
    service may have done it.

    mddframes does not repeat such a request blindly; where the service can be asked
    (the tree for a created child, the package listing for an addition) it asks first.
    """


class ResponseFormatError(MddError):
    """The service answered with a body that is not what the operation returns
    (not JSON, truncated JSON, an unexpected shape)."""


class DataShapeError(MddError):
    """A service answer or a user frame does not have a shape mddframes can read."""


# -- writing ----------------------------------------------------------------------------------


class WriteRefusedError(MddError):
    """A write was stopped by one of its safety checks before anything was sent.

    Raised as itself when the frame has no original to overlay on (it was not read
    through this client and ``force=True`` was not given).
    """


class ConcurrentModificationError(WriteRefusedError):
    """The object changed on the service since the frame was read.

    Attributes
    ----------
    changes : pandas.DataFrame or None
        What changed between the read and now (a diff frame), when known.
    """

    def __init__(self, message: str, *, changes: Any = None, **kwargs: Any) -> None:
        self.changes = changes
        super().__init__(message, **kwargs)


class IncompletePayloadError(WriteRefusedError):
    """A write was refused because its completeness check found errors.

    Attributes
    ----------
    report : CheckReport
        The full report; ``report.errors`` lists what is wrong and where.
    """

    def __init__(self, message: str, *, report: Any, **kwargs: Any) -> None:
        self.report = report
        super().__init__(message, **kwargs)


class WriteVerificationError(MddError):
    """The object read back after a write differs from what was sent."""


class BackupError(MddError):
    """A backup file could not be written (no free name, a disk error, content not JSON)."""


class LockTimeoutError(WriteRefusedError):
    """Another writer on this machine held the object's (or the batch's) lock too long.

    The message names the holder (pid, host, what for, since when); nothing was sent.

    Attributes
    ----------
    path : str or None
        The lock file.
    """

    def __init__(self, message: str, *, path: str | None = None, **kwargs: Any) -> None:
        self.path = path
        super().__init__(message, **kwargs)


class JournalError(MddError):
    """A batch's write journal cannot be written, read, or resumed/rolled back as asked.

    Attributes
    ----------
    path : str or None
        The journal file (or its folder) concerned.
    """

    def __init__(self, message: str, *, path: str | None = None, **kwargs: Any) -> None:
        self.path = path
        super().__init__(message, **kwargs)


# -- exports ----------------------------------------------------------------------------------


class ExportError(MddError):
    """An export task did not deliver its result.

    Attributes
    ----------
    task_id : str
        The task's id (``"legacy"`` for the single-export fallback).
    """

    def __init__(self, message: str, *, task_id: str, **kwargs: Any) -> None:
        self.task_id = task_id
        super().__init__(message, **kwargs)


class ExportTimeoutError(ExportError):
    """An export task did not finish in time. ``task_id`` lets you attach to it later."""


class ExportFailedError(ExportError):
    """An export task ended as FAILED; ``task_id`` and the service's message are kept."""


class UnsafeArchiveError(MddError):
    """An export archive has an entry that escapes its folder, or expands beyond the limit."""


# -- warnings -------------------------------------------------------------------------------


class MddWarning(UserWarning):
    """Base class of every warning mddframes issues (filter them all with it)."""


class PartialFailureWarning(MddWarning):
    """A bulk call with ``errors="skip"`` finished, but some ids failed."""


class LegacyExportWarning(MddWarning):
    """The service has no batch export; single exports were used instead."""


class TreeIntegrityWarning(MddWarning):
    """The tree has orphans (a parent id that is not in the tree) or parent cycles."""


class DeclaredTypeWarning(MddWarning):
    """A column's values do not fit its declared ``dataType`` (an integer beyond 64 bits
    in a BIGINT column, text in a DATE column...): the column takes the dtype its values
    give instead (see :data:`mddframes.codec.dtypes.DTYPE_RULES`); the warning names the
    column and its declared type. Nothing is rounded or re-encoded."""


class MappingShapeWarning(MddWarning):
    """Lineage met mappings lacking ``sourceId``, ``targetId`` or ``columnMappings``.

    Row 17 of ``docs/wire-format.md`` assumes these fields; such mappings are left out
    of the lineage (named once in the warning), never guessed.
    """


#: Files whose frames :func:`issue_warning` passes over: mddframes itself, and the context-manager
#: plumbing a ``with`` block of ours runs through.
_OWN_FILES = (os.path.dirname(os.path.abspath(__file__)) + os.sep,)
_PLUMBING = frozenset({contextlib.__file__})


def issue_warning(message: str, category: type[Warning]) -> None:
    """Issue a warning that names the caller's line: the first frame outside mddframes.

    Parameters
    ----------
    message : str
    category : type of Warning
        An :class:`MddWarning` subclass.

    Notes
    -----
    ``warnings.warn(..., skip_file_prefixes=...)`` does this from Python 3.12; 3.11 is
    supported, so the frames are walked here, the one place that does. A warning issued
    where no frame is outside mddframes (a worker thread) names the line that issued it.
    """
    frame: FrameType | None = sys._getframe(1)
    level = 2  # warnings.warn's stacklevel of this function's caller
    while frame is not None and (
        frame.f_code.co_filename.startswith(_OWN_FILES) or frame.f_code.co_filename in _PLUMBING
    ):
        frame = frame.f_back
        level += 1
    warnings.warn(message, category, stacklevel=level if frame is not None else 2)


def renamed(method: Callable[_P, _R], old: str) -> Callable[_P, _R]:
    """``method`` under its former name ``old``: a ``DeprecationWarning``, then the call.

    For a method renamed by the rule of one shape for results (docs/contributing.md):
    in the class body, ``files = renamed(list_files, "files")``. The alias carries
    ``__deprecated__`` (as ``warnings.deprecated`` of Python 3.13 sets it).
    """

    @functools.wraps(method)
    def alias(*args: _P.args, **kwargs: _P.kwargs) -> _R:
        issue_warning(
            f"{old}() is now {method.__name__}(): what asks the service, reads a file or "
            "takes time is a method named by a verb; the old name goes in a later release",
            DeprecationWarning,
        )
        return method(*args, **kwargs)

    alias.__name__ = old
    alias.__qualname__ = method.__qualname__.rsplit(".", 1)[0] + "." + old
    alias.__doc__ = (
        f"Deprecated: the former name of :meth:`{method.__name__}`.\n\n"
        f"Returns\n-------\nobject\n    What :meth:`{method.__name__}` returns.\n"
    )
    setattr(alias, "__deprecated__", f"Deprecated: the former name of {method.__name__}().")  # noqa: B010 (a dunder mypy does not know)
    return alias
