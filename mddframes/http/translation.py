"""Failures into ``MddError`` subclasses: the one place an HTTP failure gets its class.

- :func:`error_for_response`: an answer with a non-success status becomes a
  :class:`~mddframes.errors.ServiceError` subclass (the status table);
- :func:`transport_error`: an exception of ``requests`` (no answer, or an answer cut off
  or undecodable while its body was read) becomes a ``TransportError`` or a
  ``ResponseFormatError``, written once for the call and for both streamed reads; a
  request that never left (:func:`nothing_sent`) says so (``may_have_been_sent``);
- :func:`bound_error`: a call past its deadline or an answer past the size cap
  (:mod:`mddframes.http.guard`).

Every error names the operation, method, URL, status and the server's message, never a
credential.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any, NotRequired, TypedDict
from urllib.parse import urlsplit

import requests
from urllib3.exceptions import ConnectTimeoutError

from mddframes import errors
from mddframes.config import Settings
from mddframes.http.advice import credentials_refused_message
from mddframes.http.endpoints import Endpoint
from mddframes.http.guard import BodyTooLarge, BoundExceeded, DeadlinePassed
from mddframes.http.retry import RETRY_METHODS
from mddframes.known_ids import KnownIds

_STATUS_ERRORS: dict[int, tuple[type[errors.ServiceError], str]] = {
    400: (errors.BadRequestError, "the service rejected the request as malformed"),
    401: (errors.AuthError, "the service refused the access token"),
    403: (errors.AuthError, "the API user is not allowed to do this"),
    404: (errors.NotFoundError, "not found"),
    409: (errors.ConflictError, "the request conflicts with the current state"),
    415: (errors.UnsupportedMediaTypeError, "the service did not accept the body's content type"),
    429: (errors.RateLimitError, "the service kept answering 429 Too Many Requests"),
}


class _ErrorContext(TypedDict):
    """The keyword arguments every ``MddError`` of a call gets: where it happened."""

    operation: str
    method: str
    url: str
    status: int | None
    server_message: NotRequired[str | None]


#: The path parameters a 404 is about, and the kind of id each one is.
_ID_KINDS = {"tableId": "table", "mappingId": "mapping", "id": "element",
             "structureId": "element", "parentId": "element"}  # fmt: skip

#: The whole-object writes a 412 (a failed If-Match) is about: their kind and id parameter.
_PRECONDITIONED = {"tableUpdate": ("table", "tableId"), "mappingUpdate": ("mapping", "mappingId")}


def error_for_response(
    entry: Endpoint,
    url: str,
    response: requests.Response,
    *,
    path_params: Mapping[str, object] | None = None,
    settings: Settings | None = None,
    known_ids: KnownIds | None = None,
) -> errors.MddError:
    """The ``MddError`` for a response that is not a success: the one translation table.

    400 ``BadRequestError``, 401/403 ``AuthError`` (with the OAuth ``error`` and
    ``error_description`` of the body or the ``WWW-Authenticate`` header), 404
    ``NotFoundError``, 409 ``ConflictError`` (``PackageClosedError`` when adding to a
    package), 412 of a table or mapping update ``ConcurrentModificationError`` (its
    ``If-Match`` failed: the object changed since it was read; named from
    ``path_params``), 415 ``UnsupportedMediaTypeError``, 429 ``RateLimitError``, 5xx
    ``ServerError``, a redirect or any other status the generic ``ServiceError``. Any 4xx
    of the token endpoint is an ``AuthError``. Every one but the 412 of an update is a
    ``ServiceError``. With ``settings``, a 401 of the token endpoint names the
    credentials' variables and where their values came from. With ``known_ids``, a 404
    about an id names the close ids of the tree frames read before.
    """
    status = response.status_code
    body = _error_body(response)
    oauth_error, oauth_description = _oauth_fields(response, body)
    server_message = _server_message(body) or oauth_description or oauth_error
    context: _ErrorContext = {
        "operation": entry.operation,
        "method": entry.method,
        "url": url,
        "status": status,
        "server_message": server_message,
    }
    if entry.operation == "getToken" and 400 <= status < 500:
        if status == 401 and settings is not None:
            message = credentials_refused_message(settings, oauth_error, response.reason)
        else:
            message = f"the token endpoint refused the request: {oauth_error or response.reason}"
        return errors.AuthError(
            message,
            error=oauth_error,
            error_description=oauth_description,
            **context,
        )
    if status in (401, 403):
        return errors.AuthError(
            _STATUS_ERRORS[status][1],
            error=oauth_error,
            error_description=oauth_description,
            **context,
        )
    if status == 409 and entry.operation == "addToDeploymentPackage":
        return errors.PackageClosedError(
            "the deployment package does not accept additions (it is not open)", **context
        )
    if status == 412 and entry.operation in _PRECONDITIONED:
        return _precondition_failed(entry, response, path_params or {}, context)
    if status == 429:
        retry_after = response.headers.get("Retry-After")
        suffix = f" (last Retry-After: {retry_after})" if retry_after else ""
        return errors.RateLimitError(_STATUS_ERRORS[429][1] + suffix, **context)
    if status == 404:
        return errors.NotFoundError(_not_found(path_params or {}, known_ids), **context)
    if status in _STATUS_ERRORS:
        kind, message = _STATUS_ERRORS[status]
        return kind(message, **context)
    if 500 <= status < 600:
        return errors.ServerError(f"the service failed ({response.reason or status})", **context)
    if 300 <= status < 400:
        location = response.headers.get("Location", "nowhere")
        return errors.ServiceError(
            f"unexpected redirect to {location!r}; check base_url and api_prefix", **context
        )
    return errors.ServiceError(f"unexpected answer {status} {response.reason}", **context)


def _not_found(path_params: Mapping[str, object], known_ids: KnownIds | None) -> str:
    # with two ids in the path (an element and an object type) either may be unknown
    if len(path_params) == 1:
        [(key, value)] = path_params.items()
        if key in _ID_KINDS:
            suggestion = known_ids.suggest(_ID_KINDS[key], str(value)) if known_ids else ""
            return f"{_ID_KINDS[key]} {str(value)!r} not found{suggestion}"
    return _STATUS_ERRORS[404][1]


def _precondition_failed(
    entry: Endpoint,
    response: requests.Response,
    path_params: Mapping[str, object],
    context: _ErrorContext,
) -> errors.ConcurrentModificationError:
    kind, key = _PRECONDITIONED[entry.operation]
    name = f"{kind} {path_params[key]!r}" if key in path_params else kind
    # the paced loop (http/attempts.py) counts the attempts it repeated
    repeats = int(getattr(response, "mdd_attempts", 1)) - 1
    if repeats:
        message = (
            f"{name}: the service answered 412 Precondition Failed (If-Match no longer "
            f"matches) after the PUT was repeated {repeats} time(s); an earlier attempt "
            f"whose answer was lost may have written it. Read the {kind} again to see "
            "what it holds before writing again"
        )
    else:
        message = (
            f"{name} changed on the service since it was read: its ETag no longer matches "
            "the If-Match sent (412 Precondition Failed). Nothing was written. Read it "
            "again and redo the edit"
        )
    return errors.ConcurrentModificationError(message, **context)


def _error_body(response: requests.Response) -> Any:
    try:
        content = response.content
    except (requests.exceptions.RequestException, BoundExceeded):
        return None
    if not content.strip():
        return None
    try:
        return json.loads(content)
    except (ValueError, UnicodeDecodeError):
        text = content[:300].decode("utf-8", "replace").strip()
        # An HTML error page says nothing useful in a one-line message.
        return None if text.lstrip().startswith("<") else text


def _server_message(body: Any) -> str | None:
    if isinstance(body, str):
        return body or None
    if isinstance(body, dict):
        for key in ("message", "error_description", "detail", "error"):
            value = body.get(key)
            if isinstance(value, str) and value:
                return value
    return None


_AUTH_PARAM = re.compile(r'(\w+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^\s,]+))')


def _oauth_fields(response: requests.Response, body: Any) -> tuple[str | None, str | None]:
    """The OAuth ``error`` and ``error_description``, from the body or WWW-Authenticate."""
    error = description = None
    if isinstance(body, dict):
        if isinstance(body.get("error"), str):
            error = body["error"]
        if isinstance(body.get("error_description"), str):
            description = body["error_description"]
    challenge = response.headers.get("WWW-Authenticate", "")
    if challenge:
        params = {k.lower(): (q if q else u) for k, q, u in _AUTH_PARAM.findall(challenge)}
        error = error or params.get("error")
        description = description or params.get("error_description")
    return error, description


def format_error(
    message: str, entry: Endpoint, url: str, *, status: int | None
) -> errors.ResponseFormatError:
    """The ``ResponseFormatError`` for an answer whose body is not what ``entry`` returns."""
    return errors.ResponseFormatError(
        message, operation=entry.operation, method=entry.method, url=url, status=status
    )


# -- no answer, or an answer that broke while its body was read -----------------------------

#: What requests raises when the answer's body is cut off or cannot be decoded.
_BODY_BROKEN = (
    requests.exceptions.ChunkedEncodingError,
    requests.exceptions.ContentDecodingError,
)


def transport_error(
    exc: requests.exceptions.RequestException,
    entry: Endpoint,
    url: str,
    *,
    status: int | None = None,
    received: int | None = None,
    max_retries: int = 0,
) -> errors.ResponseFormatError | errors.TransportError:
    """The ``MddError`` for an exception of ``requests`` during a call or its body's read.

    A body cut off or undecodable is a ``ResponseFormatError``; anything else (refused,
    dropped, timed out, TLS) a ``TransportError``.

    Parameters
    ----------
    exc : requests.exceptions.RequestException
        What ``requests`` raised.
    entry : Endpoint
        The operation called.
    url : str
        The URL called (no credentials in it).
    status : int, optional
        The answer's status, once there was one.
    received : int, optional
        The bytes of the body read before the failure, for a streamed read; None when
        the failure came while sending or reading the whole answer.
    max_retries : int
        The session's retries, named in the message for a method that is repeated.
    """
    context: _ErrorContext = {
        "operation": entry.operation,
        "method": entry.method,
        "url": url,
        "status": status,
    }
    name = type(exc).__name__
    if isinstance(exc, _BODY_BROKEN):
        if received is None:
            message = f"the answer was cut off or could not be decoded ({name})"
        else:
            message = f"the answer was cut off after {received} bytes ({name})"
        return errors.ResponseFormatError(message, **context)
    if received is None and status is None and nothing_sent(exc):
        return errors.TransportError(
            _unsent_message(exc, max_retries, url), may_have_been_sent=False, **context
        )
    if received is None:
        message = _transport_message(exc, max_retries, entry.method, url)
    else:
        message = f"the connection failed after {received} bytes of the answer: {name}"
    return errors.TransportError(message, **context)


def nothing_sent(exc: BaseException) -> bool:
    """Whether a failed request never left: its connection could not be opened.

    A refused or unreachable connection, an unresolved name or a connect time-out
    (urllib3's ``NewConnectionError`` and ``ConnectTimeoutError``, anywhere in the
    chain of reasons ``requests`` wraps them in) sent nothing; a dropped connection,
    a read time-out or a TLS failure may have.
    """
    if isinstance(exc, requests.exceptions.ConnectTimeout):
        return True
    reason: BaseException | None = exc
    for _ in range(6):
        if reason is None:
            break
        if isinstance(reason, ConnectTimeoutError):  # NewConnectionError is one
            return True
        inner = getattr(reason, "reason", None)
        if inner is None and reason.args and isinstance(reason.args[0], BaseException):
            inner = reason.args[0]
        reason = inner if isinstance(inner, BaseException) else None
    return False


def _unsent_message(exc: Exception, max_retries: int, url: str) -> str:
    tries = f" ({1 + max_retries} attempts)" if max_retries > 0 else ""
    return (
        f"could not connect{tries}, so nothing was sent to the service: {_root_cause(exc)}. "
        f"Is the service running at {_origin(url)}, and is MDD_BASE_URL (base_url) its "
        "address?"
    )


def _origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


def _transport_message(exc: Exception, max_retries: int, method: str, url: str) -> str:
    retried = method in RETRY_METHODS and max_retries > 0
    attempts = f" after {max_retries} retries" if retried else ""
    if isinstance(exc, requests.exceptions.SSLError):
        return f"TLS failed{attempts}: {exc}"
    if isinstance(exc, requests.exceptions.Timeout):
        return f"the request timed out{attempts}"
    if isinstance(exc, requests.exceptions.ConnectionError):
        return (
            f"could not connect or the connection dropped{attempts}: {_root_cause(exc)}. "
            f"Is the service running at {_origin(url)}, and is MDD_BASE_URL (base_url) "
            "its address?"
        )
    return f"the request failed{attempts}: {type(exc).__name__}: {exc}"


def _root_cause(exc: BaseException) -> str:
    reason = exc
    for _ in range(5):
        inner = getattr(reason, "reason", None) or reason.__cause__ or reason.__context__
        if inner is None or inner is reason:
            break
        reason = inner
    return f"{type(reason).__name__}: {reason}"


def bound_error(
    exc: BoundExceeded,
    entry: Endpoint,
    url: str,
    *,
    status: int | None = None,
    received: int | None = None,
) -> errors.ResponseFormatError | errors.TransportError:
    """The ``MddError`` for a call past its deadline (``TransportError``) or an answer
    larger than ``max_response_bytes`` (``ResponseFormatError``).

    Parameters
    ----------
    exc : BoundExceeded
        What :mod:`mddframes.http.guard` raised.
    entry : Endpoint
        The operation called.
    url : str
        The URL called (no credentials in it).
    status : int, optional
        The answer's status, when its headers had arrived.
    received : int, optional
        Bytes of the body read, when the exception does not say.
    """
    context: _ErrorContext = {
        "operation": entry.operation,
        "method": entry.method,
        "url": url,
        "status": status,
    }
    got = exc.received if exc.received is not None else received
    if isinstance(exc, DeadlinePassed):
        after = f" ({got:,} bytes of the answer had arrived)" if got else ""
        return errors.TransportError(
            f"the call did not complete within its deadline of {exc.seconds:g} s{after}; "
            "the service is too slow, or the answer too large for the deadline "
            "(request_deadline, MDD_REQUEST_DEADLINE)",
            **context,
        )
    assert isinstance(exc, BodyTooLarge)
    if exc.declared is not None:
        size = f"it announced {exc.declared:,}"
    else:
        size = f"{got or 0:,} arrived"
    return errors.ResponseFormatError(
        f"the answer is larger than the limit of {exc.cap:,} bytes ({size}; "
        "max_response_bytes, MDD_MAX_RESPONSE_BYTES)",
        **context,
    )
