"""One HTTP session per client: pooled connections, retries, tokens, error translation.

:class:`HttpSession` is the only place mddframes talks HTTP. It

- keeps one :class:`requests.Session` whose connection pool is sized for the client's
  concurrency;
- mounts urllib3's :class:`~urllib3.util.retry.Retry` (exponential back-off with jitter,
  ``Retry-After`` honoured) for GET, PUT and HEAD on 429/500/502/503/504 and on
  connection errors. A POST is sent at most once: neither a status nor a connection
  error makes it go out again (the token request is the exception: it creates nothing);
- puts a bearer token on every API call, and on a 401 renews it and repeats the call
  once (a 401 means the call was not processed, so this holds for a POST too);
- sends the URL exactly as :func:`~mddframes.http.endpoints.build_path` built it (no
  ``..`` collapsing), with connect and read time-outs on every call;
- translates every failure into an :class:`~mddframes.errors.MddError` subclass naming
  the operation, method, URL, status and the server's message, here and only here;
- logs one DEBUG line per call (method, URL, status, elapsed ms), never a credential.
"""

from __future__ import annotations

import inspect
import json
import logging
import os
import re
import tempfile
import threading
import time
from collections.abc import Iterator, Mapping
from email.message import Message
from email.utils import collapse_rfc2231_value
from pathlib import Path, PurePosixPath
from typing import Any
from urllib.parse import urlencode, urlsplit

import requests
from requests.adapters import HTTPAdapter
from urllib3.util.retry import Retry

from mddframes import errors
from mddframes.config import Secret, Settings
from mddframes.http.auth import TokenGrant, TokenProvider
from mddframes.http.endpoints import Endpoint, build_path, endpoint

logger = logging.getLogger(__name__)

#: Statuses retried for GET/PUT. DESIGN lists 429/502/503/504; 500 is added because a
#: GET or a whole-object PUT is idempotent, and flaky gateways do answer 500.
RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})
RETRY_METHODS = frozenset({"GET", "PUT", "HEAD"})
BACKOFF_FACTOR = 0.25
BACKOFF_JITTER = 0.25
BACKOFF_MAX = 30.0
CHUNK_SIZE = 64 * 1024
USER_AGENT = "mddframes/0.1"

_NO_BODY = object()


class IdempotentRetry(Retry):
    """urllib3 ``Retry`` that never repeats a method outside ``allowed_methods``.

    Plain ``Retry`` repeats any method after a connection error (it assumes the
    request never left); mddframes promises that a POST goes out at most once, so
    for such a method every error is final.
    """

    def increment(  # type: ignore[override]
        self,
        method: str | None = None,
        url: str | None = None,
        *args: Any,
        **kwargs: Any,
    ) -> Retry:
        error = kwargs.get("error")
        if error is None and len(args) >= 2:
            error = args[1]
        if error is not None and (method is None or not self._is_method_retryable(method)):
            # connect/read/other=False make the stock Retry give up on this error at once.
            final = self.new(connect=False, other=False, read=False)
            return Retry.increment(final, method, url, *args, **kwargs)
        return super().increment(method, url, *args, **kwargs)


# urllib3 >= 2.5 caps Retry-After itself (default 6 hours); a shorter cap keeps a
# misbehaving server from parking a notebook for hours.
_CAP_RETRY_AFTER = "retry_after_max" in inspect.signature(Retry.__init__).parameters
RETRY_AFTER_MAX = 120


def make_retry(max_retries: int, methods: frozenset[str] = RETRY_METHODS) -> Retry:
    """The retry policy mounted on the session's adapters.

    Parameters
    ----------
    max_retries : int
        Retries after the first attempt (0 disables retrying).
    methods : frozenset of str
        The methods that may be repeated.
    """
    extra: dict[str, Any] = {"retry_after_max": RETRY_AFTER_MAX} if _CAP_RETRY_AFTER else {}
    return IdempotentRetry(
        **extra,
        total=max_retries,
        connect=max_retries,
        read=max_retries,
        status=max_retries,
        other=0,
        redirect=False,
        backoff_factor=BACKOFF_FACTOR,
        backoff_jitter=BACKOFF_JITTER,
        backoff_max=BACKOFF_MAX,
        status_forcelist=RETRY_STATUSES,
        allowed_methods=methods,
        respect_retry_after_header=True,
        raise_on_status=False,
        raise_on_redirect=False,
    )


class _BearerAuth(requests.auth.AuthBase):
    """Sets ``Authorization: Bearer`` from a masked token (also blocks .netrc lookup)."""

    def __init__(self, token: Secret | None) -> None:
        self._token = token

    def __call__(self, request: requests.PreparedRequest) -> requests.PreparedRequest:
        if self._token is not None:
            request.headers["Authorization"] = "Bearer " + self._token.reveal()
        return request

    def __repr__(self) -> str:
        return "<bearer auth, masked>"


class HttpSession:
    """The HTTP layer of one client.

    Parameters
    ----------
    settings : Settings
        Where and how to connect.

    Attributes
    ----------
    tokens : TokenProvider
        The token provider (its ``fetches`` counts token requests).
    unauthorized_repeats : int
        How many calls got a 401 and were repeated with a renewed token.
    """

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self._session = requests.Session()
        self._session.headers["User-Agent"] = USER_AGENT
        self._session.verify = settings.verify
        self._environments: dict[tuple[str, str, bool], dict[str, Any]] = {}
        pool = HTTPAdapter(
            pool_connections=4,
            pool_maxsize=max(settings.max_workers, 1),
            max_retries=make_retry(settings.max_retries),
        )
        self._session.mount("https://", pool)
        self._session.mount("http://", pool)
        # Canonical roots, prepared once; every URL is one of these plus a built path.
        self._base_root = _canonical_root(settings.base_url)
        self._api_root = _canonical_root(settings.api_url)
        token_url = self.url_for(endpoint("getToken"), build_path("getToken", realm=settings.realm))
        # Asking for a token twice is harmless (it creates nothing), so the token POST
        # is retried like a GET; the longer prefix makes requests pick this adapter.
        self._session.mount(
            token_url,
            HTTPAdapter(
                pool_connections=1,
                pool_maxsize=max(settings.max_workers, 1),
                max_retries=make_retry(settings.max_retries, RETRY_METHODS | {"POST"}),
            ),
        )
        self._token_url = token_url
        self.tokens = TokenProvider(self._fetch_token)
        self.unauthorized_repeats = 0
        self._counter_lock = threading.Lock()
        self._closed = False

    def __repr__(self) -> str:
        return f"<HttpSession {self.settings.base_url!r}>"

    # -- public ---------------------------------------------------------------------

    def url_for(self, entry: Endpoint, path: str) -> str:
        """The full URL of ``path`` (already built) for the operation ``entry``."""
        return (self._api_root if entry.under_api_prefix else self._base_root) + path

    def call(
        self,
        operation: str,
        path_params: Mapping[str, object] | None = None,
        *,
        json_body: Any = _NO_BODY,
        files: Mapping[str, Any] | None = None,
        stream: bool = False,
    ) -> requests.Response:
        """Send one API call and return its successful (2xx) response.

        Parameters
        ----------
        operation : str
            The operation id in the endpoints table.
        path_params : mapping, optional
            Values for the path template's placeholders.
        json_body : any, optional
            A JSON body (serialised strictly: NaN and infinities are refused).
        files : mapping, optional
            Multipart fields, as ``requests`` takes them.
        stream : bool
            Leave the body unread (the caller streams it and must close the response).

        Raises
        ------
        MddError
            The translated failure (see :func:`error_for_response`).
        """
        if self._closed:
            raise errors.ClientClosedError("this client is closed", operation=operation)
        entry = endpoint(operation)
        url = self.url_for(entry, build_path(operation, **dict(path_params or {})))
        body = None if json_body is _NO_BODY else _encode_json(json_body, entry, url)
        for attempt in (1, 2):
            token = self.tokens.token()
            response = self._send(entry, url, token=token, body=body, files=files, stream=stream)
            if response.status_code == 401 and attempt == 1:
                # The call was refused before being processed: renew and repeat once.
                response.close()
                self.tokens.invalidate(token)
                with self._counter_lock:
                    self.unauthorized_repeats += 1
                logger.info(
                    "%s %s: token refused (401); renewing it and repeating once", entry.method, url
                )
                continue
            break
        if not 200 <= response.status_code < 300:
            try:
                raise error_for_response(entry, url, response)
            finally:
                response.close()
        return response

    def close(self) -> None:
        """Close the pooled connections. Further calls raise ``ClientClosedError``."""
        self._closed = True
        self._session.close()

    # -- token --------------------------------------------------------------------

    def _fetch_token(self) -> TokenGrant:
        entry = endpoint("getToken")
        form = Secret(
            urlencode(
                {
                    "grant_type": "client_credentials",
                    "client_id": self.settings.client_id,
                    "client_secret": self.settings.client_secret.reveal(),
                }
            )
        )
        response = self._send(
            entry,
            self._token_url,
            token=None,
            body=form,
            content_type="application/x-www-form-urlencoded",
        )
        try:
            if response.status_code != 200:
                raise error_for_response(entry, self._token_url, response)
            return _token_grant(entry, self._token_url, response)
        finally:
            response.close()

    # -- sending -------------------------------------------------------------------

    def _environment(self, url: str, stream: bool) -> dict[str, Any]:
        """requests' proxy, CA-bundle and stream settings for ``url``.

        requests reads the proxy and CA-bundle variables again on every call, which
        costs as much as a small call itself; they depend only on the origin, so they
        are read once per origin. (Two threads racing here both compute the same value.)
        """
        parts = urlsplit(url)
        key = (parts.scheme, parts.netloc, stream)
        settings = self._environments.get(key)
        if settings is None:
            settings = self._session.merge_environment_settings(
                url, {}, stream, self.settings.verify, None
            )
            self._environments[key] = settings
        return settings

    def _send(
        self,
        entry: Endpoint,
        url: str,
        *,
        token: Secret | None,
        body: bytes | Secret | None = None,
        files: Mapping[str, Any] | None = None,
        stream: bool = False,
        content_type: str = "application/json",
    ) -> requests.Response:
        headers = {"Accept": "application/json, text/plain;q=0.9, */*;q=0.8"}
        if body is not None:
            headers["Content-Type"] = content_type
        # Prepared directly rather than through Session.prepare_request, which merges
        # two fresh cookie jars per call (a third of a small call's client CPU); the
        # session's headers, cookies (sticky load balancers) and hooks still apply.
        prepared = requests.PreparedRequest()
        prepared.prepare(
            method=entry.method,
            url=url,
            headers={**self._session.headers, **headers},
            files=dict(files) if files else None,
            data=body.reveal() if isinstance(body, Secret) else body,
            cookies=self._session.cookies,
            auth=_BearerAuth(token),
            hooks=self._session.hooks,
        )
        # requests (via urllib3's parse_url) removes dot segments, which would send an
        # id of ".." to the parent resource; the URL is already fully encoded, so it is
        # sent exactly as built.
        prepared.url = url
        environment = self._environment(url, stream)
        started = time.perf_counter()
        try:
            response = self._session.send(
                prepared,
                timeout=self.settings.timeout,
                allow_redirects=False,
                **environment,
            )
        except (
            requests.exceptions.ChunkedEncodingError,
            requests.exceptions.ContentDecodingError,
        ) as exc:
            _log_call(entry, url, None, started)
            raise errors.ResponseFormatError(
                f"the answer was cut off or could not be decoded ({type(exc).__name__})",
                operation=entry.operation,
                method=entry.method,
                url=url,
            ) from exc
        except requests.exceptions.RequestException as exc:
            _log_call(entry, url, None, started)
            raise errors.TransportError(
                _transport_message(exc, self.settings.max_retries, entry.method),
                operation=entry.operation,
                method=entry.method,
                url=url,
            ) from exc
        _log_call(entry, url, response.status_code, started)
        return response


# -- decoding answers ----------------------------------------------------------------


def decode_json(entry: Endpoint, url: str, response: requests.Response) -> Any:
    """The decoded JSON body of ``response``, or ``None`` when the body is empty.

    Raises
    ------
    ResponseFormatError
        If the body is not JSON or is truncated (the message says which, with the
        content type and a short excerpt; never an excerpt of a token answer).
    """
    return decode_json_content(
        entry,
        url,
        response.content,
        status=response.status_code,
        content_type=response.headers.get("Content-Type"),
    )


def decode_json_content(
    entry: Endpoint, url: str, content: bytes, *, status: int | None, content_type: str | None
) -> Any:
    """:func:`decode_json` of a body already read (e.g. kept by a streamed read)."""
    if not content.strip():
        return None
    try:
        return json.loads(content)
    except (ValueError, UnicodeDecodeError) as exc:
        detail = str(exc)
        if isinstance(exc, json.JSONDecodeError) and exc.pos >= len(exc.doc.rstrip()):
            detail = f"the JSON ends early after {len(content)} bytes (truncated?)"
        excerpt = ""
        if entry.operation != "getToken":
            excerpt = f"; it begins {content[:120].decode('utf-8', 'replace')!r}"
        raise errors.ResponseFormatError(
            f"the answer is not valid JSON ({content_type or 'no content type'}): "
            f"{detail}{excerpt}",
            operation=entry.operation,
            method=entry.method,
            url=url,
            status=status,
        ) from None


class BodyStream:
    """A successful answer whose body is still unread: read it whole or in chunks.

    Use it as a context manager (it closes the response, which returns the
    connection to the pool). Errors while reading become ``MddError`` subclasses
    naming the operation, as for any call.

    Attributes
    ----------
    entry : Endpoint
    url : str
    status : int
    length : int or None
        The body's size in bytes from ``Content-Length``; None when unknown (no such
        header, or a ``Content-Encoding`` that makes the decoded size differ).
    """

    def __init__(self, entry: Endpoint, url: str, response: requests.Response) -> None:
        self.entry = entry
        self.url = url
        self._response = response
        self.status = response.status_code
        self.content_type = response.headers.get("Content-Type")
        declared = response.headers.get("Content-Length", "")
        encoded = response.headers.get("Content-Encoding", "identity").lower() != "identity"
        self.length = int(declared) if declared.isdigit() and not encoded else None

    def __enter__(self) -> BodyStream:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the response (the rest of the body is not read)."""
        self._response.close()

    def __repr__(self) -> str:
        return f"<BodyStream {self.entry.method} {self.url} ({self.length} bytes)>"

    def json(self) -> Any:
        """The whole body decoded as JSON (see :func:`decode_json`)."""
        return decode_json_content(self.entry, self.url, self.content(),
                                   status=self.status, content_type=self.content_type)  # fmt: skip

    def content(self) -> bytes:
        """The whole body."""
        return b"".join(self.chunks())

    def chunks(self, chunk_size: int = CHUNK_SIZE) -> Iterator[bytes]:
        """The body in pieces of up to ``chunk_size`` bytes, as they arrive.

        Raises
        ------
        ResponseFormatError
            If the transfer is cut off (or shorter than ``Content-Length``).
        TransportError
            If the connection fails or times out while reading.
        """
        received = 0
        try:
            for chunk in self._response.iter_content(chunk_size=chunk_size):
                received += len(chunk)
                yield chunk
        except (
            requests.exceptions.ChunkedEncodingError,
            requests.exceptions.ContentDecodingError,
        ) as exc:
            raise errors.ResponseFormatError(
                f"the answer was cut off after {received} bytes ({type(exc).__name__})",
                operation=self.entry.operation,
                method=self.entry.method,
                url=self.url,
                status=self.status,
            ) from exc
        except requests.exceptions.RequestException as exc:
            raise errors.TransportError(
                f"the connection failed after {received} bytes of the answer: {type(exc).__name__}",
                operation=self.entry.operation,
                method=self.entry.method,
                url=self.url,
                status=self.status,
            ) from exc
        if self.length is not None and received != self.length:
            raise errors.ResponseFormatError(
                f"the answer is {received} bytes but the server announced {self.length}",
                operation=self.entry.operation,
                method=self.entry.method,
                url=self.url,
                status=self.status,
            )


def decode_text(entry: Endpoint, url: str, response: requests.Response) -> str:
    """The body of ``response`` as text, in its declared charset (UTF-8 if none).

    Raises
    ------
    ResponseFormatError
        If the bytes do not decode in that charset.
    """
    charset = (
        _header_params("Content-Type", response.headers.get("Content-Type", "")).get("charset")
        or "utf-8"
    )
    try:
        return response.content.decode(charset)
    except (LookupError, UnicodeDecodeError) as exc:
        raise errors.ResponseFormatError(
            f"the answer does not decode as {charset}: {exc}",
            operation=entry.operation,
            method=entry.method,
            url=url,
            status=response.status_code,
        ) from None


def attachment_filename(response: requests.Response) -> str | None:
    """The file name of ``Content-Disposition`` (RFC 6266/2231), reduced to a base name."""
    value = response.headers.get("Content-Disposition")
    if not value:
        return None
    message = Message()
    message["Content-Disposition"] = value
    params = message.get_params(header="content-disposition", failobj=[])[1:]
    names = [v for k, v in params if k.lower() == "filename"]
    # RFC 6266: filename* (RFC 2231-encoded, parsed as a tuple) wins over the plain
    # filename, which servers send as an ASCII fallback ("Zürich.md" -> "Z_rich.md").
    extended = [v for v in names if isinstance(v, tuple)]
    chosen = extended[0] if extended else (names[0] if names else None)
    if not chosen:
        return None
    name = collapse_rfc2231_value(chosen).strip()
    # A server-chosen name must not steer where a caller writes: keep the last part.
    base = PurePosixPath(name.replace("\\", "/")).name
    return base if base not in ("", ".", "..") else None


def stream_to_file(
    entry: Endpoint, url: str, response: requests.Response, path: str | os.PathLike[str]
) -> Path:
    """Stream the body of ``response`` into ``path`` via a temporary file beside it.

    The file appears under its name only once complete (an atomic rename); on any
    failure the temporary file is removed and ``path`` is left as it was.

    Returns
    -------
    Path
        ``path``.

    Raises
    ------
    ResponseFormatError
        If the transfer is cut off or shorter than ``Content-Length``.
    TransportError
        If the connection fails or times out while streaming.
    """
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    handle = tempfile.NamedTemporaryFile(
        dir=target.parent, prefix=f".{target.name}.", suffix=".part", delete=False
    )
    written = 0
    try:
        with handle:
            try:
                for chunk in response.iter_content(chunk_size=CHUNK_SIZE):
                    handle.write(chunk)
                    written += len(chunk)
            except (
                requests.exceptions.ChunkedEncodingError,
                requests.exceptions.ContentDecodingError,
            ) as exc:
                raise errors.ResponseFormatError(
                    f"the file transfer was cut off after {written} bytes",
                    operation=entry.operation,
                    method=entry.method,
                    url=url,
                    status=response.status_code,
                ) from exc
            except requests.exceptions.RequestException as exc:
                raise errors.TransportError(
                    f"the connection failed after {written} bytes of the file: "
                    f"{type(exc).__name__}",
                    operation=entry.operation,
                    method=entry.method,
                    url=url,
                    status=response.status_code,
                ) from exc
        expected = response.headers.get("Content-Length")
        if expected and expected.isdigit() and "Content-Encoding" not in response.headers:
            if int(expected) != written:
                raise errors.ResponseFormatError(
                    f"the file is {written} bytes but the server announced {expected}",
                    operation=entry.operation,
                    method=entry.method,
                    url=url,
                    status=response.status_code,
                )
        os.replace(handle.name, target)
    except BaseException:
        Path(handle.name).unlink(missing_ok=True)
        raise
    finally:
        response.close()
    return target


# -- translating failures ------------------------------------------------------------

_STATUS_ERRORS: dict[int, tuple[type[errors.ServiceError], str]] = {
    400: (errors.BadRequestError, "the service rejected the request as malformed"),
    401: (errors.AuthError, "the service refused the access token"),
    403: (errors.AuthError, "the API user is not allowed to do this"),
    404: (errors.NotFoundError, "not found"),
    409: (errors.ConflictError, "the request conflicts with the current state"),
    415: (errors.UnsupportedMediaTypeError, "the service did not accept the body's content type"),
    429: (errors.RateLimitError, "the service kept answering 429 Too Many Requests"),
}


def error_for_response(
    entry: Endpoint, url: str, response: requests.Response
) -> errors.ServiceError:
    """The ``MddError`` for a response that is not a success: the one translation table.

    400 ``BadRequestError``, 401/403 ``AuthError`` (with the OAuth ``error`` and
    ``error_description`` of the body or the ``WWW-Authenticate`` header), 404
    ``NotFoundError``, 409 ``ConflictError`` (``PackageClosedError`` when adding to a
    package), 415 ``UnsupportedMediaTypeError``, 429 ``RateLimitError``, 5xx
    ``ServerError``, a redirect or any other status the generic ``ServiceError``. Any 4xx
    of the token endpoint is an ``AuthError``. Every one is a ``ServiceError``.
    """
    status = response.status_code
    body = _error_body(response)
    oauth_error, oauth_description = _oauth_fields(response, body)
    server_message = _server_message(body) or oauth_description or oauth_error
    context = {
        "operation": entry.operation,
        "method": entry.method,
        "url": url,
        "status": status,
        "server_message": server_message,
    }
    if entry.operation == "getToken" and 400 <= status < 500:
        return errors.AuthError(
            f"the token endpoint refused the request: {oauth_error or response.reason}",
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
    if status == 429:
        retry_after = response.headers.get("Retry-After")
        suffix = f" (last Retry-After: {retry_after})" if retry_after else ""
        return errors.RateLimitError(_STATUS_ERRORS[429][1] + suffix, **context)
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


def _error_body(response: requests.Response) -> Any:
    try:
        content = response.content
    except requests.exceptions.RequestException:
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


def _header_params(name: str, value: str) -> dict[str, str]:
    message = Message()
    message[name] = value
    return {k.lower(): v for k, v in message.get_params(header=name, failobj=[])[1:]}


def _transport_message(exc: Exception, max_retries: int, method: str) -> str:
    retried = method in RETRY_METHODS and max_retries > 0
    attempts = f" after {max_retries} retries" if retried else ""
    if isinstance(exc, requests.exceptions.SSLError):
        return f"TLS failed{attempts}: {exc}"
    if isinstance(exc, requests.exceptions.Timeout):
        return f"the request timed out{attempts}"
    if isinstance(exc, requests.exceptions.ConnectionError):
        return f"could not connect or the connection dropped{attempts}: {_root_cause(exc)}"
    return f"the request failed{attempts}: {type(exc).__name__}: {exc}"


def _root_cause(exc: BaseException) -> str:
    reason = exc
    for _ in range(5):
        inner = getattr(reason, "reason", None) or reason.__cause__ or reason.__context__
        if inner is None or inner is reason:
            break
        reason = inner
    return f"{type(reason).__name__}: {reason}"


def _token_grant(entry: Endpoint, url: str, response: requests.Response) -> TokenGrant:
    payload = decode_json(entry, url, response)
    if (
        not isinstance(payload, dict)
        or not isinstance(payload.get("access_token"), str)
        or not (payload["access_token"])
    ):
        keys = sorted(payload) if isinstance(payload, dict) else type(payload).__name__
        raise errors.ResponseFormatError(
            f"the token answer has no access_token (it has {keys})",
            operation=entry.operation,
            method=entry.method,
            url=url,
            status=response.status_code,
        )
    expires_in = payload.get("expires_in")
    try:
        lifetime = float(expires_in) if expires_in is not None else None
    except (TypeError, ValueError):
        lifetime = None
    return TokenGrant(access_token=Secret(payload["access_token"]), expires_in=lifetime)


def _encode_json(value: Any, entry: Endpoint, url: str) -> bytes:
    try:
        return json.dumps(value, allow_nan=False, ensure_ascii=False).encode("utf-8")
    except (TypeError, ValueError) as exc:
        raise errors.InvalidArgumentError(
            f"the request body cannot be sent as JSON: {exc} "
            "(NaN and infinities are not JSON: use None for a null)",
            operation=entry.operation,
            method=entry.method,
            url=url,
        ) from None


def _canonical_root(url: str) -> str:
    # Let requests apply IDNA and percent-encoding to the configured root once.
    prepared = requests.Request("GET", url.rstrip("/") + "/").prepare().url or url
    return prepared.rstrip("/")


def _log_call(entry: Endpoint, url: str, status: int | None, started: float) -> None:
    if logger.isEnabledFor(logging.DEBUG):
        elapsed = (time.perf_counter() - started) * 1000
        logger.debug(
            "%s %s -> %s in %.0f ms (%s)",
            entry.method,
            url,
            status if status is not None else "no answer",
            elapsed,
            entry.operation,
        )
