"""Reading a recording and learning how its tenant speaks.

:meth:`Recording.read` turns a HAR 1.2 file written by mddframes' recorder
(:mod:`mddframes.recording.recorder`) into its calls: each with its operation, path
parameters and API prefix (the recorder writes them as ``_operation``, ``_parameters``
and ``_prefix``, so this side needs no table of the client's endpoints) and its bodies.
A file that is not a HAR is refused with a message naming the file and what is wrong.

:func:`learn` reads the calls for the tenant's realm, prefix, field spelling, paging,
tree shape and ETags, maps each to a setting (``realm``, ``api_prefix``) or to a built-in
dialect (:mod:`mddframes.emulator.dialects`), and says in one line, naming the
wire-format row (docs/wire-format.md), whatever maps to neither, so the user knows the
recording is worth sending. Used by the replaying emulator (:mod:`.replay`),
``--dialect-from`` and ``mddframes doctor --recording``.
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

from mddframes.wire import spelling
from mddframes.wire.dialects import DIALECTS, Kind, nested_dialect, of_kind
from mddframes.wire.profile import (
    API_PREFIX,
    CHILDREN_KEYS,
    ETAG_HEADER,
    LIST_OPERATIONS,
    LITERAL_REALM,
    PAGE_CONTENT,
    PAGE_TOTAL_ELEMENTS,
    PAGE_TOTALS,
    ROUTES,
)

__all__ = ["DIALECT_OF", "Call", "Learned", "Recording", "RecordingError", "learn"]


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
    parameters = entry.get("_parameters")
    if operation and isinstance(parameters, dict):
        call.params = {str(k): str(v) for k, v in parameters.items()}
        call.prefix = str(entry.get("_prefix") or "")
    else:  # a HAR from elsewhere (a browser, a proxy): the operation read off the path
        call.operation, call.params, call.prefix = _recognised(call.method, call.path)
    return call


#: The service's operations (the wire profile's): name, method, path under the prefix.
_ROUTES = tuple((operation, method, path) for operation, (method, path) in ROUTES.items())


def _recognised(method: str, path: str) -> tuple[str, dict[str, str], str]:
    """(operation, path parameters, prefix) of a request, from its method and path."""
    segments = path.split("/")
    for operation, route_method, template in _ROUTES:
        if method != route_method:
            continue
        parts = template.split("/")[1:]
        if len(segments) - 1 < len(parts):
            continue
        cut = len(segments) - len(parts)
        tail = segments[cut:]
        if all(p.startswith("{") or p == t for p, t in zip(parts, tail, strict=True)):
            params = {p[1:-1]: unquote(t) for p, t in zip(parts, tail, strict=True)
                      if p.startswith("{")}  # fmt: skip
            return operation, params, "/".join(segments[:cut])
    return "", {}, ""


DEFAULT_PREFIX = API_PREFIX
#: Each difference a built-in dialect serves, with its wire-format rows.
DIALECT_OF = {name: entry.rows for name, entry in DIALECTS.items() if entry.kind != "reference"}


def _named(kind: Kind) -> str:
    """The name of the (first) dialect of ``kind``: the learner names what it saw."""
    return of_kind(kind)[0].name


@dataclass
class Learned:
    """What a recording says about its tenant.

    Attributes
    ----------
    realm : str or None
        The realm the token endpoint answered under.
    tenant : str or None
        The realm tried first (the tenant's name the client was configured with).
    api_prefix : str or None
        The prefix of the synchronous operations that answered.
    async_prefix : str or None
        The prefix of the batch export operations.
    differences : dict of str to str
        Built-in dialect -> the evidence in the recording.
    uncovered : list of str
        One line per difference no dialect or setting covers, naming its row.
    operations : dict of str to int
        Calls per operation.
    """

    realm: str | None = None
    tenant: str | None = None
    api_prefix: str | None = None
    async_prefix: str | None = None
    page_size: int | None = None
    differences: dict[str, str] = field(default_factory=dict)
    uncovered: list[str] = field(default_factory=list)
    operations: dict[str, int] = field(default_factory=dict)

    @property
    def dialect(self) -> str:
        """The built-in dialect the recording speaks (``default`` when none differs;
        the first when several do, the others in :attr:`uncovered`)."""
        return next(iter(self.differences), "default")

    @property
    def served_prefix(self) -> str:
        """The API prefix an emulator serving this tenant listens under."""
        if self.api_prefix and self.api_prefix != "":
            return self.api_prefix
        return self.async_prefix or DEFAULT_PREFIX


def learn(recording: Recording) -> Learned:
    """Learn the tenant's dialect and settings from ``recording``.

    Parameters
    ----------
    recording : Recording
        A recording (:meth:`Recording.read`).

    Returns
    -------
    Learned
    """
    found = Learned()
    for call in recording.calls:
        found.operations[call.operation or "?"] = found.operations.get(call.operation or "?", 0) + 1
    tokens = list(recording.of("getToken", ok=False))
    if tokens:
        found.tenant = tokens[0].params.get("realm")
        answered = [c for c in tokens if c.ok]
        if answered:
            found.realm = answered[0].params.get("realm")
    if found.realm == LITERAL_REALM and found.tenant != LITERAL_REALM:
        found.differences[_named("realm")] = (
            f"the token endpoint answered under the realm {LITERAL_REALM!r}, not {found.tenant!r}"
        )
    _prefixes(recording, found)
    _shapes(recording, found)
    if len(found.differences) > 1:
        names = ", ".join(found.differences)
        rows = ", ".join(DIALECT_OF[d] for d in found.differences)
        found.uncovered.append(
            f"several differences at once ({names}): no built-in dialect combines them; "
            f"the emulator serves {found.dialect} only (wire-format rows {rows})"
        )
    return found


def _prefixes(recording: Recording, found: Learned) -> None:
    sync: dict[str, int] = {}
    for call in recording.calls:
        if not call.ok or call.operation in ("", "getToken", "openApiDocument"):
            continue
        if call.operation.startswith("structureMassExportAsync"):
            found.async_prefix = call.prefix
        else:
            sync[call.prefix] = sync.get(call.prefix, 0) + 1
    if sync:
        found.api_prefix = max(sync, key=lambda p: sync[p])
    if found.api_prefix == "" and (found.async_prefix or DEFAULT_PREFIX):
        found.differences[_named("unprefixed")] = (
            "synchronous operations answered without the API prefix"
            + (f" (batch exports under {found.async_prefix!r})" if found.async_prefix else "")
        )
    elif found.api_prefix not in (None, DEFAULT_PREFIX):
        pass  # a setting (api_prefix), not a dialect: the profile carries it


def _shapes(recording: Recording, found: Learned) -> None:
    snake: set[str] = set()
    for call in recording.calls:
        if not call.ok or call.operation in ("getToken", "openApiDocument", ""):
            continue
        value = call.json()
        if value is None:
            continue
        snake.update(spelling.snake_names(value, per_list=50))
        if call.operation in LIST_OPERATIONS and isinstance(value, dict):
            _paging(call, value, found)
        if call.operation == "getTree":
            _nesting(value, found)
        if call.operation in ("getTable", "getMapping") and ETAG_HEADER.lower() in call.headers:
            found.differences.setdefault(
                _named("etag"),
                f"{call.operation} answered with an ETag "
                f"({call.headers[ETAG_HEADER.lower()][:20]})",
            )
    if snake:
        found.differences[_named("snake")] = (
            "field names in snake_case (" + ", ".join(sorted(snake)[:5]) + ")"
        )


def _paging(call: Call, value: dict[str, Any], found: Learned) -> None:
    """A list answered as an object: a Spring Data page, or an envelope no dialect serves."""
    if isinstance(value.get(PAGE_CONTENT), list) and any(k in value for k in PAGE_TOTALS):
        found.page_size = found.page_size or _int(value.get("size"))
        found.differences.setdefault(
            _named("paged"),
            f"{call.operation} answered a Spring Data page "
            f"(size {value.get('size')}, {value.get(PAGE_TOTAL_ELEMENTS[0])} entries)",
        )
        return
    keys = ", ".join(sorted(k for k, v in value.items() if isinstance(v, list)))
    line = (
        f"{call.operation} answered an object with the list under {keys or 'no key'}"
        " (not a Spring Data page): no dialect serves that envelope "
        "(wire-format rows 11, 14, 18)"
    )
    if line not in found.uncovered:
        found.uncovered.append(line)


def _children_key(entries: list[Any]) -> str | None:
    """The key a nested tree holds its child lists under (the profile's spellings)."""
    for key in CHILDREN_KEYS:
        if any(isinstance(e, dict) and isinstance(e.get(key), list) for e in entries):
            return key
    return None


def _nesting(value: Any, found: Learned) -> None:
    """A tree of nested child lists: the dialect nesting under that key, if one does."""
    entries = value.get(PAGE_CONTENT, value) if isinstance(value, dict) else value
    key = _children_key(entries) if isinstance(entries, list) else None
    if key is None:
        return
    dialect = nested_dialect(key)
    if dialect is not None:
        found.differences.setdefault(dialect.name, f"the tree came as nested {key} lists")
        return
    line = f"the tree came as nested {key} lists: no dialect nests under that key " + (
        "(wire-format row 11)"
    )
    if line not in found.uncovered:
        found.uncovered.append(line)


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None
