"""The endpoints table: each operation's method and path (the wire profile's) and kinds.

Each service operation (named by the operation id of the service description, or by
the name docs/internals.md gives the unnamed ones) maps to its HTTP method, its path
template, the kind of body it sends and the kind of answer it returns.
:func:`build_path` fills a template, percent-encoding every parameter as a single
path segment, so an id such as ``"a/b"``, ``".."`` or ``"100%"`` can only ever reach
its own resource.
"""

from __future__ import annotations

import string
from dataclasses import dataclass
from typing import Any, Literal
from urllib.parse import quote

from mddframes.errors import InvalidArgumentError
from mddframes.wire.profile import ROUTES

BodyKind = Literal["none", "json", "form", "multipart"]
AnswerKind = Literal["json", "text", "file"]


@dataclass(frozen=True)
class Endpoint:
    """One operation of the service.

    Attributes
    ----------
    operation : str
        The operation id (``"getTable"``), used in log lines, errors and counters.
    method : str
        The HTTP method.
    path : str
        The path template with ``{name}`` placeholders, relative to the API prefix
        (or to the base URL when ``under_api_prefix`` is false).
    body : {"none", "json", "form", "multipart"}
        What the request carries.
    answer : {"json", "text", "file"}
        What the response carries: decoded JSON (or nothing), a text document, or a
        file to stream.
    under_api_prefix : bool
        Whether the path hangs below the API prefix (every operation but the token call).
    asynchronous : bool
        One of the batch export operations, the only ones the service description
        shows under the prefix (the prefix of the others is discovered, row 2).
    """

    operation: str
    method: str
    path: str
    body: BodyKind = "none"
    answer: AnswerKind = "json"
    under_api_prefix: bool = True
    asynchronous: bool = False

    @property
    def parameters(self) -> tuple[str, ...]:
        """The names of the template's placeholders, in order."""
        return tuple(
            field for _, field, _, _ in string.Formatter().parse(self.path) if field is not None
        )


#: What each operation sends and answers beyond the default (a JSON answer, no body).
_KINDS: dict[str, dict[str, Any]] = {
    "getToken": {"body": "form", "under_api_prefix": False},
    "tableUpdate": {"body": "json"},
    "mappingUpdate": {"body": "json"},
    "addToDeploymentPackage": {"body": "json"},
    "createChildStructure": {"body": "json"},
    "externalExportStructure": {"answer": "text"},
    "structureMassExportAsync": {"body": "json", "asynchronous": True},
    "structureMassExportAsyncStatus": {"asynchronous": True},
    "structureMassExportAsyncResult": {"answer": "file", "asynchronous": True},
    "confirmStructureDeployment": {"body": "multipart"},
}

ENDPOINTS: dict[str, Endpoint] = {
    operation: Endpoint(operation, method, path, **_KINDS.get(operation, {}))
    for operation, (method, path) in ROUTES.items()
    if operation != "openApiDocument"  # documentation, read by doctor only
}
"""Every operation of the service, by operation id."""


def endpoint(operation: str) -> Endpoint:
    """The table entry of ``operation``.

    Raises
    ------
    KeyError
        If the operation is not in :data:`ENDPOINTS` (a programming error).
    """
    try:
        return ENDPOINTS[operation]
    except KeyError:
        known = ", ".join(sorted(ENDPOINTS))
        raise KeyError(f"unknown operation {operation!r}; known: {known}") from None


def quote_segment(value: object) -> str:
    """Percent-encode ``value`` as one path segment (``/``, ``%``, spaces, non-ASCII...)."""
    return quote(str(value), safe="")


def build_path(operation: str, **params: object) -> str:
    """Fill the path template of ``operation`` with percent-encoded parameters.

    Parameters
    ----------
    operation : str
        An operation id of :data:`ENDPOINTS`.
    **params
        One value per placeholder. Each is converted with ``str()`` and quoted with
        ``urllib.parse.quote(value, safe="")``, so it stays a single segment.

    Returns
    -------
    str
        The path, relative to the API prefix (or the base URL for the token call).

    Raises
    ------
    InvalidArgumentError
        If a parameter is missing, unexpected, ``None``, a bool or blank (an empty
        segment would address the collection above the resource).
    """
    entry = endpoint(operation)
    expected = entry.parameters
    missing = [name for name in expected if name not in params]
    unexpected = [name for name in params if name not in expected]
    if missing or unexpected:
        raise InvalidArgumentError(
            f"{operation} takes path parameters {list(expected)}; "
            f"missing {missing}, unexpected {unexpected}",
            operation=operation,
        )
    values: dict[str, str] = {}
    for name in expected:
        value = params[name]
        if value is None or isinstance(value, bool) or str(value).strip() == "":
            raise InvalidArgumentError(
                f"{operation}: path parameter {name!r} must be a non-empty id, got {value!r}",
                operation=operation,
            )
        values[name] = quote_segment(value)
    return entry.path.format(**values)
