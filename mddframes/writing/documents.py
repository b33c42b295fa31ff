"""What the service holds and what a write sends: the write engine's two document strategies.

A write reads the object once (:func:`fetch`, a :class:`Held`) and builds its new
document one of two ways, behind one small protocol (:class:`NewDocument`):

- :class:`ParsedDocument`: the whole payload as parsed JSON (mappings, small tables,
  restores, and every edit the streamed strategy does not cover);
- :class:`EncodedDocument`: the bytes of a large table's new document, made from the
  bytes it was read as, overlaid batch by batch
  (:func:`~mddframes.codec.streamed_overlay.overlay_document`): untouched batches are sent
  as they were received, and the table is never held parsed.

Each strategy says what the PUT sends, how the read-back is verified, and what the
:class:`~mddframes.writing.result.WriteResult` keeps as its payload. The engine
(:mod:`mddframes.writing.engine`) runs the steps around them once.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Collection, Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Protocol

from mddframes.api_bodies import json_object, require_document
from mddframes.codec.diff import Diff, diff_payloads
from mddframes.codec.frame import payload_rows
from mddframes.codec.kept import Keeper, KeptJson, keep_chunks, keep_whole
from mddframes.codec.kinds import Kind
from mddframes.codec.read_route import STREAM_THRESHOLD
from mddframes.codec.row_layout import RowLayout
from mddframes.codec.stream import (
    byte_chunks,
    content_digest,
    load_document,
    same_document,
)
from mddframes.codec.streamed_overlay import RowBatches
from mddframes.codec.values import same_json
from mddframes.http.decoding import decode_json_content
from mddframes.http.session import EncodedJson

if TYPE_CHECKING:
    from mddframes.api import Api


@dataclass
class Held:
    """What the service holds for one object, as one GET received it.

    A table is kept as received: its bytes compressed (:attr:`kept`) or, while the
    engine has yet to decide whether the kept document of a streamed read is the same
    (equal SHA-256), as the raw chunks (:attr:`sha256` is known either way). It is
    parsed only when asked, once. A mapping is read parsed.
    """

    kind: Kind
    object_id: str
    sha256: str | None = None
    etag: str | None = None
    _kept: KeptJson | None = None
    _raw: list[bytes] | None = None
    _source: tuple[Any, str, int, str | None] | None = None
    _document: dict[str, Any] | None = field(default=None, repr=False)
    #: the bytes are exactly those the write sent (:func:`fetch`'s ``expected``)
    sent: bool = False

    @classmethod
    def of_kept(cls, kind: Kind, object_id: str, kept: KeptJson, etag: str | None) -> Held:
        """What the service holds, known to be the bytes of ``kept`` (equal SHA-256)."""
        return cls(kind, object_id, kept.sha256, etag, _kept=kept)

    @property
    def kept(self) -> KeptJson | None:
        """A table's bytes as received, compressed when large (None for a mapping).

        A document of at most :data:`~mddframes.codec.read_route.STREAM_THRESHOLD` bytes
        is kept as it is, as a read keeps it (:func:`~mddframes.codec.kept.keep_whole`).
        """
        if self._kept is None and self._raw is not None:
            size = sum(len(chunk) for chunk in self._raw)
            small = size <= STREAM_THRESHOLD
            self._kept = keep_whole(b"".join(self._raw)) if small else keep_chunks(self._raw)
            self._raw = None
        return self._kept

    def document(self) -> dict[str, Any]:
        """The document parsed, once, with the errors any read of it would raise."""
        if self._document is None:
            if self._source is not None:
                entry, url, status, content_type = self._source
                content = b"".join(self._raw) if self._raw is not None else self._kept_content()
                decoded = decode_json_content(entry, url, content, status=status,
                                              content_type=content_type)  # fmt: skip
                self._document = json_object(decoded, entry.operation, url)
            else:
                assert self._kept is not None
                self._document = load_document(self._kept, self.kind)
        return self._document

    def _kept_content(self) -> bytes:
        kept = self.kept
        assert kept is not None  # a table's Held keeps its bytes one way or the other
        return kept.content()


def fetch(
    api: Api,
    kind: Kind,
    object_id: str,
    *,
    raw: bool = False,
    expected: Sequence[bytes] | None = None,
) -> Held:
    """Read what the service holds for one object (one GET).

    A table is fetched as bytes: compressed as they arrive, or kept as received and only
    hashed (:attr:`Held.kept` keeps them if asked). Kept as received: with ``raw`` (the
    caller expects them to equal a document it holds already, and to be dropped), and
    when the answer announces at most
    :data:`~mddframes.codec.read_route.STREAM_THRESHOLD` bytes (a small table is kept as
    it is, as a read keeps it).

    With ``expected`` (the bytes a write sent, in pieces), the chunks are compressed and
    compared with those bytes as they arrive (:attr:`Held.sent` says whether they are
    exactly those bytes): the compression runs while the service sends the next chunks,
    and a read-back that is what was sent is the next write's kept document as it is.
    """
    if kind == "mapping":
        tagged = api.get_mapping_with_etag(object_id)
        return Held(kind, object_id, etag=tagged.etag, _document=tagged.document)
    with api.get_table_stream(object_id) as body:
        source = (body.entry, body.url, body.status, body.content_type)
        etag = body.etag
        if expected is not None:
            kept, sent = _compared(body.chunks(), expected)
            return Held(kind, object_id, kept.sha256, etag, _kept=kept, _source=source, sent=sent)
        if raw or (body.length is not None and body.length <= STREAM_THRESHOLD):
            digest = hashlib.sha256()
            chunks = []
            for chunk in body.chunks():
                digest.update(chunk)
                chunks.append(chunk)
            return Held(kind, object_id, digest.hexdigest(), etag, _raw=chunks, _source=source)
        kept = keep_chunks(body.chunks())
        return Held(kind, object_id, kept.sha256, etag, _kept=kept, _source=source)


def _compared(chunks: Iterable[bytes], expected: Sequence[bytes]) -> tuple[KeptJson, bool]:
    """``chunks`` kept compressed as they arrive, and whether they are exactly the bytes
    of ``expected`` (pieces, in order)."""
    keeper = Keeper()
    piece, at = 0, 0  # the next expected byte: expected[piece][at]
    equal = True
    for chunk in chunks:
        keeper.add(chunk)
        if equal:
            piece, at, equal = _advance(expected, piece, at, chunk)
    cut_short = sum(map(len, expected[piece:])) > at
    return keeper.finish(), equal and not cut_short


def _advance(expected: Sequence[bytes], piece: int, at: int, chunk: bytes) -> tuple[int, int, bool]:
    """Where the expected bytes continue after ``chunk``, and whether it matched them."""
    view = memoryview(chunk)
    done = 0
    while done < len(view):
        if piece == len(expected):
            return piece, at, False
        current = expected[piece]
        take = min(len(current) - at, len(view) - done)
        # a memcmp, no copy (comparing two memoryviews goes byte by byte: 20 times slower)
        if not current.startswith(view[done : done + take], at):
            return piece, at, False
        done, at = done + take, at + take
        if at == len(current):
            piece, at = piece + 1, 0
    return piece, at, True


def put(
    api: Api,
    kind: Kind,
    object_id: str,
    body: dict[str, Any] | EncodedJson,
    *,
    if_match: str | None = None,
) -> None:
    """Send a whole new document, with ``If-Match`` when the read carried an ETag.

    The answer (the whole object again) is dropped unread: the read-back that follows is
    what the write is checked against.
    """
    if kind == "table":
        api.put_table(object_id, body, answer=False, if_match=if_match)
    elif isinstance(body, dict):
        api.put_mapping(object_id, body, if_match=if_match)
    else:  # only a large table is sent as bytes: refused here as put_mapping refuses it
        require_document("put_mapping", "payload", body)


class NewDocument(Protocol):
    """The new document of a write, as one strategy holds it."""

    def body(self) -> dict[str, Any] | EncodedJson:
        """What the PUT sends."""
        ...

    def sent_bytes(self) -> Sequence[bytes] | None:
        """The bytes the PUT sends, when the strategy holds them (the read-back is then
        compared with them as it arrives, :func:`fetch`'s ``expected``)."""
        ...

    def as_held(self, readback: Held) -> Held:
        """What the service holds after a verified write (``readback`` held the same
        content), in the form cheapest to keep for the next write."""
        ...

    def mismatch(self, kind: Kind, readback: Held) -> Diff | None:
        """None when ``readback`` holds what was sent, else what differs."""
        ...

    def payload(self) -> dict[str, Any]:
        """The new document parsed (a journal keeps it)."""
        ...

    def result_payload(self, held: Held | None) -> dict[str, Any] | KeptJson:
        """The payload a :class:`~mddframes.writing.result.WriteResult` keeps, given what
        the service holds with the same content (the read-back), if known."""
        ...

    def rows_at(self, kind: Kind, positions: Collection[int]) -> dict[int, dict[str, Any]]:
        """The rows of the document at ``positions`` (parsing only what holds them)."""
        ...


@dataclass(frozen=True)
class ParsedDocument:
    """A new document held as parsed JSON (the whole-document strategy)."""

    document: dict[str, Any]

    def body(self) -> dict[str, Any]:
        return self.document

    def sent_bytes(self) -> None:
        return None

    def as_held(self, readback: Held) -> Held:
        return readback

    def payload(self) -> dict[str, Any]:
        return self.document

    def mismatch(self, kind: Kind, readback: Held) -> Diff | None:
        # a table's read-back is compared batch by batch, never parsed whole, when equal
        if readback.kept is not None and same_document(readback.kept, self.document, kind):
            return None
        actual = readback.document()
        if same_json(actual, self.document):
            return None
        return diff_payloads(self.document, actual, kind=kind)

    def result_payload(self, held: Held | None) -> dict[str, Any]:
        return self.document

    def rows_at(self, kind: Kind, positions: Collection[int]) -> dict[int, dict[str, Any]]:
        rows = payload_rows(self.document, kind)
        return {p: rows[p] for p in positions if 0 <= p < len(rows) and type(rows[p]) is dict}


@dataclass(frozen=True)
class EncodedDocument:
    """A large table's new document held as the bytes of its parts (the streamed
    strategy): sent, hashed and compressed piece by piece, never joined."""

    document: RowBatches
    #: where its batches lie: its kept copy carries it, for the next write to cut there
    layout: RowLayout | None = None
    _kept: list[KeptJson] = field(default_factory=list, init=False, repr=False)

    def body(self) -> EncodedJson:
        return EncodedJson(*self.document.pieces())

    def sent_bytes(self) -> tuple[bytes, ...]:
        return self.document.pieces()

    def kept(self) -> KeptJson:
        """The document kept compressed (once, when first asked for)."""
        if not self._kept:
            kept = keep_chunks(self._chunks())
            self._kept.append(kept if self.layout is None else replace(kept, layout=self.layout))
        return self._kept[0]

    def as_held(self, readback: Held) -> Held:
        if not readback.sent or readback.kept is None:  # the same content in other bytes
            return readback
        kept = replace(readback.kept, layout=self.layout)  # where its batches lie: as sent
        return Held.of_kept(readback.kind, readback.object_id, kept, readback.etag)

    def payload(self) -> dict[str, Any]:
        # exact, as the service reads it
        document: dict[str, Any] = json.loads(b"".join(self.document.pieces()))
        return document

    def mismatch(self, kind: Kind, readback: Held) -> Diff | None:
        if readback.sent:
            return None
        # other bytes: the same content, batch by batch, or the documents whole to tell
        kept = readback.kept
        assert kept is not None
        read = content_digest(kept.chunks(), kind)
        if read is not None and read == content_digest(self._chunks(), kind):
            return None
        expected, actual = load_document(self.kept(), kind), readback.document()
        if same_json(expected, actual):
            return None
        return diff_payloads(expected, actual, kind=kind)

    def result_payload(self, held: Held | None) -> KeptJson:
        # what the service holds, same content, already compressed: no second copy
        if held is not None and held.kept is not None:
            return held.kept
        return self.kept()

    def rows_at(self, kind: Kind, positions: Collection[int]) -> dict[int, dict[str, Any]]:
        found: dict[int, dict[str, Any]] = {}
        wanted = sorted(positions)
        start = 0
        for batch, count in zip(self.document.batches, self.document.batch_rows, strict=True):
            inside = [p for p in wanted if start <= p < start + count]
            if inside:
                rows = json.loads(b"[" + batch + b"]")
                found.update((p, rows[p - start]) for p in inside)
            start += count
        return found

    def _chunks(self) -> Iterator[memoryview]:
        for piece in self.document.pieces():
            yield from byte_chunks(piece)
