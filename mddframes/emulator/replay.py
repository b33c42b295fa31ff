"""An emulator seeded from a recording (``serve(replay="tenant.har")``).

The recording's answers become the emulator's starting state, in the default wire
shape (snake_case names renamed back, Spring pages unwrapped, nested trees flattened):
the tree, elements, tables, mappings, object types and packages it saw, each as it was
first seen (what the recorded session created or added is left out, so the same
session can run again). The emulator then serves them in the dialect the recording
speaks (:func:`mddframes.emulator.recordings.learn`), under its prefix and realm, and works
as on the built-in sample: writes, exports and package additions land in its store.

Three things are the replay's own (:class:`ReplayMiddleware`):

- a 404 says the recording holds no answer for the request and names the recording;
- the n-th batch export started stays ``RUNNING`` for as many status polls as the n-th
  one did in the recording, then finishes (not the first answer forever);
- an export answers, for an element and object type, the script the recording exported
  (templates are never on the wire); one never exported is a 404 naming the recording.
"""

from __future__ import annotations

import io
import json
import os
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from mddframes.emulator.dataset import JSON, Dataset
from mddframes.emulator.dialects import TO_CAMEL, rename_keys
from mddframes.emulator.recordings import Call, Learned, Recording, learn
from mddframes.wire.disposition import disposition_file_name
from mddframes.wire.profile import ASYNC_PATH, CHILDREN_KEYS, PAGE_CONTENT, PAGE_TOTALS, PAGEABLE

__all__ = ["Replay", "ReplayMiddleware", "load_replay"]

_ELEMENT_DEFAULTS: JSON = {
    "parentId": None,
    "version": 1,
    "modifiedAt": None,
    "deployed": False,
    "deploymentId": None,
    "attributes": {},
}

#: What only an element's own answer carries (the tree's entry lacks them).
_DETAIL_FIELDS = ("modifiedAt", "deploymentId", "attributes")


@dataclass
class Replay:
    """A recording made ready to serve.

    Attributes
    ----------
    recording : Recording
        The recording.
    learned : Learned
        Its dialect, realm and prefix.
    dataset : Dataset
        The starting state.
    polls : list of int
        ``RUNNING`` status polls of each batch export, in the order they started.
    """

    recording: Recording
    learned: Learned
    dataset: Dataset
    polls: list[int] = field(default_factory=list)
    scripts: dict[tuple[str, str], tuple[str, str]] = field(default_factory=dict)

    @property
    def name(self) -> str:
        """The recording's file name."""
        return self.recording.name

    def render(self, structure_id: str, object_type_id: str) -> tuple[str, str]:
        """The script the recording exported for this element and object type.

        Raises
        ------
        UnknownObject
            The recording exported no such script (templates are never on the wire).
        """
        found = self.scripts.get((structure_id, object_type_id))
        if found is None:
            from mddframes.emulator.errors import UnknownObject

            raise UnknownObject(
                f"no {object_type_id!r} script of element {structure_id!r} was exported "
                f"in the recording"
            )
        return found


def load_replay(path: str | os.PathLike[str]) -> Replay:
    """Read ``path`` and build the emulator's starting state from it.

    Parameters
    ----------
    path : path
        A recording (``mddframes record`` or ``Client.recording``).

    Returns
    -------
    Replay

    Raises
    ------
    RecordingError
        The file is not a recording that can be read.
    """
    recording = Recording.read(path)
    learned = learn(recording)
    dataset = _seed(recording)
    return Replay(recording, learned, dataset, _polls(recording), _recorded_scripts(recording))


def _normal(value: Any) -> Any:
    """An answer in the default wire shape: camelCase, unpaged."""
    value = rename_keys(value, TO_CAMEL)
    if isinstance(value, dict) and isinstance(value.get(PAGE_CONTENT), list):
        if any(k in value for k in PAGE_TOTALS) or PAGEABLE in value:
            return value[PAGE_CONTENT]
    return value


def _flat_tree(entries: list[Any], parent: Any = None) -> Iterator[JSON]:
    for entry in entries:
        if not isinstance(entry, dict):
            continue
        key = next((k for k in CHILDREN_KEYS if isinstance(entry.get(k), list)), None)
        children = entry.get(key) if key is not None else None
        flat = {k: v for k, v in entry.items() if k not in CHILDREN_KEYS or v not in ([], None)
                and k != key}  # fmt: skip
        if isinstance(children, list) or "parentId" not in flat:
            flat.setdefault("parentId", parent)
        yield flat
        if isinstance(children, list):
            yield from _flat_tree(children, entry.get("id"))


def _listed(calls: list[Call]) -> Iterator[tuple[Call, list[Any]]]:
    """Every answer of ``calls`` as a list, the pages of one list joined in order."""
    for call in calls:
        value = _normal(call.json())
        if isinstance(value, list):
            yield call, value


def _seed(recording: Recording) -> Dataset:
    created = {
        str(value.get("id"))
        for call in recording.of("createChildStructure")
        if isinstance(value := _normal(call.json()), dict)
    }
    elements: dict[str, JSON] = {}
    systems: dict[str, JSON] = {}
    for call, entries in _listed(list(recording.of("getTree"))):
        system = call.params.get("name")
        if system:
            systems.setdefault(system, {"name": system, "description": ""})
        for entry in _flat_tree(entries):
            key = str(entry.get("id"))
            if key not in created and key not in elements:
                elements[key] = {**_ELEMENT_DEFAULTS, "systemName": system, **entry}
    detailed: set[str] = set()
    for call in recording.of("getStructure"):
        value = _normal(call.json())
        if isinstance(value, dict) and value.get("id") is not None:
            key = str(value["id"])
            if key in created or key in detailed:
                continue
            detailed.add(key)
            # the tree's entry, when read, came first: its fields stand (a later read
            # of the element may follow a write)
            merged = dict(value)  # in the order the service writes an element
            for field_name, item in (elements.get(key) or {}).items():
                if field_name not in value or field_name not in _DETAIL_FIELDS:
                    merged[field_name] = item
            elements[key] = merged
    elements = {k: e for k, e in elements.items() if e.get("id") is not None}
    fallback = next(iter(systems), "RECORDED")
    for element in elements.values():
        system_name = element.get("systemName")
        if not isinstance(system_name, str):  # an element read alone, its system unseen
            system_name = element["systemName"] = fallback
        systems.setdefault(system_name, {"name": system_name, "description": ""})
    tables = _first(recording, "getTable", "tableId")
    mappings = _first(recording, "getMapping", "mappingId")
    object_types = _object_types(recording)
    return Dataset(
        systems=list(systems.values()),
        elements=_parents_first(list(elements.values())),
        tables=list(tables.values()),
        mappings=list(mappings.values()),
        object_types=object_types,
        packages=_packages(recording),
    )


def _first(recording: Recording, operation: str, parameter: str) -> dict[str, JSON]:
    """Each object of ``operation`` as first answered (its state before any write)."""
    found: dict[str, JSON] = {}
    for call in recording.of(operation):
        value = _normal(call.json())
        key = call.params.get(parameter)
        if isinstance(value, dict) and key and key not in found:
            found[key] = value
    return found


def _parents_first(elements: list[JSON]) -> list[JSON]:
    by_id = {e["id"]: e for e in elements}
    placed: set[Any] = set()
    ordered: list[JSON] = []

    def place(element: JSON, depth: int = 0) -> None:
        if element["id"] in placed or depth > 1000:
            return
        parent = by_id.get(element.get("parentId"))
        if parent is not None:
            place(parent, depth + 1)
        placed.add(element["id"])
        ordered.append(element)

    for element in elements:
        place(element)
    return ordered


def _packages(recording: Recording) -> list[JSON]:
    added: dict[tuple[str, str], list[str]] = {}
    first: dict[tuple[str, str], JSON] = {}
    for call in recording.calls:
        if call.operation == "addToDeploymentPackage" and call.ok:
            body = _normal(call.request_json())
            ids = body.get("structureIds") if isinstance(body, dict) else body
            key = (call.params.get("systemName", ""), call.params.get("dpName", ""))
            if isinstance(ids, list):
                added.setdefault(key, []).extend(str(i) for i in ids)
        elif call.operation == "listDeploymentPackages" and call.ok:
            value = _normal(call.json())
            for package in value if isinstance(value, list) else []:
                if not isinstance(package, dict):
                    continue
                key = (str(package.get("systemName")), str(package.get("name")))
                if key in first:
                    continue
                before = added.get(key, [])  # added by the session before this answer
                ids = [i for i in package.get("structureIds") or [] if i not in before]
                first[key] = {**package, "structureIds": ids}
    return list(first.values())


def _object_types(recording: Recording) -> list[JSON]:
    found: dict[str, JSON] = {}
    for call in recording.of("getObjectTypes"):
        value = _normal(call.json())
        for entry in value if isinstance(value, list) else []:
            if isinstance(entry, dict) and entry.get("id") is not None:
                found.setdefault(str(entry["id"]), dict(entry))
    return list(found.values())


def _recorded_scripts(recording: Recording) -> dict[tuple[str, str], tuple[str, str]]:
    """(element id, object type id) -> (file name, script) as the recording exported it."""
    from mddframes.emulator.tasks import safe_id

    scripts: dict[tuple[str, str], tuple[str, str]] = {}
    for call in recording.of("externalExportStructure"):
        key = (call.params.get("id", ""), call.params.get("objectTypeId", ""))
        name = disposition_file_name(call.headers.get("content-disposition", "")) or f"{key[0]}.txt"
        scripts.setdefault(key, (name, call.body.decode("utf-8", "replace")))
    tasks: dict[str, tuple[str, list[str]]] = {}  # task id -> object type, element ids
    for call in recording.of("structureMassExportAsync"):
        body, answer = _normal(call.request_json()), _normal(call.json())
        if isinstance(body, dict) and isinstance(answer, dict) and answer.get("taskId"):
            ids = [str(i) for i in body.get("structureIds") or []]
            tasks[str(answer["taskId"])] = (str(body.get("objectTypeId")), ids)
    for call in recording.of("structureMassExportAsyncResult"):
        type_id, ids = tasks.get(call.params.get("taskId", ""), ("", []))
        try:
            with zipfile.ZipFile(io.BytesIO(call.body)) as archive:
                members = {n: archive.read(n) for n in archive.namelist()}
        except zipfile.BadZipFile:
            continue
        by_stem = {safe_id(i): i for i in ids}
        for name, data in members.items():
            stem, separator, file_name = name.partition("__")
            if separator and stem in by_stem:
                text = data.decode("utf-8", "replace")
                scripts.setdefault((by_stem[stem], type_id), (file_name, text))
    return scripts


def _polls(recording: Recording) -> list[int]:
    """RUNNING status polls of each batch export, in the order the tasks started."""
    order: list[str] = []
    for call in recording.of("structureMassExportAsync"):
        answer = _normal(call.json())
        if isinstance(answer, dict) and answer.get("taskId") is not None:
            order.append(str(answer["taskId"]))
    running: dict[str, int] = {}
    for call in recording.of("structureMassExportAsyncStatus"):
        answer = _normal(call.json())
        if isinstance(answer, dict) and answer.get("status") == "RUNNING":
            task = call.params.get("taskId", "")
            running[task] = running.get(task, 0) + 1
    return [running.get(task, 0) for task in order]


class ReplayMiddleware:
    """The replay's own answers (see the module's docstring), outside the dialect."""

    def __init__(self, app: ASGIApp, replay: Replay, state: Any) -> None:
        self.app = app
        self.replay = replay
        self.state = state
        self._started = 0

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"].startswith("/_emulator"):
            await self.app(scope, receive, send)
            return
        if scope["method"] == "POST" and scope["path"].endswith(ASYNC_PATH):
            polls = self.replay.polls
            if self._started < len(polls) and polls[self._started]:
                self.state.tasks.hold_next(polls=polls[self._started])
            self._started += 1
        start: dict[str, Any] = {}

        async def named(message: Message) -> None:
            if message["type"] == "http.response.start":
                if message.get("status") != 404:
                    await send(message)
                    return
                start.update(message)
                return
            if not start:
                await send(message)
                return
            body = message.get("body", b"")
            if message.get("more_body"):
                start.setdefault("chunks", []).append(body)
                return
            body = b"".join([*start.pop("chunks", []), body])
            body = self._named(scope, body)
            headers = [(k, v) for k, v in start.get("headers", []) if k != b"content-length"]
            headers.append((b"content-length", str(len(body)).encode()))
            await send({**start, "headers": headers})
            await send({"type": "http.response.body", "body": body})

        await self.app(scope, receive, named)

    def _named(self, scope: Scope, body: bytes) -> bytes:
        why = (
            f"not in the recording {self.replay.name}: it holds no answer for "
            f"{scope['method']} {scope['path']}"
        )
        try:
            value = json.loads(body)
        except ValueError:
            return json.dumps({"status": 404, "message": why}).encode()
        if isinstance(value, dict):
            for key in ("message", "error_description", "error"):
                if isinstance(value.get(key), str):
                    value[key] = f"{value[key]} ({why})"
                    break
            else:
                value["message"] = why
        return json.dumps(value, ensure_ascii=False).encode("utf-8")
