"""The write-back context: what a table or mapping held when it was read.

A read records a :class:`ReadContext` in two places (docs/internals.md, "Write-back
context"): in the client's :class:`ContextRegistry`, keyed by ``(kind, id)`` (the
latest read of each object; it survives concat, merge and astype, which drop
``attrs``), and in ``frame.attrs["mddframes"]`` as a convenience.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import threading
from dataclasses import dataclass, field
from typing import Any, Literal

import pandas as pd

from mddframes.codec.values import canonical_json

Kind = Literal["table", "mapping"]

#: The ``frame.attrs`` key holding the context of the read that made the frame.
ATTRS_KEY = "mddframes"

_REGISTRY_ATTRIBUTE = "_mddframes_read_contexts"
_REGISTRY_LOCK = threading.Lock()


@dataclass(frozen=True, eq=False)
class ReadContext:
    """What one read of a table or mapping returned.

    Attributes
    ----------
    kind : {"table", "mapping"}
    object_id : str
        The table or mapping id.
    payload : dict
        The payload as parsed JSON. Treat it as read-only: the writer overlays edits
        onto it and relies on it being what the service sent.
    read_at : datetime.datetime
        When the read finished (UTC).

    Notes
    -----
    Copies of a context are the context itself: pandas deep-copies ``attrs`` on many
    operations, and a copy of a large payload each time would cost memory for nothing.
    """

    kind: Kind
    object_id: str
    payload: dict[str, Any] = field(repr=False)
    read_at: _dt.datetime = field(default_factory=lambda: _dt.datetime.now(_dt.UTC))
    _digest: list[str] = field(default_factory=list, repr=False)

    @property
    def digest(self) -> str:
        """SHA-256 of the payload's canonical JSON (key order ignored), computed once."""
        if not self._digest:
            self._digest.append(payload_digest(self.payload))
        return self._digest[0]

    def __copy__(self) -> ReadContext:
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> ReadContext:
        return self


def payload_digest(payload: Any) -> str:
    """SHA-256 (hex) of ``payload``'s canonical JSON: equal for equal content and types."""
    return hashlib.sha256(canonical_json(payload).encode("utf-8")).hexdigest()


class ContextRegistry:
    """The latest :class:`ReadContext` of each object read through one client (thread-safe)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._contexts: dict[tuple[str, str], ReadContext] = {}

    def record(self, context: ReadContext) -> None:
        """Remember ``context`` as the latest read of its object."""
        with self._lock:
            self._contexts[(context.kind, context.object_id)] = context

    def get(self, kind: Kind, object_id: str) -> ReadContext | None:
        """The latest read of an object, or None if it was never read through this client."""
        with self._lock:
            return self._contexts.get((kind, str(object_id)))

    def forget(self, kind: Kind, object_id: str) -> None:
        """Drop the context of one object (nothing happens if there is none)."""
        with self._lock:
            self._contexts.pop((kind, str(object_id)), None)

    def __len__(self) -> int:
        with self._lock:
            return len(self._contexts)

    def __repr__(self) -> str:
        with self._lock:
            keys = [f"{kind} {object_id!r}" for kind, object_id in self._contexts]
        return f"<ContextRegistry of {len(keys)} read(s): {', '.join(keys[:5])}>"


def registry_for(client: Any) -> ContextRegistry:
    """The context registry of a client, created on first use."""
    registry = getattr(client, _REGISTRY_ATTRIBUTE, None)
    if registry is None:
        with _REGISTRY_LOCK:
            registry = getattr(client, _REGISTRY_ATTRIBUTE, None)
            if registry is None:
                registry = ContextRegistry()
                setattr(client, _REGISTRY_ATTRIBUTE, registry)
    return registry


def record_read(client: Any, frame: pd.DataFrame, context: ReadContext) -> None:
    """Record a read in the client's registry and in ``frame.attrs``."""
    registry_for(client).record(context)
    frame.attrs[ATTRS_KEY] = context


def context_of(
    client: Any, frame: pd.DataFrame | None, kind: Kind, object_id: str
) -> ReadContext | None:
    """The context a write of ``frame`` starts from.

    The frame's own ``attrs`` when they hold a context of the same object, else the
    client's latest read of the object, else None.
    """
    if frame is not None:
        attached = frame.attrs.get(ATTRS_KEY)
        if (
            isinstance(attached, ReadContext)
            and attached.kind == kind
            and attached.object_id == str(object_id)
        ):
            return attached
    return registry_for(client).get(kind, str(object_id))
