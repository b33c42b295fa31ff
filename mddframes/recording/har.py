"""Reading a recording: the HAR 1.2 file's calls, each with its operation and bodies.

Used by the replaying emulator (:mod:`mddframes.emulator.replay`) and by ``mddframes
doctor --recording`` (:mod:`mddframes.recording.learn`). A file that is not a HAR, or
not one mddframes can use, is refused with a message naming the file and what is wrong.
"""

from __future__ import annotations

import base64
import json
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

from mddframes.http.endpoints import ENDPOINTS

__all__ = ["Call", "Recording", "RecordingError", "attachment_name"]


class RecordingError(ValueError):
    """A recording that cannot be read (the message names the file)."""


@dataclass
class Call:
    """One recorded request and its answer.

    Attributes
    ----------
    operation : str
        The operation id (the recorder's ``_operation``), or ``""`` when unknown.
    method, path, query : str
        The request (the path without scheme and host).
    status : int
        The answer's status.
    headers : dict of str to str
        The answer's headers, names in lower case.
    body : bytes
        The answer's body.
    request_body : bytes
        The request's body.
    params : dict of str to str
        The operation's path parameters, read from the path by its template.
    prefix : str
        What stood before the operation's template in the path (the API prefix).
    """

    operation: str
    method: str
    path: str
    query: str
    status: int
    headers: dict[str, str]
    body: bytes
    request_body: bytes
    params: dict[str, str] = field(default_factory=dict)
    prefix: str = ""

    @property
    def ok(self) -> bool:
        """A 2xx answer."""
        return 200 <= self.status < 300

    def json(self) -> Any:
        """The answer's body as JSON (``None`` when it is not JSON)."""
        try:
            return json.loads(self.body) if self.body else None
        except ValueError:
            return None

    def request_json(self) -> Any:
        """The request's body as JSON (``None`` when it is not JSON)."""
        try:
            return json.loads(self.request_body) if self.request_body else None
        except ValueError:
            return None


@dataclass
class Recording:
    """A recording's calls, in the order they started.

    Attributes
    ----------
    path : pathlib.Path
        The file.
    calls : list of Call
        Every call.
    header : dict
        The recording's ``log`` without its entries (the ``_mddframes`` header).
    """

    path: Path
    calls: list[Call]
    header: dict[str, Any]

    @property
    def name(self) -> str:
        """The file's name (for messages)."""
        return self.path.name

    @property
    def redacted(self) -> bool:
        """Whether the values were redacted (``--redact-values``)."""
        return bool(self.header.get("_mddframes", {}).get("redactedValues"))

    def of(self, operation: str, *, ok: bool = True) -> Iterator[Call]:
        """The calls of ``operation`` (only the 2xx ones unless ``ok`` is false)."""
        return (c for c in self.calls if c.operation == operation and (c.ok or not ok))

    @classmethod
    def read(cls, path: str | os.PathLike[str]) -> Recording:
        """Read a HAR file.

        Parameters
        ----------
        path : path
            The recording.

        Returns
        -------
        Recording

        Raises
        ------
        RecordingError
            The file is not a HAR 1.2 document with entries.
        """
        path = Path(path)
        try:
            document = json.loads(path.read_bytes())
        except OSError as exc:
            raise RecordingError(f"the recording {path} cannot be read: {exc.strerror}") from None
        except ValueError as exc:
            raise RecordingError(f"the recording {path} is not JSON: {exc}") from None
        log = document.get("log") if isinstance(document, dict) else None
        if not isinstance(log, dict) or not isinstance(log.get("entries"), list):
            raise RecordingError(f"the recording {path} is not a HAR file (no log.entries)")
        entries = sorted(log["entries"], key=lambda e: str(e.get("startedDateTime", "")))
        calls = []
        for number, entry in enumerate(entries, 1):
            try:
                calls.append(_call(entry))
            except (KeyError, TypeError, ValueError) as exc:
                raise RecordingError(
                    f"the recording {path}: entry {number} is not a HAR entry ({exc!r})"
                ) from None
        header = {k: v for k, v in log.items() if k != "entries"}
        return cls(path, calls, header)


def _call(entry: dict[str, Any]) -> Call:
    request, response = entry["request"], entry["response"]
    parts = urlsplit(request["url"])
    content = response.get("content") or {}
    text = content.get("text") or ""
    if content.get("encoding") == "base64":
        body = base64.b64decode(text)
    else:
        body = text.encode("utf-8")
    posted = (request.get("postData") or {}).get("text") or ""
    operation = str(entry.get("_operation") or "")
    call = Call(
        operation=operation,
        method=str(request["method"]).upper(),
        path=parts.path,
        query=parts.query,
        status=int(response["status"]),
        headers={str(h["name"]).lower(): str(h["value"]) for h in response.get("headers", [])},
        body=body,
        request_body=posted.encode("utf-8"),
    )
    if operation in ENDPOINTS:
        call.params, call.prefix = _parameters(operation, parts.path)
    return call


def _parameters(operation: str, path: str) -> tuple[dict[str, str], str]:
    """The path parameters of ``operation`` in ``path``, and the prefix before them."""
    template = ENDPOINTS[operation].path.split("/")[1:]  # after its leading slash
    segments = path.split("/")
    if len(segments) < len(template):
        return {}, ""
    tail = segments[len(segments) - len(template) :]
    params = {
        pattern[1:-1]: unquote(value)
        for pattern, value in zip(template, tail, strict=True)
        if pattern.startswith("{")
    }
    return params, "/".join(segments[: len(segments) - len(template)])


def attachment_name(header: str) -> str | None:
    """The file name of a ``Content-Disposition`` header (RFC 6266/2231), if any."""
    if not header:
        return None
    from email.message import Message
    from email.utils import collapse_rfc2231_value

    message = Message()
    message["Content-Disposition"] = header
    params = message.get_params(header="content-disposition", failobj=[])[1:]
    names = [v for k, v in params if k.lower() == "filename"]
    extended = [v for v in names if isinstance(v, tuple)]
    chosen = extended[0] if extended else (names[0] if names else None)
    return collapse_rfc2231_value(chosen).strip() if chosen else None
