"""Learning how a tenant speaks from a recording: its realm, prefix, spelling, paging,
tree shape and ETags, as a profile the client reads and a dialect the emulator serves.

:func:`learn` reads only the recording. What it finds maps to the settings of
:mod:`mddframes.config` (``realm``, ``api_prefix``) and to the emulator's built-in
dialects (:mod:`mddframes.emulator.dialects`); whatever maps to neither is one line in
:attr:`Learned.uncovered` naming the wire-format row (docs/wire-format.md), so the user
knows the recording is worth sending.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from mddframes.http.keys import TO_CAMEL
from mddframes.recording.har import Recording

__all__ = ["DEFAULT_PREFIX", "LITERAL_REALM", "Learned", "learn", "profile_text"]

DEFAULT_PREFIX = "/api/mdd-backend"
LITERAL_REALM = "tenat"
_LIST_OPERATIONS = ("getTree", "getObjectTypes", "listDeploymentPackages")
#: Each difference a built-in dialect serves, with its wire-format rows.
DIALECT_OF = {
    "literal-realm": "4",
    "unprefixed": "2",
    "snake-case": "11-24",
    "spring-page": "11, 14, 18",
    "nested-tree": "11",
    "etag": "29",
}


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
        found.differences["literal-realm"] = (
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
        found.differences["unprefixed"] = (
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
        snake.update(_snake_names(value))
        if call.operation in _LIST_OPERATIONS and isinstance(value, dict):
            if isinstance(value.get("content"), list) and "totalElements" in value:
                found.page_size = found.page_size or _int(value.get("size"))
                found.differences.setdefault(
                    "spring-page",
                    f"{call.operation} answered a Spring Data page "
                    f"(size {value.get('size')}, {value.get('totalElements')} entries)",
                )
            else:
                keys = ", ".join(sorted(k for k, v in value.items() if isinstance(v, list)))
                line = (
                    f"{call.operation} answered an object with the list under {keys or 'no key'}"
                    " (not a Spring Data page): no dialect serves that envelope "
                    "(wire-format rows 11, 14, 18)"
                )
                if line not in found.uncovered:
                    found.uncovered.append(line)
        if call.operation == "getTree":
            entries = value.get("content", value) if isinstance(value, dict) else value
            if isinstance(entries, list) and any(
                isinstance(e, dict) and isinstance(e.get("children"), list) for e in entries
            ):
                found.differences.setdefault(
                    "nested-tree", "the tree came as nested children lists"
                )
        if call.operation in ("getTable", "getMapping") and "etag" in call.headers:
            found.differences.setdefault(
                "etag", f"{call.operation} answered with an ETag ({call.headers['etag'][:20]})"
            )
    if snake:
        found.differences["snake-case"] = (
            "field names in snake_case (" + ", ".join(sorted(snake)[:5]) + ")"
        )


def _snake_names(value: Any) -> set[str]:
    names: set[str] = set()
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, list):
            stack.extend(item[:50])
        elif isinstance(item, dict):
            names.update(k for k in item if k in TO_CAMEL)
            stack.extend(v for k, v in item.items() if k not in ("data", "attributes"))
    return names


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def profile_text(learned: Learned, recording: Recording, name: str) -> str:
    """The TOML profile ``name`` holding what ``learned`` found (settings the client reads).

    ``realm`` and ``api_prefix`` are settings; the field spelling, paging, tree shape and
    ETags the client finds out by itself on every call, so they are written as comments
    (and the emulator reads the dialect from the recording: ``--dialect-from``).
    """
    stamp = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    lines = [
        f"# learned by mddframes doctor --recording {recording.name} on {stamp}",
        f"# dialect: {learned.dialect} (mddframes emulator --dialect-from {recording.name})",
    ]
    for dialect, evidence in learned.differences.items():
        lines.append(f"# differs ({dialect}, row {DIALECT_OF[dialect]}): {evidence}")
    for line in learned.uncovered:
        lines.append(f"# not covered: {line}")
    lines.append(f"[profiles.{_toml_key(name)}]")
    if learned.realm:
        lines.append(f"realm = {_toml_string(learned.realm)}")
    prefix = learned.served_prefix if learned.api_prefix == "" else learned.api_prefix
    if prefix is not None:
        lines.append(f"api_prefix = {_toml_string(prefix)}")
    return "\n".join(lines) + "\n"


def write_profile(
    learned: Learned, recording: Recording, path: str | os.PathLike[str], name: str
) -> Path:
    """Write :func:`profile_text` to ``path`` (owner-only; a profile file may hold a
    secret later)."""
    from mddframes.disk_modes import write_private

    return write_private(path, profile_text(learned, recording, name).encode("utf-8"))


def _toml_string(value: str) -> str:
    escaped = value.replace("\\", "\\\\").replace('"', '\\"')
    return f'"{escaped}"'


def _toml_key(name: str) -> str:
    plain = name.replace("-", "").replace("_", "").isalnum()
    return name if plain else _toml_string(name)
