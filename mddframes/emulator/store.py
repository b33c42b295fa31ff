"""The emulator's state: JSON documents in SQLite (stdlib ``sqlite3``), no HTTP in here.

Every record is kept in its wire shape (docs/wire-format.md) as a JSON text, so a
read serves the stored text and a write stores what the client sent (key order,
big integers and nesting survive). Each public method is one transaction: it
validates everything first and writes only when the whole request is valid, so a
rejected request changes nothing.

Errors are :class:`EmulatorError` subclasses carrying the HTTP status the routes
answer with; the HTTP layer only translates them.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import sqlite3
import threading
from collections.abc import Iterable, Iterator
from typing import Any

from mddframes.emulator.dataset import Dataset
from mddframes.emulator.documents import (
    OWNED_FIELDS,
    check_version,
    child_name_and_attributes,
    deployment_info_ids,
    dumps,
    tree_entry,
    utc_now,
    validate_mapping_payload,
    validate_package_ids,
    validate_table_payload,
)
from mddframes.emulator.errors import (
    InvalidInput,
    StateConflict,
    UnknownObject,
)

JSON = dict[str, Any]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS systems (
    name TEXT PRIMARY KEY, doc TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS elements (
    seq INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, system TEXT NOT NULL,
    parent_id TEXT, doc TEXT NOT NULL, entry TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS elements_by_system ON elements (system, seq);
CREATE INDEX IF NOT EXISTS elements_by_parent ON elements (parent_id, seq);
CREATE TABLE IF NOT EXISTS tables (
    id TEXT PRIMARY KEY, structure_id TEXT, doc TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS mappings (
    id TEXT PRIMARY KEY, structure_id TEXT, target_id TEXT, doc TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS mappings_by_target ON mappings (target_id);
CREATE TABLE IF NOT EXISTS object_types (
    seq INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, doc TEXT NOT NULL, template TEXT);
CREATE TABLE IF NOT EXISTS packages (
    seq INTEGER PRIMARY KEY, system TEXT NOT NULL, name TEXT NOT NULL, doc TEXT NOT NULL,
    UNIQUE (system, name));
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
"""


#: The insert of each kind of record (see :func:`_row`), and how many rows go per call.
_INSERTS = {
    "system": "INSERT INTO systems (name, doc) VALUES (?, ?)",
    "element": "INSERT INTO elements (id, system, parent_id, doc, entry) VALUES (?, ?, ?, ?, ?)",
    "table": "INSERT INTO tables (id, structure_id, doc) VALUES (?, ?, ?)",
    "mapping": "INSERT INTO mappings (id, structure_id, target_id, doc) VALUES (?, ?, ?, ?)",
    "object_type": "INSERT INTO object_types (id, doc, template) VALUES (?, ?, ?)",
    "package": "INSERT INTO packages (system, name, doc) VALUES (?, ?, ?)",
}
_BATCH = 2000


def _row(kind: str, record: JSON, owner_of: dict[str, str]) -> tuple[Any, ...]:
    """The row :data:`_INSERTS` takes for one record (``owner_of``: owned-field -> element)."""
    if kind == "system":
        return record["name"], dumps(record)
    if kind == "element":
        entry = dumps(tree_entry(record))
        return record["id"], record["systemName"], record.get("parentId"), dumps(record), entry
    if kind == "table":
        owner = owner_of.get(f"tableId:{record['id']}", record.get("structureId"))
        return record["id"], owner, dumps(record)
    if kind == "mapping":
        owner = owner_of.get(f"mappingId:{record['id']}")
        return record["id"], owner, record.get("targetId"), dumps(record)
    if kind == "object_type":
        doc = dumps({k: v for k, v in record.items() if k != "template"})
        return record["id"], doc, record.get("template")
    if kind == "package":
        return record["systemName"], record["name"], dumps(record)
    raise ValueError(f"unknown kind of record {kind!r}")


def _safe_id(value: str) -> str:
    """Lower-case ASCII letters/digits of ``value`` (for generated ids)."""
    return "".join(ch for ch in value.lower() if ch.isascii() and ch.isalnum()) or "x"


class Store:
    """All persistent state of the emulator, in one SQLite database.

    Parameters
    ----------
    path : str, optional
        A database file that survives restarts; ``None`` keeps everything in memory.

    Notes
    -----
    One connection is shared by the server's threads behind a re-entrant lock; SQLite
    is fast enough that the lock is never the bottleneck of an emulator.
    """

    def __init__(self, path: str | None = None) -> None:
        self.path = path
        self._lock = threading.RLock()
        self._conn = sqlite3.connect(
            path or ":memory:", check_same_thread=False, isolation_level=None
        )
        if path:
            self._conn.execute("PRAGMA journal_mode=WAL")
        self._conn.executescript(_SCHEMA)

    def close(self) -> None:
        """Close the database connection."""
        with self._lock:
            self._conn.close()

    @contextlib.contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                yield self._conn
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
            else:
                self._conn.execute("COMMIT")

    def _one(self, sql: str, params: tuple[object, ...] = ()) -> object:
        with self._lock:
            row = self._conn.execute(sql, params).fetchone()
        return None if row is None else row[0]

    def _text(self, sql: str, params: tuple[object, ...] = ()) -> str | None:
        """The first column of the first row as text (the TEXT columns), ``None``: no row."""
        value = self._one(sql, params)
        return None if value is None else str(value)

    def _count(self, table: str) -> int:
        value = self._one(f"SELECT COUNT(*) FROM {table}")  # noqa: S608 - table names are ours
        if not isinstance(value, int):
            raise TypeError(f"COUNT(*) of {table} answered {value!r}, not an integer")
        return value

    # ------------------------------------------------------------------ loading

    def is_empty(self) -> bool:
        """True when no system is stored (a fresh database)."""
        return self._count("systems") == 0

    def load(self, data: Dataset | Iterable[tuple[str, JSON]]) -> None:
        """Replace everything with ``data`` in one transaction.

        ``data`` is a :class:`Dataset` or its records as ``(kind, record)`` pairs (see
        :meth:`Dataset.records`), consumed once and inserted in batches as they come,
        so a streamed dataset of a million elements never sits in memory whole. An
        element comes before the table or mapping it owns.
        """
        stream = data.records() if isinstance(data, Dataset) else data
        owner_of: dict[str, str] = {}
        batches: dict[str, list[tuple[Any, ...]]] = {kind: [] for kind in _INSERTS}
        with self._transaction() as conn:
            for table in (
                "systems",
                "elements",
                "tables",
                "mappings",
                "object_types",
                "packages",
                "meta",
            ):
                conn.execute(f"DELETE FROM {table}")  # noqa: S608 - fixed table names
            for kind, record in stream:
                if kind == "element":
                    for key in OWNED_FIELDS:
                        if record.get(key) is not None:
                            owner_of[f"{key}:{record[key]}"] = record["id"]
                batch = batches[kind]
                batch.append(_row(kind, record, owner_of))
                if len(batch) >= _BATCH:
                    conn.executemany(_INSERTS[kind], batch)
                    batch.clear()
            for kind, batch in batches.items():
                conn.executemany(_INSERTS[kind], batch)

    def counts(self) -> dict[str, int]:
        """How many records of each kind are stored."""
        names = ("systems", "elements", "tables", "mappings", "object_types", "packages")
        return {name: self._count(name) for name in names}

    # ------------------------------------------------------------------ reads

    def _require_system(self, name: str) -> None:
        if self._one("SELECT 1 FROM systems WHERE name = ?", (name,)) is None:
            raise UnknownObject(f"system {name!r} not found")

    def tree_json(self, system: str) -> str:
        """The ``getTree`` answer of ``system`` as JSON text (joined, never re-parsed)."""
        with self._lock:
            self._require_system(system)
            rows = self._conn.execute(
                "SELECT entry FROM elements WHERE system = ? ORDER BY seq", (system,)
            ).fetchall()
        return "[" + ",".join(row[0] for row in rows) + "]"

    def element_json(self, structure_id: str) -> str:
        """The ``getStructure`` answer as JSON text."""
        doc = self._text("SELECT doc FROM elements WHERE id = ?", (structure_id,))
        if doc is None:
            raise UnknownObject(f"element {structure_id!r} not found")
        return doc

    def element(self, structure_id: str) -> JSON:
        """One element as a dict."""
        element: JSON = json.loads(self.element_json(structure_id))
        return element

    def missing_elements(self, structure_ids: list[str]) -> list[str]:
        """The ids of ``structure_ids`` that name no element, in order."""
        with self._lock:
            return [
                sid
                for sid in structure_ids
                if self._conn.execute("SELECT 1 FROM elements WHERE id = ?", (sid,)).fetchone()
                is None
            ]

    def element_path(self, element: JSON) -> list[str]:
        """Names from the root down to ``element`` itself."""
        names = [element["name"]]
        parent_id = element.get("parentId")
        seen = {element["id"]}
        with self._lock:
            while parent_id is not None and parent_id not in seen:
                seen.add(parent_id)
                row = self._conn.execute(
                    "SELECT doc FROM elements WHERE id = ?", (parent_id,)
                ).fetchone()
                if row is None:
                    break
                parent = json.loads(row[0])
                names.append(parent["name"])
                parent_id = parent.get("parentId")
        return names[::-1]

    def children(self, structure_id: str) -> list[JSON]:
        """The direct children of an element as ``{"id","name","type"}``, in display order."""
        with self._lock:
            rows = self._conn.execute(
                "SELECT entry FROM elements WHERE parent_id = ? ORDER BY seq", (structure_id,)
            ).fetchall()
        return [{k: e[k] for k in ("id", "name", "type")} for e in (json.loads(r[0]) for r in rows)]

    def table_json(self, table_id: str) -> str:
        """The ``getTable`` answer as JSON text."""
        doc = self._text("SELECT doc FROM tables WHERE id = ?", (table_id,))
        if doc is None:
            raise UnknownObject(f"table {table_id!r} not found")
        return doc

    def mapping_json(self, mapping_id: str) -> str:
        """The ``getMapping`` answer as JSON text."""
        doc = self._text("SELECT doc FROM mappings WHERE id = ?", (mapping_id,))
        if doc is None:
            raise UnknownObject(f"mapping {mapping_id!r} not found")
        return doc

    def mappings_targeting(self, structure_id: str) -> list[JSON]:
        """The mappings whose ``targetId`` is ``structure_id``, in load order."""
        with self._lock:
            rows = self._conn.execute(
                "SELECT doc FROM mappings WHERE target_id = ? ORDER BY rowid", (structure_id,)
            ).fetchall()
        return [json.loads(r[0]) for r in rows]

    def object_types_json(self) -> str:
        """The ``getObjectTypes`` answer (templates are never served)."""
        with self._lock:
            rows = self._conn.execute("SELECT doc FROM object_types ORDER BY seq").fetchall()
        return "[" + ",".join(r[0] for r in rows) + "]"

    def object_type(self, object_type_id: str) -> JSON:
        """One object type including its ``template`` source."""
        with self._lock:
            row = self._conn.execute(
                "SELECT doc, template FROM object_types WHERE id = ?", (object_type_id,)
            ).fetchone()
        if row is None:
            raise UnknownObject(f"object type {object_type_id!r} not found")
        return {**json.loads(row[0]), "template": row[1]}

    def open_packages_json(self, system: str) -> str:
        """The ``listDeploymentPackages`` answer: the OPEN packages of ``system``."""
        with self._lock:
            self._require_system(system)
            rows = self._conn.execute(
                "SELECT doc FROM packages WHERE system = ? ORDER BY seq", (system,)
            ).fetchall()
        docs = [r[0] for r in rows if json.loads(r[0]).get("status") == "OPEN"]
        return "[" + ",".join(docs) + "]"

    def package(self, system: str, name: str) -> JSON:
        """One package (open or closed)."""
        with self._lock:
            self._require_system(system)
            doc = self._text(
                "SELECT doc FROM packages WHERE system = ? AND name = ?", (system, name)
            )
        if doc is None:
            raise UnknownObject(f"deployment package {name!r} not found in system {system!r}")
        package: JSON = json.loads(doc)
        return package

    # ------------------------------------------------------------------ writes

    def _bump_element(
        self, conn: sqlite3.Connection, structure_id: str | None, **changes: Any
    ) -> JSON | None:
        """Raise an element's version (or apply ``changes``) and refresh its tree entry."""
        if structure_id is None:
            return None
        row = conn.execute("SELECT doc FROM elements WHERE id = ?", (structure_id,)).fetchone()
        if row is None:
            return None
        element: JSON = json.loads(row[0])
        if changes:
            element.update(changes)
        else:
            version = element.get("version")
            element["version"] = version + 1 if isinstance(version, int) else 1
            element["modifiedAt"] = utc_now()
        conn.execute(
            "UPDATE elements SET doc = ?, entry = ? WHERE id = ?",
            (dumps(element), dumps(tree_entry(element)), structure_id),
        )
        return element

    def replace_table(
        self, table_id: str, payload: Any, expected: frozenset[str] | None = None
    ) -> str:
        """Replace a table with ``payload`` (stored as sent); the owning element's version rises.

        ``expected``: the versions (:func:`content_version`) the table must be at, else
        :class:`PreconditionFailed` and nothing changes; ``None``: any.
        """
        with self._transaction() as conn:
            row = conn.execute(
                "SELECT structure_id, doc FROM tables WHERE id = ?", (table_id,)
            ).fetchone()
            if row is None:
                raise UnknownObject(f"table {table_id!r} not found")
            check_version(row[1], expected, f"table {table_id!r}")
            validate_table_payload(payload, table_id)
            text = dumps(payload)
            conn.execute("UPDATE tables SET doc = ? WHERE id = ?", (text, table_id))
            self._bump_element(conn, row[0])
        return text

    def replace_mapping(
        self, mapping_id: str, payload: Any, expected: frozenset[str] | None = None
    ) -> str:
        """Replace a mapping with ``payload`` (stored as sent); the owning element's version rises.

        ``expected`` as for :meth:`replace_table`.
        """
        with self._transaction() as conn:
            row = conn.execute(
                "SELECT structure_id, doc FROM mappings WHERE id = ?", (mapping_id,)
            ).fetchone()
            if row is None:
                raise UnknownObject(f"mapping {mapping_id!r} not found")
            check_version(row[1], expected, f"mapping {mapping_id!r}")
            validate_mapping_payload(payload, mapping_id)
            target = payload.get("targetId")
            text = dumps(payload)
            conn.execute(
                "UPDATE mappings SET doc = ?, target_id = ? WHERE id = ?",
                (text, target if isinstance(target, str) else None, mapping_id),
            )
            self._bump_element(conn, row[0])
        return text

    def touch_table(self, table_id: str) -> JSON:
        """Change one value of a table behind the clients' backs (for conflict tests).

        The first string cell of the first row gets `` (changed)`` appended; a table
        without string cells gets a new ``metadata.touchedAt`` instead. Returns where.
        """
        with self._transaction() as conn:
            row = conn.execute(
                "SELECT doc, structure_id FROM tables WHERE id = ?", (table_id,)
            ).fetchone()
            if row is None:
                raise UnknownObject(f"table {table_id!r} not found")
            table = json.loads(row[0])
            change: JSON | None = None
            for position, record in enumerate(table.get("data") or []):
                for key, value in record.items():
                    if isinstance(value, str):
                        record[key] = value + " (changed)"
                        change = {"row": position, "column": key, "old": value, "new": record[key]}
                        break
                if change:
                    break
            if change is None:
                stamp = utc_now()
                table.setdefault("metadata", {})["touchedAt"] = stamp
                change = {"row": None, "column": "metadata.touchedAt", "old": None, "new": stamp}
            conn.execute("UPDATE tables SET doc = ? WHERE id = ?", (dumps(table), table_id))
            self._bump_element(conn, row[1])
        return change

    def _new_element_id(self, conn: sqlite3.Connection, system: str, element_type: str) -> str:
        counter = conn.execute("SELECT value FROM meta WHERE key = 'next_child'").fetchone()
        number = int(counter[0]) if counter else 1
        while True:
            candidate = f"{_safe_id(system)}-new-{_safe_id(element_type)}-{number:05d}"
            number += 1
            if conn.execute("SELECT 1 FROM elements WHERE id = ?", (candidate,)).fetchone() is None:
                break
        conn.execute(
            "INSERT OR REPLACE INTO meta (key, value) VALUES ('next_child', ?)", (str(number),)
        )
        return candidate

    def create_child(self, parent_id: str, element_type: str, body: Any) -> JSON:
        """Create an element of ``element_type`` under ``parent_id`` from ``{"name", ...}``.

        Every body key but ``name`` becomes an attribute; a body key ``attributes``
        holding an object is merged into the attributes rather than nested.
        """
        name, attributes = child_name_and_attributes(element_type, body)
        with self._transaction() as conn:
            row = conn.execute("SELECT system FROM elements WHERE id = ?", (parent_id,)).fetchone()
            if row is None:
                raise UnknownObject(f"parent element {parent_id!r} not found")
            system = row[0]
            element = {
                "id": self._new_element_id(conn, system, element_type),
                "name": name,
                "type": element_type,
                "parentId": parent_id,
                "systemName": system,
                "version": 1,
                "modifiedAt": utc_now(),
                "deployed": False,
                "deploymentId": None,
                "attributes": attributes,
            }
            conn.execute(
                "INSERT INTO elements (id, system, parent_id, doc, entry) VALUES (?, ?, ?, ?, ?)",
                (element["id"], system, parent_id, dumps(element), dumps(tree_entry(element))),
            )
        return element

    def add_to_package(self, system: str, name: str, body: Any) -> JSON:
        """Add element ids (a JSON list of strings) to an OPEN package; duplicates are ignored."""
        validate_package_ids(body)
        with self._transaction() as conn:
            package = self.package(system, name)
            if package.get("status") != "OPEN":
                raise StateConflict(
                    f"deployment package {name!r} of system {system!r} is {package.get('status')}, not OPEN"
                )
            for sid in body:
                row = conn.execute("SELECT system FROM elements WHERE id = ?", (sid,)).fetchone()
                if row is None or row[0] != system:
                    raise UnknownObject(f"element {sid!r} not found in system {system!r}")
            ids = list(package.get("structureIds") or [])
            for sid in body:
                if sid not in ids:
                    ids.append(sid)
            package["structureIds"] = ids
            conn.execute(
                "UPDATE packages SET doc = ? WHERE system = ? AND name = ?",
                (dumps(package), system, name),
            )
        return package

    def close_package(self, system: str, name: str) -> JSON:
        """Set a package's status to CLOSED (admin)."""
        with self._transaction() as conn:
            package = self.package(system, name)
            package["status"] = "CLOSED"
            conn.execute(
                "UPDATE packages SET doc = ? WHERE system = ? AND name = ?",
                (dumps(package), system, name),
            )
        return package

    def deploy(self, structure_id: str, deployment_id: str) -> JSON:
        """Mark one element as deployed under ``deployment_id``."""
        if not deployment_id.strip():
            raise InvalidInput("the deployment id in the URL is empty")
        with self._transaction() as conn:
            element = self._bump_element(
                conn, structure_id, deployed=True, deploymentId=deployment_id
            )
            if element is None:
                raise UnknownObject(f"element {structure_id!r} not found")
        return element

    def confirm_deployment(self, info: Any) -> list[JSON]:
        """Mark every structure of a deployment info document deployed; returns the elements."""
        deployment_id, ids = deployment_info_ids(info)
        with self._transaction() as conn:
            missing = self.missing_elements(ids)
            if missing:
                raise UnknownObject(f"element(s) not found: {', '.join(map(repr, missing))}")
            elements = []
            for sid in ids:
                element = self._bump_element(conn, sid, deployed=True, deploymentId=deployment_id)
                if element is None:
                    raise UnknownObject(f"element {sid!r} not found")
                elements.append(element)
            return elements

    def make_deployment_info(self, structure_ids: list[str], deployment_id: str | None) -> JSON:
        """Build the deployment info document the UI's "push to git" action would write."""
        if not structure_ids:
            raise InvalidInput("structureIds must list at least one element id")
        with self._lock:
            missing = self.missing_elements(structure_ids)
            if missing:
                raise UnknownObject(f"element(s) not found: {', '.join(map(repr, missing))}")
            elements = [self.element(sid) for sid in structure_ids]
            systems = sorted({e["systemName"] for e in elements})
            if len(systems) > 1:
                raise InvalidInput(f"the elements belong to several systems: {', '.join(systems)}")
            structures = [{"id": e["id"], "version": e.get("version")} for e in elements]
            if deployment_id is None:
                number = int(
                    self._text("SELECT value FROM meta WHERE key = 'next_deployment'") or 1
                )
                self._conn.execute(
                    "INSERT OR REPLACE INTO meta (key, value) VALUES ('next_deployment', ?)",
                    (str(number + 1),),
                )
                deployment_id = f"deploy-{number:04d}"
        commit = hashlib.sha1(dumps([deployment_id, structures]).encode()).hexdigest()
        return {
            "deploymentId": deployment_id,
            "systemName": systems[0],
            "commit": commit,
            "structures": structures,
        }
