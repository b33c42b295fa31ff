"""Doctor checks of the answers' shapes: one read of each kind (rows 11-18).

Each check reads one answer through the raw layer (which already follows pages and
renames snake_case, recording that it did), compares its envelope and field names with
the assumption of its wire-format row, and builds the frame the loader would build from
it: a loader that fails on the answer is a ``breaks``, a shape it tolerates a
``differs`` with what mddframes does about it.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from mddframes.codec.frame import from_payload
from mddframes.doctor import etags
from mddframes.doctor.findings import Finding
from mddframes.errors import MddError
from mddframes.frames import listing, structures, table, tree
from mddframes.frames.shaping import unwrap_list
from mddframes.wire.profile import CHILDREN_KEYS, FIELDS
from mddframes.wire.spelling import TO_SNAKE, all_keys, to_camel

if TYPE_CHECKING:
    from mddframes.api import Api


@dataclass(frozen=True)
class Shape:
    """The assumed shape of one kind of answer.

    Attributes
    ----------
    check, row, operation : str
        The report's name of the check, its wire-format row, the operation read.
    fields : frozenset of str
        The fields every entry (or the object) is assumed to carry.
    optional : frozenset of str
        Fields assumed to appear on some entries only.
    listed : bool
        Whether the answer is a list of entries (else one object).
    """

    check: str
    row: str
    operation: str
    fields: frozenset[str]
    optional: frozenset[str] = frozenset()
    listed: bool = False


def _shape(check: str, row: str, operation: str, listed: bool = False) -> Shape:
    fields, optional = FIELDS[operation]  # the wire profile's assumption of the answer
    return Shape(check, row, operation, frozenset(fields.split()), frozenset(optional.split()),
                 listed)  # fmt: skip


TREE = _shape("tree", "11", "getTree", listed=True)
ELEMENT = _shape("element", "12", "getStructure")
RAW_DATA = _shape("raw data", "13", "getRawData")
OBJECT_TYPES = _shape("object types", "14", "getObjectTypes", listed=True)
TABLE = _shape("table", "15", "getTable")
MAPPING = _shape("mapping", "17", "getMapping")
PACKAGES = _shape("packages", "18", "listDeploymentPackages", listed=True)

_ACTIONS = {
    "paged": "every page is read with the page/size parameters (at most 10,000 pages, "
    "the announced total checked; a list it cannot read whole is an error, never shorter)",
    "snake": "the raw layer renames the known snake_case names to camelCase: the frames "
    "are the same",
    "snake kept": "the document is kept as served and written back in its own spelling; "
    "the codec reads data_type/primary_key as well",
    "nested": "the tree loader flattens the child lists (pre-order) and gives each "
    "element its parent's id",
    "envelope": "the loader unwraps the list",
    "missing": "the frame lacks those columns",
}


def observe(api: Api, operation: str, call: Callable[[], Any]) -> tuple[Any, dict[str, Any]]:
    """Call ``call`` and say how the raw layer found ``operation``'s answer."""
    api.paged.pop(operation, None)
    api.snake_case_answers.discard(operation)
    value = call()
    return value, {
        "paged": api.paged.get(operation),
        "snake": operation in api.snake_case_answers,
    }


def check_shape(
    shape: Shape, value: Any, seen: Mapping[str, Any], build: Callable[[Any], Any]
) -> Finding:
    """Compare one answer with ``shape`` and build its frame with ``build``."""
    notes: list[str] = []
    actions: list[str] = []
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            build(value)
    except MddError as exc:
        return Finding(shape.check, shape.row, "breaks", f"the loader fails: {exc}",
                       "report the answer's shape; mddframes cannot read it")  # fmt: skip
    entries, envelope = _entries(shape, value)
    nested = _children_key(entries) if shape is TREE else None
    if nested:
        entries = _flattened(entries, nested)
    keys = _keys(shape, entries)
    if seen.get("paged") is not None:
        notes.append(f"a Spring Data page: {seen['paged']} entries read from all its pages")
        actions.append(_ACTIONS["paged"])
    if envelope:
        notes.append(f"the list comes under the key {envelope!r}")
        actions.append(_ACTIONS["envelope"])
    if seen.get("snake"):
        spelled = sorted(TO_SNAKE[k] for k in all_keys(to_camel(entries)) if k in TO_SNAKE)
        notes.append("field names in snake_case (" + ", ".join(spelled[:5]) + ")")
        kept = shape in (TABLE, MAPPING)
        actions.append(_ACTIONS["snake kept" if kept else "snake"])
    if nested:
        notes.append(f"the tree comes as nested {nested} lists without parent ids")
        actions.append(_ACTIONS["nested"])
    missing = sorted(shape.fields - keys - ({"parentId"} if nested else set()))
    if missing:
        notes.append("missing fields: " + ", ".join(missing))
        actions.append(_ACTIONS["missing"])
    extra = sorted(keys - shape.fields - shape.optional - {nested})
    also = f"; other fields (kept as columns): {', '.join(extra)}" if extra else ""
    if caught:  # about the data, not the wire (orphans in a tree, say): shown, not judged
        also += "; the loader warns: " + "; ".join(str(w.message) for w in caught[:2])
    if not notes:
        what = f"{len(entries)} entries" if shape.listed else "one object"
        return Finding(shape.check, shape.row, "ok",
                       f"{what} as assumed ({', '.join(sorted(shape.fields))}){also}")  # fmt: skip
    return Finding(shape.check, shape.row, "differs", "; ".join(notes) + also, "; ".join(actions))


def _entries(shape: Shape, value: Any) -> tuple[list[Mapping[str, Any]], str | None]:
    if not shape.listed:
        return ([value] if isinstance(value, Mapping) else []), None
    envelope = None
    if isinstance(value, Mapping):
        envelope = next((k for k, v in value.items() if isinstance(v, list)), None)
    entries = unwrap_list(value, what=shape.check)
    return [e for e in entries if isinstance(e, Mapping)], envelope


def _children_key(entries: list[Mapping[str, Any]]) -> str | None:
    """The key a nested tree holds its child lists under (the profile's spellings)."""
    for key in CHILDREN_KEYS:
        if any(isinstance(e.get(key), list) for e in entries):
            return key
    return None


def _flattened(entries: list[Mapping[str, Any]], key: str) -> list[Mapping[str, Any]]:
    flat, stack = [], list(entries)
    while stack:
        entry = stack.pop()
        flat.append(entry)
        stack.extend(c for c in entry.get(key) or [] if isinstance(c, Mapping))
    return flat


def _keys(shape: Shape, entries: list[Mapping[str, Any]]) -> set[str]:
    keys: set[str] = set()
    for entry in entries:
        # tables and mappings are kept as served: compared in camelCase all the same
        keys.update(to_camel(dict(entry)) if shape in (TABLE, MAPPING) else entry)
    return keys


def read_checks(api: Api, system: str | None) -> list[Finding]:
    """The read of each kind: tree, element, raw data, table, mapping, packages; then
    the ETags of the table and the mapping (:mod:`.etags`)."""
    later = (ELEMENT, RAW_DATA, TABLE, MAPPING, PACKAGES)
    if not system:
        why = "no system given (mddframes doctor SYSTEM, or Client.doctor(system=...))"
        return [Finding(s.check, s.row, "unknown", why, "") for s in (TREE, *later)] + [
            Finding(etags.CHECK, etags.ROW, "unknown", why)
        ]
    found: list[Finding] = []
    try:
        value, seen = observe(api, TREE.operation, lambda: api.get_tree(system))
    except MddError as exc:
        broken = Finding(TREE.check, TREE.row, "breaks", f"the tree of {system!r}: {exc}",
                         "check the system name")  # fmt: skip
        unread = [(s.check, s.row, "an element") for s in later]
        unread.append((etags.CHECK, etags.ROW, "a table"))
        return [broken] + [
            Finding(check, row, "unknown", f"no tree to pick {what} from")
            for check, row, what in unread
        ]
    found.append(check_shape(TREE, value, seen, lambda v: tree.tree_frame(v)))
    ids = _picked_ids(value)
    found.append(_read(api, ELEMENT, ids.get("element"), api.get_structure,
                       structures.structure_record))  # fmt: skip
    found.append(_read(api, RAW_DATA, ids.get("element"), api.get_raw_data,
                       listing.raw_data_frame))  # fmt: skip
    found.append(_read(api, TABLE, ids.get("table"), api.get_table, _table_frames))
    found.append(_read(api, MAPPING, ids.get("mapping"), api.get_mapping,
                       lambda v: from_payload(v, "mapping")))  # fmt: skip
    try:
        value, seen = observe(api, PACKAGES.operation,
                              lambda: api.list_deployment_packages(system))  # fmt: skip
    except MddError as exc:
        found.append(Finding(PACKAGES.check, PACKAGES.row, "breaks", str(exc), ""))
    else:
        found.append(check_shape(PACKAGES, value, seen, listing.packages_frame))
    found.append(etags.check_etags(api, ids))
    return found


def _table_frames(value: Any) -> None:
    from_payload(value, "table")
    table.columns_frame(value)


def _picked_ids(value: Any) -> dict[str, str]:
    """An element (one owning a table, if any), a table and a mapping of the tree."""
    try:
        frame = tree.tree_frame(value)
    except MddError:
        return {}
    picked: dict[str, str] = {}
    for column, name in (("table_id", "table"), ("mapping_id", "mapping")):
        if column in frame.columns and frame[column].notna().any():
            picked[name] = str(frame[column].dropna().iloc[0])
    if "table_id" in frame.columns and frame["table_id"].notna().any():
        picked["element"] = str(frame.loc[frame["table_id"].notna(), "id"].iloc[0])
    elif len(frame):
        picked["element"] = str(frame["id"].iloc[0])
    return picked


def _read(
    api: Api,
    shape: Shape,
    object_id: str | None,
    get: Callable[[str], Any],
    build: Callable[[Any], Any],
) -> Finding:
    if object_id is None:
        return Finding(shape.check, shape.row, "unknown",
                       f"the tree names no {shape.check} to read", "")  # fmt: skip
    try:
        value, seen = observe(api, shape.operation, lambda: get(object_id))
    except MddError as exc:
        return Finding(shape.check, shape.row, "breaks", f"{shape.check} {object_id!r}: {exc}",
                       "report the failing read")  # fmt: skip
    return check_shape(shape, value, seen, build)


def object_types_check(api: Api, value: Any, seen: Mapping[str, Any]) -> Finding:
    """The object types, read already by the API prefix check."""
    return check_shape(OBJECT_TYPES, value, seen, listing.object_types_frame)
