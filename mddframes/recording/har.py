"""One HAR 1.2 entry of a finished call, scrubbed, with a mark where its body goes.

:func:`har_entry` assembles what the recorder writes of a call but its body: the
request (URL, headers, query, the request body scrubbed and maybe redacted), the answer's
status and headers, the timings. The body is too large to go through ``orjson``: the
entry holds :data:`BODY_MARK` in its place and the recorder copies the body from the
spool where the encoded mark (:data:`ENCODED_MARK`) splits the entry's JSON.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any, Protocol
from urllib.parse import parse_qsl, urlsplit

import orjson
import requests

from mddframes.recording.redact import Redactor, path_parameters
from mddframes.recording.scrub import CREDENTIAL_HEADERS, Scrubber

__all__ = ["BODY_MARK", "ENCODED_MARK", "TEXT_TYPES", "FinishedCall", "har_entry", "is_text"]

#: Content types whose body is recorded as text (anything else: base64).
TEXT_TYPES = ("json", "text/", "xml", "x-www-form-urlencoded", "javascript", "yaml")
#: The body's stand-in in the entry, and its encoding in the entry's JSON.
BODY_MARK = "\x00mddframes-body\x00"
ENCODED_MARK = orjson.dumps(BODY_MARK)


class FinishedCall(Protocol):
    """What the recorder knows of a call once its answer is read or closed."""

    request: requests.PreparedRequest
    response: requests.Response
    operation: str
    started: datetime
    waited: float
    receiving: float
    size: int
    complete: bool


def is_text(mime: str) -> bool:
    """Whether a body of content type ``mime`` is recorded as text."""
    lowered = mime.lower()
    return any(kind in lowered for kind in TEXT_TYPES)


def har_entry(call: FinishedCall, scrubber: Scrubber, redactor: Redactor | None) -> dict[str, Any]:
    """The HAR entry of ``call``, its answer's body replaced by :data:`BODY_MARK`."""
    request, response = call.request, call.response
    url = scrubber.text(request.url or "")  # (it holds the host: never clean)
    if redactor is not None:
        url = redactor.url(url, call.operation)
    request_headers = [(str(n), str(v)) for n, v in request.headers.items()]
    response_headers = [(str(n), str(v)) for n, v in response.headers.items()]
    mime = response.headers.get("Content-Type", "")
    reason = response.reason or ""
    scrub = _scrub_for(scrubber, [request.headers.get("Content-Type", ""), mime, reason],
                       request_headers + response_headers)  # fmt: skip
    content: dict[str, Any] = {"size": call.size, "mimeType": scrub(mime), "text": BODY_MARK}
    if not is_text(mime) and call.size:
        content["encoding"] = "base64"
    entry: dict[str, Any] = {
        "startedDateTime": call.started.isoformat(),
        "time": round((call.waited + call.receiving) * 1000, 3),
        "request": _request_entry(call, url, request_headers, scrub, scrubber, redactor),
        "response": {
            "status": response.status_code,
            "statusText": scrub(reason),
            "httpVersion": "HTTP/1.1",
            "cookies": [],
            "headers": _headers(response_headers, scrub, redactor),
            "content": content,
            "redirectURL": "",
            "headersSize": -1,
            "bodySize": call.size,
        },
        "cache": {},
        "timings": {
            "send": 0,
            "wait": round(call.waited * 1000, 3),
            "receive": round(call.receiving * 1000, 3),
        },
        "_operation": call.operation,
    }
    entry["_parameters"], entry["_prefix"] = path_parameters(call.operation, url)
    if not call.complete:
        entry["comment"] = "the client closed this answer before reading all of it"
    return entry


def _scrub_for(
    scrubber: Scrubber, texts: list[str], headers: list[tuple[str, str]]
) -> Callable[[str], str]:
    """How the entry's short texts are scrubbed: searched at once, since the usual entry
    holds no secret outside its URL and its credential headers (whose values go whole),
    and then each is kept as it is; else each is scrubbed on its own."""
    for name, value in headers:
        texts.append(name)
        if name.lower() not in CREDENTIAL_HEADERS:
            texts.append(value)
    return _kept if scrubber.is_clean("\n".join(texts)) else scrubber.text


def _request_entry(
    call: FinishedCall,
    url: str,
    headers: list[tuple[str, str]],
    scrub: Callable[[str], str],
    scrubber: Scrubber,
    redactor: Redactor | None,
) -> dict[str, Any]:
    """The entry's request, its body scrubbed (and redacted when asked)."""
    request = call.request
    body = request.body
    if isinstance(body, str):
        body = body.encode("utf-8")
    elif body is not None and not isinstance(body, bytes):  # a body sent in pieces
        body = b"".join(body)
    if redactor is not None and body:
        body = redactor.body(body)
    entry: dict[str, Any] = {
        "method": request.method,
        "url": url,
        "httpVersion": "HTTP/1.1",
        "cookies": [],
        "headers": _headers(headers, scrub),
        "queryString": [{"name": k, "value": v} for k, v in parse_qsl(urlsplit(url).query, True)],
        "headersSize": -1,
        "bodySize": len(body) if body else 0,
    }
    if body:
        entry["postData"] = {
            "mimeType": scrub(request.headers.get("Content-Type", "")),
            "text": scrubber.bytes(body).decode("utf-8", "replace"),
        }
    return entry


def _kept(text: str) -> str:
    """A text of an entry found clean (no secret in any form): kept as it is."""
    return text


def _headers(
    items: list[tuple[str, str]],
    scrub: Callable[[str], str],
    redactor: Redactor | None = None,
) -> list[dict[str, str]]:
    """HAR headers: a credential header's value is gone whatever it holds, the rest
    go through ``scrub`` (names too: a service could put a token in one)."""
    headers = []
    for name, value in items:
        lowered = name.lower()
        value = "SCRUBBED" if lowered in CREDENTIAL_HEADERS else scrub(value)
        if redactor is not None and lowered == "content-disposition":
            value = redactor.disposition(value)
        headers.append({"name": scrub(name), "value": value})
    return headers
