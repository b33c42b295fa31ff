"""Reading answers: JSON and text bodies, streamed bodies, downloads into files.

Every failure while reading a body (cut off, undecodable, shorter than announced) is
translated by :mod:`mddframes.http.translation`, the same way for a whole read
(:func:`decode_json`), a chunked read (:class:`BodyStream`) and a download
(:func:`stream_to_file`).
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterator
from email.message import Message
from pathlib import Path, PurePosixPath
from typing import Any, Self

import requests

from mddframes.codec import fastjson
from mddframes.config import Secret
from mddframes.http.auth import TokenGrant
from mddframes.http.endpoints import Endpoint
from mddframes.http.etags import etag_of
from mddframes.http.guard import BoundExceeded
from mddframes.http.translation import bound_error, format_error, transport_error
from mddframes.wire.disposition import disposition_file_name

CHUNK_SIZE = 64 * 1024


def decode_json(entry: Endpoint, url: str, response: requests.Response) -> Any:
    """The decoded JSON body of ``response``, or ``None`` when the body is empty.

    Raises
    ------
    ResponseFormatError
        If the body is not JSON, is empty for a GET, is nested too deep, or is truncated (the message says which, with the
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
    """:func:`decode_json` of a body already read (e.g. kept by a streamed read).

    An empty body is ``None``, except for a GET, whose answer is the thing asked for:
    an empty one is a ``ResponseFormatError``.
    """
    if not content.strip():
        if entry.method == "GET":
            raise format_error(
                f"the answer is empty ({content_type or 'no content type'}); "
                "a JSON document was expected",
                entry,
                url,
                status=status,
            )
        return None
    try:
        # orjson where it gives exactly json.loads's result, json.loads elsewhere
        return fastjson.loads(content)
    except (ValueError, UnicodeDecodeError) as exc:
        detail = str(exc)
        if isinstance(exc, json.JSONDecodeError) and exc.pos >= len(exc.doc.rstrip()):
            detail = f"the JSON ends early after {len(content)} bytes (truncated?)"
        excerpt = ""
        if entry.operation != "getToken":
            excerpt = f"; it begins {content[:120].decode('utf-8', 'replace')!r}"
        raise format_error(
            f"the answer is not valid JSON ({content_type or 'no content type'}): "
            f"{detail}{excerpt}",
            entry,
            url,
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
    etag : str or None
        The answer's strong ``ETag`` as sent, for an ``If-Match`` (:mod:`.etags`);
        None when there is none or it is weak.
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
        self.etag = etag_of(response.headers)

    def __enter__(self) -> Self:
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
        except requests.exceptions.RequestException as exc:
            raise transport_error(
                exc, self.entry, self.url, status=self.status, received=received
            ) from exc
        except BoundExceeded as exc:  # past the deadline or the size cap
            raise bound_error(
                exc, self.entry, self.url, status=self.status, received=received
            ) from exc
        if self.length is not None and received != self.length:
            raise format_error(
                f"the answer is {received} bytes but the server announced {self.length}",
                self.entry,
                self.url,
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
        raise format_error(
            f"the answer does not decode as {charset}: {exc}",
            entry,
            url,
            status=response.status_code,
        ) from None


def attachment_filename(response: requests.Response) -> str | None:
    """The file name of ``Content-Disposition`` (RFC 6266/2231), reduced to a base name."""
    name = disposition_file_name(response.headers.get("Content-Disposition", ""))
    if not name:
        return None
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
    try:
        with handle, BodyStream(entry, url, response) as body:
            for chunk in body.chunks():
                handle.write(chunk)
        os.replace(handle.name, target)
    except BaseException:
        Path(handle.name).unlink(missing_ok=True)
        raise
    return target


def _header_params(name: str, value: str) -> dict[str, str]:
    message = Message()
    message[name] = value
    return {k.lower(): v for k, v in message.get_params(header=name, failobj=[])[1:]}


def decode_token_grant(entry: Endpoint, url: str, response: requests.Response) -> TokenGrant:
    """The access token and its lifetime from the token endpoint's answer.

    Raises
    ------
    ResponseFormatError
        If the answer is not JSON or has no ``access_token`` (the message names the keys
        it has, never a value).
    """
    payload = decode_json(entry, url, response)
    if (
        not isinstance(payload, dict)
        or not isinstance(payload.get("access_token"), str)
        or not (payload["access_token"])
    ):
        keys = sorted(payload) if isinstance(payload, dict) else type(payload).__name__
        raise format_error(
            f"the token answer has no access_token (it has {keys})",
            entry,
            url,
            status=response.status_code,
        )
    expires_in = payload.get("expires_in")
    try:
        lifetime = float(expires_in) if expires_in is not None else None
    except (TypeError, ValueError):
        lifetime = None
    return TokenGrant(access_token=Secret(payload["access_token"]), expires_in=lifetime)
