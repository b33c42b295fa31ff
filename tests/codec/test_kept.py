"""A document kept compressed (codec/kept.py): every chunking gives back its bytes and
their SHA-256, in the pieces asked for."""

from __future__ import annotations

import hashlib
import zlib

from hypothesis import given, settings
from hypothesis import strategies as st

from mddframes.codec import kept as kept_module
from mddframes.codec.kept import Keeper, keep_chunks, keep_whole

#: Pieces this small (the module's are 1 MiB): a few hundred bytes make several.
SMALL_PIECES = 64


@settings(max_examples=150)
@given(
    document=st.binary(max_size=2_000),
    cuts=st.lists(st.integers(min_value=0, max_value=2_000), max_size=12),
    as_views=st.booleans(),
    size=st.integers(min_value=1, max_value=300),
)
def test_any_chunking_keeps_the_bytes_and_their_digest(document, cuts, as_views, size):
    bounds = sorted({0, len(document), *(c for c in cuts if c <= len(document))})
    chunks = [document[a:b] for a, b in zip(bounds, bounds[1:], strict=False)]
    chunks.insert(len(chunks) // 2, b"")  # an empty chunk anywhere changes nothing
    piece_bytes = kept_module.PIECE_BYTES
    kept_module.PIECE_BYTES = SMALL_PIECES  # (restored below: hypothesis runs in one test)
    try:
        keeper = Keeper()
        for chunk in chunks:
            keeper.add(memoryview(bytearray(chunk)) if as_views else chunk)
        kept = keeper.finish()
    finally:
        kept_module.PIECE_BYTES = piece_bytes
    assert kept.content() == document
    assert kept.size == len(document)
    assert kept.sha256 == hashlib.sha256(document).hexdigest()
    pieces = list(kept.chunks(size))
    assert b"".join(pieces) == document
    assert all(0 < len(piece) <= size for piece in pieces)
    # no piece compressed holds more than its share: one is decompressed at a time
    assert all(n <= SMALL_PIECES for n in kept.piece_sizes)
    assert sum(kept.piece_sizes) == len(document)


def test_a_document_is_kept_a_fifth_of_its_size_or_less():
    text = (
        b'{"data": [' + b",".join(b'{"n": %d, "s": "%08d"}' % (i, i) for i in range(60_000)) + b"]}"
    )
    kept = keep_chunks([text])
    assert kept.compressed_size < len(text) / 5
    assert kept.content() == text


def test_a_pyarrow_without_zstd_keeps_with_zlib(monkeypatch):
    monkeypatch.setattr(kept_module, "_codec", kept_module._zlib_codec)
    text = b'{"data": [' + b",".join(b'{"n": %d}' % i for i in range(200_000)) + b"]}"
    kept = keep_chunks([text[:100], text[100:]])
    assert len(kept.compressed) == -(-len(text) // kept_module.PIECE_BYTES) > 1
    assert all(zlib.decompress(piece) for piece in kept.compressed)
    assert kept.content() == text and kept.compressed_size < len(text) / 5


def test_a_small_document_is_kept_whole():
    kept = keep_whole(b'{"a": 1}')
    assert kept.whole == b'{"a": 1}' and kept.compressed == ()
    assert list(kept.chunks(3)) == [b'{"a', b'": ', b"1}"]
    assert kept.compressed_size == 8 and "compressed" not in repr(kept)
