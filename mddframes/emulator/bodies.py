"""Reading the emulator's requests and writing its raw answers, for the routes of ``app.py``.

Path segments arrive percent-encoded (the router sees the raw path); bodies are read raw,
bounded by ``limits.MAX_BODY_BYTES``, parsed with ``json.loads`` (big integers survive)
and checked against the models of :mod:`.schemas`; answers are the stored JSON text,
never passed through FastAPI's encoders.
"""

from __future__ import annotations

import re
from email.message import Message
from typing import Any
from urllib.parse import quote, unquote

from fastapi import Request
from fastapi.responses import Response

from mddframes.emulator import limits
from mddframes.emulator import schemas as wire
from mddframes.emulator.documents import content_version, parse_json_body
from mddframes.emulator.errors import BodyTooLarge, InvalidInput, UnsupportedMedia
from mddframes.wire.profile import ETAG_HEADER

_ENTITY_TAG = re.compile(r'(W/)?"([^"]*)"')


def json_answer(text: str, status: int = 200, *, etag: bool = False) -> Response:
    """An ``application/json`` answer whose body is ``text`` as it is.

    ``etag``: send the document's version as a strong ``ETag`` (the ``etag`` dialect).
    """
    headers = {ETAG_HEADER: f'"{content_version(text)}"'} if etag else None
    return Response(
        text.encode("utf-8"), status_code=status, media_type="application/json", headers=headers
    )


def if_match(request: Request) -> frozenset[str] | None:
    """The versions a write's ``If-Match`` accepts; ``None`` for no precondition.

    ``None`` when the header is absent or ``*`` (any existing object matches: a missing
    one is 404 anyway). If-Match compares strongly (RFC 9110, 13.1.1): a weak tag
    (``W/"..."``) never matches, nor does a value that is no entity tag at all.
    """
    value = request.headers.get("if-match")
    if value is None or value.strip() == "*":
        return None
    return frozenset(m.group(2) for m in _ENTITY_TAG.finditer(value) if not m.group(1))


def segment(value: str) -> str:
    """A path parameter as the client meant it (the router sees the raw, encoded path).

    A segment whose percent-escapes are not UTF-8 (``%FF``) is refused with 400, as a
    servlet container refuses a URI it cannot decode.
    """
    try:
        return unquote(value, encoding="utf-8", errors="strict")
    except UnicodeDecodeError:
        raise InvalidInput(f"the path segment {value!r} is not percent-encoded UTF-8") from None


def media_type(request: Request) -> str:
    """The request's media type without parameters (``""`` when no Content-Type is sent)."""
    message = Message()
    message["content-type"] = request.headers.get("content-type", "")
    return message.get_content_type() if request.headers.get("content-type") else ""


def _require_json(request: Request) -> None:
    media = media_type(request)
    if media != "application/json" and not media.endswith("+json"):
        raise UnsupportedMedia(
            f"Content-Type '{media or 'none'}' is not supported; send application/json"
        )


def _refuse_declared_too_large(request: Request) -> None:
    # Refused on the declared length alone, before a byte is read.
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limits.MAX_BODY_BYTES:
        raise BodyTooLarge(f"the request body is larger than {limits.MAX_BODY_BYTES} bytes")


async def read_body(request: Request) -> bytes:
    """The raw body, refused with 413 past ``limits.MAX_BODY_BYTES`` (read no further)."""
    _refuse_declared_too_large(request)
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limits.MAX_BODY_BYTES:
            raise BodyTooLarge(f"the request body is larger than {limits.MAX_BODY_BYTES} bytes")
        chunks.append(chunk)
    return b"".join(chunks)


def checked(model: Any, value: Any, what: str) -> Any:
    """``value`` when it fits ``model`` (:mod:`.schemas`), else 400 naming the problems."""
    problems = wire.validate_body(model, value, what)
    if problems:
        raise InvalidInput("; ".join(problems))
    return value


async def json_body(request: Request, what: str, model: Any) -> Any:
    """The request's JSON body checked against ``model``; ``what`` names it in errors.

    Raises
    ------
    UnsupportedMedia
        The Content-Type is not JSON (415).
    BodyTooLarge
        The body is past ``limits.MAX_BODY_BYTES`` (413).
    InvalidInput
        The body is not JSON or does not fit ``model`` (400).
    """
    _require_json(request)
    return checked(model, parse_json_body(await read_body(request), what), what)


async def form_file(request: Request, field: str, what: str) -> bytes:
    """The content of the multipart field ``field`` (``what`` names it in errors).

    Raises
    ------
    UnsupportedMedia
        The body is not ``multipart/form-data`` (415).
    BodyTooLarge
        The declared length is past ``limits.MAX_BODY_BYTES`` (413).
    InvalidInput
        The multipart body is broken or lacks ``field`` (400).
    """
    if media_type(request) != "multipart/form-data":
        raise UnsupportedMedia(
            f"Content-Type '{media_type(request) or 'none'}' is not supported; "
            f"send multipart/form-data with the {what} in the field {field!r}"
        )
    _refuse_declared_too_large(request)
    try:
        form = await request.form()
    except Exception as exc:  # a broken multipart body is the client's fault
        raise InvalidInput(f"the multipart body could not be read: {exc}") from None
    try:
        part = form.get(field)
        if part is None:
            raise InvalidInput(f"the multipart body lacks the field {field!r}")
        return await part.read() if hasattr(part, "read") else str(part).encode("utf-8")
    finally:
        await form.close()


def content_disposition(file_name: str) -> str:
    """An ``attachment`` header naming ``file_name``: an ASCII fallback and RFC 5987 UTF-8."""
    fallback = (
        file_name.encode("ascii", "replace").decode("ascii").replace("?", "_").replace('"', "_")
    )
    return f"attachment; filename=\"{fallback}\"; filename*=UTF-8''{quote(file_name, safe='')}"
