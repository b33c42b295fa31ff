"""One HTTP session per client: the call itself, with tokens, time-outs and pooling.

:class:`HttpSession` is the only place mddframes talks HTTP. It

- keeps one :class:`requests.Session` whose connection pool is sized for the client's
  concurrency; urllib3 repeats only a failure to connect (nothing was sent, any
  method; :mod:`mddframes.http.retry`), and every other repeat is the paced loop's
  (:mod:`mddframes.http.attempts`): a 429 for any method (it was not processed),
  5xx and lost answers for GET, PUT, HEAD and the POSTs that change nothing, so a
  POST that acts is not sent again once it may have been processed (the token
  request, which creates nothing, has urllib3 repeat it on 429/5xx as well);
- puts a bearer token on every API call as it leaves (after any wait for the pace,
  :mod:`mddframes.http.pace`), and on a 401 renews it and repeats the call for as long
  as the token keeps changing under it within the call's deadline; a token the client
  had just fetched, refused twice in a row (for ten seconds while its tokens were
  accepted lately), is the real refusal (a 401 means the call
  was not processed, so this holds for a POST too; :class:`~.auth.Refusals`);
- sends the URL exactly as :func:`~mddframes.http.endpoints.build_path` built it (no
  ``..`` collapsing), with connect and read time-outs on every call, and a deadline
  for the whole call and a cap on the answer's size (:mod:`mddframes.http.guard`;
  a streamed answer's deadline runs until its body is read or closed);
- raises every failure as the :class:`~mddframes.errors.MddError` subclass that
  :mod:`mddframes.http.translation` gives it (operation, method, URL, status, the
  server's message);
- logs one DEBUG line per call (method, URL, status, elapsed ms), never a credential.

Reading the answers is :mod:`mddframes.http.decoding`; its names are importable from
here too.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from functools import partial
from typing import Any
from urllib.parse import urlencode, urlsplit

import requests

from mddframes import errors
from mddframes.codec import depth
from mddframes.config import Secret, Settings
from mddframes.http.advice import realm_not_found_message
from mddframes.http.attempts import MAY_HAVE_ACTED, Budget, lost_answer_error, repeatable
from mddframes.http.auth import BearerAuth, TokenGrant, TokenProvider, refusal_error
from mddframes.http.authorised import send_authorised
from mddframes.http.decoding import (
    BodyStream,
    attachment_filename,
    decode_json,
    decode_json_content,
    decode_text,
    decode_token_grant,
    stream_to_file,
)
from mddframes.http.discovery import Discovery
from mddframes.http.endpoints import Endpoint, build_path, endpoint
from mddframes.http.guard import (
    BodyTooLarge,
    BoundExceeded,
    DeadlinePassed,
    Guard,
    GuardedAdapter,
    GuardedBody,
)
from mddframes.http.pace import Pace
from mddframes.http.retry import RETRY_METHODS, make_connect_retry, make_retry
from mddframes.http.translation import bound_error, error_for_response, transport_error
from mddframes.known_ids import KnownIds

__all__ = [  # HttpSession, and the names other modules import from here (re-exported)
    "BodyStream",
    "HttpSession",
    "attachment_filename",
    "decode_json",
    "decode_json_content",
    "decode_text",
    "error_for_response",
    "make_retry",
    "stream_to_file",
]

logger = logging.getLogger(__name__)

USER_AGENT = "mddframes/0.1"

_NO_BODY = object()


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

    def __init__(self, settings: Settings, *, known_ids: KnownIds | None = None) -> None:
        self.settings = settings
        #: ids seen in earlier answers: a 404's close matches (:mod:`mddframes.known_ids`)
        self.known_ids = known_ids
        self._session = requests.Session()
        self._session.headers["User-Agent"] = " ".join(
            filter(None, (USER_AGENT, settings.user_agent))
        )
        self._session.verify = settings.verify
        self._environments: dict[tuple[str, str], Mapping[str, Any]] = {}
        pool = GuardedAdapter(
            pool_connections=4,
            pool_maxsize=max(settings.max_workers, 1),
            max_retries=make_connect_retry(settings.max_retries),
        )
        self._session.mount("https://", pool)
        self._session.mount("http://", pool)
        # Canonical roots, prepared once; every URL is one of these plus a built path.
        self._base_root = _canonical_root(settings.base_url)
        self._api_root = _canonical_root(settings.api_url)
        self.discovery = Discovery(settings)
        self._roots = {p: _canonical_root(settings.base_url + p) for p in self.discovery.prefixes()}
        self._token_urls: dict[str, str] = {}
        for realm in self.discovery.realms():
            token_url = self._base_root + build_path("getToken", realm=realm)
            # Asking for a token twice is harmless (it creates nothing), so the token
            # POST is retried like a GET; the longer prefix makes requests pick this adapter.
            self._session.mount(
                token_url,
                GuardedAdapter(
                    pool_connections=1,
                    pool_maxsize=max(settings.max_workers, 1),
                    max_retries=make_retry(settings.max_retries, RETRY_METHODS | {"POST"}),
                ),
            )
            self._token_urls[realm] = token_url
        self.tokens = TokenProvider(self._fetch_token)
        #: The client's one pace, shared by every thread (:mod:`mddframes.http.pace`).
        self.pace = Pace(settings.max_rate, retry_after_max=settings.retry_after_max)
        self._budget = Budget(settings.max_retries, settings.retry_budget, settings.deadline)
        self.unauthorized_repeats = 0
        #: Sends a prepared request instead of ``requests`` (a recording's tee, a
        #: recording played back), given requests' own ``send`` first; None: requests.
        self.interceptor: Callable[..., requests.Response] | None = None
        self._counter_lock = threading.Lock()
        self._closed = False

    def __repr__(self) -> str:
        return f"<HttpSession {self.settings.base_url!r}>"

    # -- public ---------------------------------------------------------------------

    def url_for(self, entry: Endpoint, path: str, prefix: str | None = None) -> str:
        """The full URL of ``path`` (already built) for the operation ``entry``.

        ``prefix`` replaces the configured API prefix (prefix discovery, row 2).
        """
        if not entry.under_api_prefix:
            return self._base_root + path
        if prefix is None or entry.asynchronous:
            return self._api_root + path
        return self._roots[prefix] + path

    def call(
        self,
        operation: str,
        path_params: Mapping[str, object] | None = None,
        *,
        json_body: Any = _NO_BODY,
        files: Mapping[str, Any] | None = None,
        stream: bool = False,
        query: Mapping[str, object] | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> requests.Response:
        """Send one API call and return its successful (2xx) response.

        A synchronous operation answered 404 before the API prefix is settled is
        repeated once under the other prefix (a 404 means nothing was done, so this
        holds for a POST too); see :mod:`mddframes.http.discovery`.

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
        query : mapping, optional
            Query parameters (the ``page``/``size`` of a paged list).
        headers : mapping, optional
            Extra request headers (the ``If-Match`` of a write, :mod:`.etags`).

        Raises
        ------
        MddError
            The translated failure (see :func:`error_for_response`).
        """
        if self._closed:
            raise errors.ClientClosedError("this client is closed", operation=operation)
        entry = endpoint(operation)
        path = build_path(operation, **dict(path_params or {}))
        if query:
            path += "?" + urlencode(query)
        sync = entry.under_api_prefix and not entry.asynchronous
        prefixes = self.discovery.prefixes() if sync else [None]
        body = None if json_body is _NO_BODY else _encode_json(json_body, entry, path)
        first: tuple[str, requests.Response] | None = None  # the 404 reported if all are
        for prefix in prefixes:
            url = self.url_for(entry, path, prefix)
            response = self._authorised(entry, url, body, files, stream, headers, path_params)
            if first is not None and _is_web_page(response):
                response.status_code = 404  # a web front end, not the API: no route here
            if response.status_code != 404:
                if sync and prefix is not None and 200 <= response.status_code < 300:
                    self.discovery.settle_prefix(prefix)
                break
            if first is None:
                first = (url, response)
            else:
                response.close()
        if first is not None and response.status_code == 404:
            url, response = first
        elif first is not None:
            first[1].close()
        if not 200 <= response.status_code < 300:
            try:
                error = error_for_response(
                    entry, url, response, path_params=path_params, known_ids=self.known_ids
                )
                error.answers_lost = int(getattr(response, "mdd_lost", 0))
                if response.status_code == 401 and isinstance(error, errors.AuthError):
                    fresh_in_a_row, span = getattr(response, "mdd_refused_fresh", (0, 0.0))
                    error = refusal_error(
                        error,
                        fresh_in_a_row=fresh_in_a_row,
                        span=span,
                        renewals=int(getattr(response, "mdd_renewals", 0)),
                        deadline=self._budget.deadline,
                    )
                if response.status_code in MAY_HAVE_ACTED and not repeatable(entry):
                    raise lost_answer_error(error, entry, url, response.status_code) from error
                raise error
            finally:
                response.close()
        return response

    def _authorised(
        self,
        entry: Endpoint,
        url: str,
        body: bytes | EncodedJson | None,
        files: Mapping[str, Any] | None,
        stream: bool,
        headers: Mapping[str, str] | None = None,
        path_params: Mapping[str, object] | None = None,
    ) -> requests.Response:
        """Send with a token, paced; on a 401 renew it and repeat
        (:func:`~mddframes.http.authorised.send_authorised`)."""

        def send(secret: Secret) -> requests.Response:
            return self._send(entry, url, token=secret, body=body, files=files, stream=stream,
                              extra_headers=headers)  # fmt: skip

        return send_authorised(
            send,
            entry,
            url,
            tokens=self.tokens,
            pace=self.pace,
            budget=self._budget,
            describe=", ".join(f"{k} {v!r}" for k, v in (path_params or {}).items()),
            on_repeat=self._count_repeat,
        )

    def _count_repeat(self) -> None:
        with self._counter_lock:
            self.unauthorized_repeats += 1

    def probe(self, entry: Endpoint, url: str) -> requests.Response:
        """GET ``url`` with a token and return the answer whatever its status.

        For read-only checks of documents outside the operation table (``mddframes
        doctor`` reads the OpenAPI document); the caller closes the response.
        """
        return self._authorised(entry, url, None, None, False)

    def close(self) -> None:
        """Close the pooled connections. Further calls raise ``ClientClosedError``."""
        self._closed = True
        self.pace.retire()  # a closed client's pace is no other bar's business
        self._session.close()

    # -- token --------------------------------------------------------------------

    def _fetch_token(self) -> TokenGrant:
        entry = endpoint("getToken")
        realms = self.discovery.realms()
        form = Secret(
            urlencode(
                {
                    "grant_type": "client_credentials",
                    "client_id": self.settings.client_id,
                    "client_secret": self.settings.client_secret.reveal(),
                }
            )
        )
        refused: requests.Response | None = None
        for realm in realms:
            token_url = self._token_urls[realm]
            response = self._send(
                entry,
                token_url,
                token=None,
                body=form,
                content_type="application/x-www-form-urlencoded",
            )
            if response.status_code == 404 and realm != realms[-1]:
                refused = response  # unknown realm: try the next
                continue
            try:
                if response.status_code == 404:
                    logger.debug("no token under the realms %s: each 404", realms)
                    raise errors.AuthError(
                        realm_not_found_message(self.settings),
                        operation=entry.operation,
                        method=entry.method,
                        url=self._token_urls[realms[0]],
                        status=404,
                    )
                if response.status_code != 200:
                    raise error_for_response(entry, token_url, response, settings=self.settings)
                grant = decode_token_grant(entry, token_url, response)
            finally:
                response.close()
                if refused is not None:
                    refused.close()
            self.discovery.settle_realm(realm)
            return grant
        raise AssertionError("unreachable: the last realm always returns or raises")

    # -- sending -------------------------------------------------------------------

    def _environment(self, url: str) -> Mapping[str, Any]:
        """requests' proxy, CA-bundle and stream settings for ``url`` (always streamed:
        :meth:`_send` reads the body itself, through the guard).

        requests reads the proxy and CA-bundle variables again on every call, which
        costs as much as a small call itself; they depend only on the origin, so they
        are read once per origin. (Two threads racing here both compute the same value.)
        """
        parts = urlsplit(url)
        key = (parts.scheme, parts.netloc)
        settings = self._environments.get(key)
        if settings is None:
            settings = self._session.merge_environment_settings(
                url, {}, True, self.settings.verify, None
            )
            self._environments[key] = settings
        return settings

    def _send(
        self,
        entry: Endpoint,
        url: str,
        *,
        token: Secret | None,
        body: bytes | EncodedJson | Secret | None = None,
        files: Mapping[str, Any] | None = None,
        stream: bool = False,
        content_type: str = "application/json",
        extra_headers: Mapping[str, str] | None = None,
    ) -> requests.Response:
        headers = {"Accept": "application/json, text/plain;q=0.9, */*;q=0.8"}
        if body is not None:
            headers["Content-Type"] = content_type
        if extra_headers:
            headers.update(extra_headers)
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
            auth=BearerAuth(token),
            hooks=self._session.hooks,
        )
        # requests (via urllib3's parse_url) removes dot segments, which would send an
        # id of ".." to the parent resource; the URL is already fully encoded, so it is
        # sent exactly as built.
        prepared.url = url
        # Always sent streamed: the body is read here (or by the caller's BodyStream)
        # through GuardedBody, which applies the size cap and the deadline.
        environment = self._environment(url)
        guard = Guard(self.settings.deadline, self.settings.max_response_bytes)
        started = time.perf_counter()
        try:
            send = self._session.send
            if self.interceptor is not None:  # the one seam of recording and playback
                send = partial(self.interceptor, send, entry)
            with guard:
                response = send(
                    prepared,
                    timeout=self.settings.timeout,
                    allow_redirects=False,
                    **environment,
                )
        except (requests.exceptions.RequestException, BoundExceeded) as exc:
            _log_call(entry, url, None, started)
            guard.finish()
            raise self._call_error(exc, guard, entry, url) from exc
        response.raw = GuardedBody(response.raw, guard)
        _log_call(entry, url, response.status_code, started)
        try:
            declared = response.headers.get("Content-Length", "")
            if declared.isdigit() and int(declared) > guard.cap:
                raise BodyTooLarge(guard.cap, declared=int(declared))
            if not stream:
                response.content  # noqa: B018 -- read now, within the deadline and the cap
        except (requests.exceptions.RequestException, BoundExceeded) as exc:
            response.close()
            raise self._call_error(exc, guard, entry, url, response.status_code) from exc
        return response

    def _call_error(
        self,
        exc: requests.exceptions.RequestException | BoundExceeded,
        guard: Guard,
        entry: Endpoint,
        url: str,
        status: int | None = None,
    ) -> errors.MddError:
        if not isinstance(exc, BoundExceeded) and guard.expired:
            # the deadline shut the socket: that is the failure, not the broken read
            return bound_error(DeadlinePassed(guard.seconds), entry, url, status=status)
        if isinstance(exc, BoundExceeded):
            return bound_error(exc, entry, url, status=status)
        return transport_error(
            exc, entry, url, status=status, max_retries=self.settings.max_retries
        )


class EncodedJson:
    """A request body already encoded as UTF-8 JSON: sent as it is, not encoded again
    (a large table's streamed write builds its document as bytes).

    It holds the pieces it is given, not a copy, and they are sent one after the other
    under one ``Content-Length``: never joined (a join, or a ``bytes`` subclass, would
    be one more payload in memory while a large table is sent).

    Parameters
    ----------
    *pieces : bytes
        The UTF-8 JSON document, in the pieces it was built in.
    """

    __slots__ = ("pieces", "size")

    def __init__(self, *pieces: bytes) -> None:
        self.pieces = pieces
        self.size = sum(map(len, pieces))

    @property
    def content(self) -> bytes:
        """The document's bytes (joined, a copy, when it has several pieces)."""
        return self.pieces[0] if len(self.pieces) == 1 else b"".join(self.pieces)

    def __len__(self) -> int:  # requests takes the Content-Length from it
        return self.size

    def __iter__(self) -> Iterator[bytes]:  # a fresh pass for every attempt
        return iter(self.pieces)

    def __repr__(self) -> str:
        return f"<EncodedJson of {self.size:,} bytes>"


def _encode_json(value: Any, entry: Endpoint, url: str) -> bytes | EncodedJson:
    if isinstance(value, EncodedJson):
        return value if len(value.pieces) > 1 else value.content
    try:
        return depth.dumps(value, allow_nan=False, ensure_ascii=False).encode("utf-8")
    except (TypeError, ValueError) as exc:
        raise errors.InvalidArgumentError(
            f"the request body cannot be sent as JSON: {exc} "
            "(NaN and infinities are not JSON: use None for a null)",
            operation=entry.operation,
            method=entry.method,
            url=url,
        ) from None


def _is_web_page(response: requests.Response) -> bool:
    return response.headers.get("Content-Type", "").startswith("text/html")


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
