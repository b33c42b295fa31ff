"""The write-back context: what a table or mapping held when it was read.

A read records a :class:`ReadContext` in two places (docs/internals.md, "Write-back
context"): in its Api's :class:`ContextRegistry` (``api.read_contexts``), keyed by
``(kind, id)`` (the latest read of each object; it survives concat, merge and astype,
which drop ``attrs``), and in ``frame.attrs["mddframes"]`` as a convenience.

The registry is bounded: it keeps the latest :data:`RECENT_CONTEXTS` reads alive, and
any older one only while something else (a frame's ``attrs``, a long frame's
:class:`ContextGroup`, a batch or an ``apply`` under way) still holds it, so a process
that reads thousands of tables and keeps no frame holds a few dozen contexts. A bound
never refuses a write a user could make: whatever reads many objects and then writes
them holds their contexts itself, and :func:`context_of` finds a frame's own context
first. The registry also remembers, in a fixed few kilobytes, which objects it has
recorded (:meth:`ContextRegistry.may_have_read`), so that a write without a context
says "not read through this client" only when that is so.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import hashlib
import logging
import threading
import weakref
from collections import OrderedDict
from collections.abc import Iterable, Iterator
from typing import Any, Literal, get_args

import pandas as pd

from mddframes.codec import depth
from mddframes.codec.fingerprint import FrameFingerprint
from mddframes.codec.kept import KeptJson, keep_chunks
from mddframes.codec.kinds import Kind
from mddframes.codec.read_route import Route
from mddframes.codec.stream import load_document
from mddframes.codec.values import digest
from mddframes.errors import renamed

#: The ``frame.attrs`` key holding the context of the read that made the frame.
ATTRS_KEY = "mddframes"

#: Reads a registry keeps alive whatever holds them: the latest ones (older reads stay
#: only while a frame's ``attrs`` or another owner holds their context).
RECENT_CONTEXTS = 32

#: Bits of the filter that remembers which objects a registry has recorded (64 KiB):
#: one false "may have read" in 30,000 after 10,000 objects, about 1 in 100 after 50,000.
_SEEN_BITS = 1 << 19
#: Bit positions set per object.
_SEEN_HASHES = 4

#: How a context's document was read: a route of
#: :func:`~mddframes.codec.read_route.choose_route`, or a write's read-back.
ReadRoute = Literal[Route, "readback"]
READ_ROUTES: frozenset[str] = frozenset(get_args(ReadRoute))

logger = logging.getLogger(__name__)


class ReadContext:
    """What one read of a table or mapping returned.

    Parameters
    ----------
    kind : {"table", "mapping"}
    object_id : str
        The table or mapping id.
    payload : dict, optional
        The payload as parsed JSON (small reads keep it as it is, beside ``kept``).
    read_at : datetime.datetime, optional
        When the read finished (UTC); default now.
    kept : KeptJson, optional
        The document as received, kept compressed with its SHA-256 (about a fifth of
        its size). Every context holds one: given only ``payload``, its JSON text is
        kept (a context made from a workbook or files, which have no service bytes).
        Large, streamed reads keep only this.
    fingerprint : FrameFingerprint, optional
        Of the frame the read made (a streamed read's): lets a write find the edited
        cells without comparing every column with the original.
    finite : bool, default False
        ``payload`` was decoded from JSON text that holds no NaN or infinity
        (:func:`~mddframes.codec.fastjson.surely_finite`): its :attr:`digest` is then
        taken the fast way (``digest(payload, finite=True)``, the same digest).
    route : ReadRoute, optional
        How the document was read (:func:`~mddframes.codec.read_route.choose_route`:
        ``"whole"``, ``"arrow"``, ``"splitter"``, ``"ijson"`` or ``"kept"``), or ``"readback"`` for
        a write's read-back; None when not read from the service here (a workbook,
        pulled files).


    Attributes
    ----------
    kind, object_id, read_at, route
        As given.
    streamed : bool
        True when the context keeps only the compressed document, not the payload.

    Notes
    -----
    Copies of a context are the context itself: pandas deep-copies ``attrs`` on many
    operations, and a copy of a large payload each time would cost memory for nothing.
    A context is immutable; it compares equal only to itself.
    """

    __slots__ = ("_kind", "_object_id", "_payload", "_kept", "_read_at", "_fingerprint", "_finite",
                 "_route", "_digest", "__weakref__")  # fmt: skip

    def __init__(
        self,
        kind: Kind,
        object_id: str,
        payload: dict[str, Any] | None = None,
        read_at: _dt.datetime | None = None,
        *,
        kept: KeptJson | None = None,
        fingerprint: FrameFingerprint | None = None,
        finite: bool = False,
        route: ReadRoute | None = None,
    ) -> None:
        if payload is None and kept is None:
            raise TypeError("ReadContext takes payload, kept, or both")
        if route is not None and route not in READ_ROUTES:
            raise ValueError(
                f"ReadContext of {kind} {object_id!r}: route {route!r} is not one of "
                f"{sorted(READ_ROUTES)}"
            )
        if kept is None:
            assert payload is not None
            text = depth.dumps(payload, what=f"{kind} {object_id!r}", ensure_ascii=False)
            kept = keep_chunks([text.encode("utf-8", "surrogatepass")])
        self._kind = kind
        self._object_id = object_id
        self._payload = payload
        self._kept: KeptJson = kept
        self._read_at = read_at if read_at is not None else _dt.datetime.now(_dt.UTC)
        self._fingerprint = fingerprint
        self._finite = finite and payload is not None
        self._route = route
        self._digest: list[str] = []

    @property
    def kind(self) -> Kind:
        return self._kind

    @property
    def object_id(self) -> str:
        return self._object_id

    @property
    def read_at(self) -> _dt.datetime:
        return self._read_at

    @property
    def route(self) -> ReadRoute | None:
        return self._route

    @property
    def streamed(self) -> bool:
        return self._payload is None

    @property
    def kept(self) -> KeptJson:
        """The document as received (or as its payload's JSON text), compressed, with
        its SHA-256 (``kept.sha256``)."""
        return self._kept

    @property
    def fingerprint(self) -> FrameFingerprint | None:
        """Where the frame of a streamed read may have been edited since (see
        :mod:`mddframes.codec.fingerprint`); None when it was not taken."""
        return self._fingerprint

    def load_document(self) -> dict[str, Any]:
        """The document as parsed JSON (a method: a streamed read's is parsed anew).

        A small read's payload as it was parsed (treat it as read-only: the writer
        overlays edits onto it and relies on it being what the service sent); a
        streamed read's kept document decompressed and parsed anew on each call (the
        time and memory of a whole parse: take it into a local once).

        Returns
        -------
        dict
        """
        if self._payload is not None:
            return self._payload
        payload: dict[str, Any] = load_document(self._kept, self._kind)  # JSON: Any
        return payload

    document = renamed(load_document, "document")

    @property
    def digest(self) -> str:
        """SHA-256 of the payload's canonical JSON (key order ignored), computed once.

        Equal for equal content and types, whatever the whitespace or key order of the
        document, so it compares with :func:`~mddframes.codec.values.digest` of what the
        service holds later. For a streamed read it is taken lazily from the kept
        document (one parse, on first use).
        """
        if not self._digest:
            self._digest.append(digest(self.load_document(), finite=self._finite))
        return self._digest[0]

    def __setattr__(self, name: str, value: Any) -> None:
        if hasattr(self, "_digest"):
            raise AttributeError(f"ReadContext is immutable (cannot set {name!r})")
        object.__setattr__(self, name, value)

    def __repr__(self) -> str:
        kept = f", kept={self._kept!r}" if self._payload is None else ""
        return (
            f"ReadContext(kind={self._kind!r}, object_id={self._object_id!r}, "
            f"read_at={self._read_at!r}{kept})"
        )

    def __reduce__(self) -> tuple[Any, ...]:
        # (a pickled frame carries its context in attrs)
        return (_rebuild_context, (self._kind, self._object_id, self._payload, self._read_at,
                                   self._kept, self._fingerprint, self._finite,
                                   self._route))  # fmt: skip

    def __copy__(self) -> ReadContext:
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> ReadContext:
        return self


def _rebuild_context(
    kind: Kind,
    object_id: str,
    payload: dict[str, Any] | None,
    read_at: _dt.datetime,
    kept: KeptJson | None,
    fingerprint: FrameFingerprint | None = None,
    finite: bool = False,
    route: ReadRoute | None = None,
) -> ReadContext:
    return ReadContext(kind, object_id, payload, read_at, kept=kept, fingerprint=fingerprint,
                       finite=finite, route=route)  # fmt: skip


class ContextRegistry:
    """The latest :class:`ReadContext` of each object read through one Api (thread-safe).

    Bounded: the :data:`RECENT_CONTEXTS` latest reads are held; an older read is held
    by a weak reference only, so it stays while a frame (its ``attrs``) or anything
    else keeps its context, and goes with the last of them.

    Parameters
    ----------
    recent : int, default RECENT_CONTEXTS
        How many of the latest reads are kept whatever holds them.
    """

    def __init__(self, recent: int = RECENT_CONTEXTS) -> None:
        self._lock = threading.Lock()
        self._recent = recent
        self._strong: OrderedDict[tuple[str, str], ReadContext] = OrderedDict()
        self._weak: weakref.WeakValueDictionary[tuple[str, str], ReadContext] = (
            weakref.WeakValueDictionary()
        )
        self._pins: list[dict[tuple[str, str], ReadContext]] = []
        # a Bloom filter of the keys recorded: fixed memory however many objects are
        # read, no false "never read" (a false "may have read" only softens a message)
        self._seen: bytearray | None = None

    @contextlib.contextmanager
    def pinned(self) -> Iterator[dict[tuple[str, str], ReadContext]]:
        """Hold every context recorded from now until the block ends.

        For a bulk read that gathers many reads into one frame: they must outlive the
        :data:`RECENT_CONTEXTS` bound until the frame holds them (:class:`ContextGroup`).
        The caller may take contexts out of the dict it is given as it hands them on.
        """
        pins: dict[tuple[str, str], ReadContext] = {}
        with self._lock:
            self._pins.append(pins)
        try:
            yield pins
        finally:
            with self._lock:
                self._pins.remove(pins)

    def record(self, context: ReadContext) -> None:
        """Remember ``context`` as the latest read of its object."""
        key = (context.kind, context.object_id)
        with self._lock:
            for pins in self._pins:
                pins[key] = context
            self._weak[key] = context
            self._mark_seen(key)
            self._strong[key] = context
            self._strong.move_to_end(key)
            while len(self._strong) > self._recent:
                self._strong.popitem(last=False)  # still found while a frame holds it

    def get(self, kind: Kind, object_id: str) -> ReadContext | None:
        """The latest read of an object, or None if it was never read through this Api
        (or its context was let go: neither recent nor held by a frame)."""
        with self._lock:
            return self._weak.get((kind, str(object_id)))

    def may_have_read(self, kind: Kind, object_id: str) -> bool:
        """False when the object was surely never recorded here; True when it was, or
        (rarely, see :data:`_SEEN_BITS`) when the filter cannot tell."""
        key = (kind, str(object_id))
        with self._lock:
            if key in self._weak:
                return True
            seen = self._seen
            return seen is not None and all(
                seen[bit >> 3] & (1 << (bit & 7)) for bit in _seen_bits(key)
            )

    def _mark_seen(self, key: tuple[str, str]) -> None:
        if self._seen is None:
            self._seen = bytearray(_SEEN_BITS // 8)
        for bit in _seen_bits(key):
            self._seen[bit >> 3] |= 1 << (bit & 7)

    def forget(self, kind: Kind, object_id: str) -> None:
        """Drop the context of one object (nothing happens if there is none)."""
        key = (kind, str(object_id))
        with self._lock:
            self._strong.pop(key, None)
            self._weak.pop(key, None)

    def forget_context(self, context: ReadContext) -> None:
        """Drop ``context`` if it is still its object's latest read (a later read stays)."""
        key = (context.kind, context.object_id)
        with self._lock:
            if self._weak.get(key) is context:
                self._strong.pop(key, None)
                del self._weak[key]

    def __len__(self) -> int:
        with self._lock:
            return len(self._weak)

    def __repr__(self) -> str:
        with self._lock:
            keys = [f"{kind} {object_id!r}" for kind, object_id in self._weak.keys()]
        return f"<ContextRegistry of {len(keys)} read(s): {', '.join(keys[:5])}>"


def _seen_bits(key: tuple[str, str]) -> list[int]:
    """The filter's bit positions of one key."""
    kind, object_id = key
    raw = hashlib.blake2b(
        f"{kind}\x00{object_id}".encode("utf-8", "surrogatepass"), digest_size=4 * _SEEN_HASHES
    ).digest()
    return [
        int.from_bytes(raw[4 * i : 4 * i + 4], "little") % _SEEN_BITS for i in range(_SEEN_HASHES)
    ]


class ContextGroup:
    """The contexts of the objects of one long frame (``read_tables``, a batch written,
    ``apply``), held by its ``attrs`` so that they live as long as the frame (copies are
    the group itself). Immutable: a write gives the frame a new group."""

    __slots__ = ("contexts", "_by_key")

    def __init__(self, contexts: Iterable[ReadContext]) -> None:
        self.contexts = tuple(contexts)
        self._by_key = {(c.kind, c.object_id): c for c in self.contexts}

    def get(self, kind: Kind, object_id: str) -> ReadContext | None:
        """The context of one object of the group, or None."""
        return self._by_key.get((kind, str(object_id)))

    def __copy__(self) -> ContextGroup:
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> ContextGroup:
        return self

    def __repr__(self) -> str:
        return f"<ContextGroup of {len(self.contexts)} read(s)>"


def registry_for(connection: Any) -> ContextRegistry:
    """The context registry of a connection: ``api.read_contexts``.

    A ``Client`` is accepted too and means its ``api``: the loaders record reads on the
    Api they are given, so a Client and its Api share one registry.
    """
    owner = getattr(connection, "api", connection)
    registry: ContextRegistry = owner.read_contexts
    return registry


def record_read(client: Any, frame: pd.DataFrame, context: ReadContext) -> None:
    """Record a read in the client's registry and in ``frame.attrs``."""
    logger.debug("%s %r read by the %s route", context.kind, context.object_id, context.route)
    registry_for(client).record(context)
    frame.attrs[ATTRS_KEY] = context


def context_of(
    client: Any, frame: pd.DataFrame | None, kind: Kind, object_id: str
) -> ReadContext | None:
    """The context a write of ``frame`` starts from.

    The frame's own ``attrs`` when they hold a context of the same object (a frame's
    :class:`ReadContext`, or the object's entry in a long frame's :class:`ContextGroup`:
    the read that made the frame, or its own last write), else the client's latest read
    of the object, else None.
    """
    if frame is not None:
        attached = frame.attrs.get(ATTRS_KEY)
        if isinstance(attached, ContextGroup):
            found = attached.get(kind, object_id)
            if found is not None:
                return found
        elif (
            isinstance(attached, ReadContext)
            and attached.kind == kind
            and attached.object_id == str(object_id)
        ):
            return attached
    return registry_for(client).get(kind, str(object_id))
