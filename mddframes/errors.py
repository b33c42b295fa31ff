"""The exception hierarchy of mddframes, rooted at :class:`MddError`.

Every error raised by the library is an ``MddError``. Errors that come from a
service call carry the operation name, the HTTP method, the URL, the status
code and the server's message, and never a token or a secret.
"""

from __future__ import annotations

from typing import Any


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
    """

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


class ConfigurationError(MddError):
    """A setting is missing or invalid (names the argument and the environment variable)."""


class AuthError(MddError):
    """The token endpoint refused the credentials, or the API refused the token.

    Attributes
    ----------
    error, error_description : str or None
        The OAuth2 ``error`` and ``error_description`` fields of the token answer.
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


class InvalidArgumentError(MddError, ValueError):
    """An argument given to mddframes is unusable (e.g. an empty id); nothing was sent."""


class BadRequestError(MddError):
    """The service rejected the request as malformed (HTTP 400)."""


class NotFoundError(MddError):
    """The resource does not exist (HTTP 404)."""


class ConflictError(MddError):
    """The request conflicts with the resource's state (HTTP 409), e.g. a closed package."""


class UnsupportedMediaTypeError(BadRequestError):
    """The service did not accept the body's content type (HTTP 415)."""


class RateLimitError(MddError):
    """The service kept answering 429 Too Many Requests after all retries."""


class ServerError(MddError):
    """The service failed (HTTP 5xx) after all retries."""


class TransportError(MddError):
    """The request did not complete: connection refused or dropped, time-out, TLS failure."""


class ResponseFormatError(MddError):
    """The service answered with a body that is not what the operation returns
    (not JSON, truncated JSON, an unexpected shape)."""


class PackageClosedError(ConflictError):
    """The deployment package is not open, so elements cannot be added to it."""


class IncompletePayloadError(MddError):
    """A write was refused because its completeness check found errors.

    Attributes
    ----------
    report : CheckReport
        The full report; ``report.errors`` lists what is wrong and where.
    """

    def __init__(self, message: str, *, report: Any, **kwargs: Any) -> None:
        self.report = report
        super().__init__(message, **kwargs)


class ConcurrentModificationError(MddError):
    """The object changed on the service since the frame was read.

    Attributes
    ----------
    changes : pandas.DataFrame or None
        What changed between the read and now (a diff frame), when known.
    """

    def __init__(self, message: str, *, changes: Any = None, **kwargs: Any) -> None:
        self.changes = changes
        super().__init__(message, **kwargs)


class WriteVerificationError(MddError):
    """The object read back after a write differs from what was sent."""


class ExportTimeout(MddError):
    """An export task did not finish in time. ``task_id`` lets you attach to it later."""

    def __init__(self, message: str, *, task_id: str, **kwargs: Any) -> None:
        self.task_id = task_id
        super().__init__(message, **kwargs)


class ExportFailed(MddError):
    """An export task ended as FAILED; ``task_id`` and the service's message are kept."""

    def __init__(self, message: str, *, task_id: str, **kwargs: Any) -> None:
        self.task_id = task_id
        super().__init__(message, **kwargs)


class UnsafeArchiveError(MddError):
    """An export archive has an entry that escapes its folder, or expands beyond the limit."""


class DataShapeError(MddError):
    """A service answer or a user frame does not have a shape mddframes can read."""
