"""``--redact-values``: a recording whose data can go into a public bug report.

Every string and number of the JSON bodies of the data operations (tree, element,
raw data, tables, mappings, packages, creations, exports' ids) is replaced by a
placeholder of the same JSON type; keys, nesting and list lengths are kept, and the same
value gets the same placeholder everywhere in the file (bodies and URL path segments),
so ids still join and a redacted recording still replays. A placeholder keeps the
length of its string where it can (``"s0007"`` for a five-character value) and the
look of a timestamp (an ISO date-time becomes another one).

What is the service's vocabulary rather than the user's data is kept: element
``type``, column ``dataType``, package ``status``, object type ids and element types,
booleans and nulls. The keys users own (the column names keying table rows, element
``attributes``) are values in disguise: they get the same placeholders as the column
names listed in the table's metadata, so rows still match their columns.
"""

from __future__ import annotations

import json
import re
import tempfile
import threading
import zipfile
from datetime import UTC, datetime, timedelta
from typing import IO, Any
from urllib.parse import quote, unquote, urlsplit, urlunsplit

from mddframes.http.endpoints import ENDPOINTS
from mddframes.wire.disposition import disposition_file_name
from mddframes.wire.profile import PAGE_PARAMETERS, PAGEABLE, USER_KEYS, served_page
from mddframes.wire.spelling import TO_SNAKE

__all__ = ["REDACTED_OPERATIONS", "Redactor", "path_parameters", "redacts"]

#: The operations whose bodies and path parameters are redacted.
REDACTED_OPERATIONS = frozenset(
    {
        "getTree", "getStructure", "getRawData", "getTable", "tableUpdate", "getMapping",
        "mappingUpdate", "listDeploymentPackages", "addToDeploymentPackage",
        "createChildStructure", "externalExportStructure", "structureMassExportAsync",
        "structureMassExportAsyncResult", "deployStructure",
    }
)  # fmt: skip
_PAGE = served_page([], 0, 1)  # a Spring Data page's fields (the wire profile's)
#: Keys whose values are the service's vocabulary (or a page's counters), kept as they are.
KEPT_KEYS = frozenset(
    {
        "type", "status", *PAGE_PARAMETERS,
        *(spelled for name in ("dataType", "objectTypeId", "elementTypes", "fileExtension",
                               "taskId") for spelled in (name, TO_SNAKE[name])), *_PAGE[PAGEABLE],
        *(key for key, value in _PAGE.items() if not isinstance(value, list | dict)),
    }
)  # fmt: skip
_KEPT_PARAMETERS = frozenset({"realm", "objectTypeId", "type", "taskId"})
_TIMESTAMP = re.compile(r"^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?$")
_EPOCH = datetime(2000, 1, 1, tzinfo=UTC)


def redacts(operation: str) -> bool:
    """Whether ``operation``'s bodies and path parameters are redacted."""
    return operation in REDACTED_OPERATIONS


class Redactor:
    """Stable placeholders for one recording (the same value, the same placeholder)."""

    def __init__(self) -> None:
        self._strings: dict[str, str] = {}
        self._numbers: dict[tuple[str, Any], int | float] = {}
        self._lock = threading.Lock()

    def string(self, value: str) -> str:
        """The placeholder of one string."""
        with self._lock:
            found = self._strings.get(value)
            if found is None:
                n = len(self._strings) + 1
                if _TIMESTAMP.match(value):
                    moment = _EPOCH + timedelta(minutes=n)
                    found = moment.strftime("%Y-%m-%dT%H:%M:%S") + (
                        "Z" if value.endswith("Z") else ""
                    )
                else:
                    digits = str(n)
                    found = "s" + digits.rjust(max(len(value) - 1, len(digits)), "0")
                self._strings[value] = found
            return found

    def number(self, value: int | float) -> int | float:
        """The placeholder of one number (an int stays an int)."""
        key = (type(value).__name__, value)
        with self._lock:
            found = self._numbers.get(key)
            if found is None:
                n = len(self._numbers) + 1
                found = n if isinstance(value, int) else n + 0.5
                self._numbers[key] = found
            return found

    def value(self, value: Any, key: str | None = None) -> Any:
        """``value`` with its strings and numbers replaced, vocabulary kept."""
        if key in KEPT_KEYS:
            return value
        if isinstance(value, bool) or value is None:
            return value
        if isinstance(value, str):
            return self.string(value)
        if isinstance(value, int | float):
            return self.number(value)
        if isinstance(value, list):
            return [self.value(item, key) for item in value]
        if isinstance(value, dict):
            if key in USER_KEYS:  # the user's own names: redacted like the values
                return {self.string(k): self.value(v) for k, v in value.items()}
            return {k: self.value(v, k) for k, v in value.items()}
        return value

    def body(self, data: bytes) -> bytes:
        """A JSON body redacted (a body that is not JSON is returned as it is)."""
        try:
            value = json.loads(data)
        except ValueError:
            return data
        value = self.value(value)
        return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8")

    def script(self, size: int) -> bytes:
        """What stands for a generated script (its text names tables and columns)."""
        return f"-- redacted by mddframes (--redact-values): a script of {size} bytes\n".encode()

    def file_name(self, name: str) -> str:
        """A script's file name: its stem redacted, its extension kept."""
        stem, dot, extension = name.rpartition(".")
        return f"{self.string(stem)}.{extension}" if dot and stem else self.string(name)

    def disposition(self, header: str) -> str:
        """A ``Content-Disposition`` header with its file name redacted."""
        name = disposition_file_name(header)
        if not name:
            return header
        return f'attachment; filename="{self.file_name(name)}"'

    def archive(self, spool: IO[bytes]) -> IO[bytes]:
        """A batch export's zip: each ``<element id>__<file name>`` member renamed with the
        placeholders of both, its script replaced (:meth:`script`)."""
        rebuilt: IO[bytes] = tempfile.SpooledTemporaryFile(1 << 20)  # noqa: SIM115
        try:
            with zipfile.ZipFile(spool) as source, zipfile.ZipFile(rebuilt, "w") as target:
                for info in source.infolist():
                    stem, separator, name = info.filename.partition("__")
                    renamed = (
                        f"{self.string(stem)}__{self.file_name(name)}"
                        if separator
                        else self.file_name(info.filename)
                    )
                    target.writestr(renamed, self.script(info.file_size))
        except (zipfile.BadZipFile, OSError, ValueError):
            rebuilt.close()
            spool.seek(0)
            return spool
        rebuilt.seek(0)
        return rebuilt

    def url(self, url: str, operation: str) -> str:
        """``url`` with the path parameters of ``operation`` redacted (not the realm,
        object type, element type or task id)."""
        template = ENDPOINTS[operation].path.split("/")
        parts = urlsplit(url)
        segments = parts.path.split("/")
        # the template is the end of the path (after the base URL and the API prefix)
        tail = segments[len(segments) - len(template) :]
        for index, pattern in enumerate(template):
            if pattern.startswith("{") and pattern[1:-1] not in _KEPT_PARAMETERS:
                original = unquote(tail[index])
                tail[index] = quote(self.string(original), safe="")
        segments[len(segments) - len(template) :] = tail
        return urlunsplit(parts._replace(path="/".join(segments)))


def path_parameters(operation: str, url: str) -> tuple[dict[str, str], str]:
    """The path parameters of ``operation`` in ``url``, and the prefix before its path.

    Written into each recorded entry (``_parameters``, ``_prefix``), so whoever reads a
    recording needs no table of the endpoints.
    """
    entry = ENDPOINTS.get(operation)
    segments = urlsplit(url).path.split("/")
    if entry is None:
        return {}, ""
    template = entry.path.split("/")[1:]  # after its leading slash
    if len(segments) < len(template):
        return {}, ""
    cut = len(segments) - len(template)
    params = {
        pattern[1:-1]: unquote(value)
        for pattern, value in zip(template, segments[cut:], strict=True)
        if pattern.startswith("{")
    }
    return params, "/".join(segments[:cut])
