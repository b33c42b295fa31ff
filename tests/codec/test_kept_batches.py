"""keep_batches keeps a document one member per batch, reusing the members it may."""

from __future__ import annotations

import hashlib
import json
import zlib

import pytest

from mddframes.codec.kept_batches import BatchPlan, batches_of, keep_batches
from mddframes.codec.stream import KeptJson, load_document


def document(batches: list[list[dict]]) -> tuple[bytes, BatchPlan]:
    """A table document of these batches of rows, and its plan (nothing reused)."""
    head, tail = b'{"id": "t", "data": [', b'], "after": 1}'
    pieces = [json.dumps(rows)[1:-1].encode() for rows in batches]
    plan = BatchPlan(head_size=len(head))
    for piece, rows in zip(pieces, batches, strict=True):
        plan.add(len(piece), len(rows), None)
    return head + b",".join(pieces) + tail, plan


BATCHES = [[{"n": i, "s": f"é{i}"} for i in range(k, k + 50)] for k in range(0, 500, 50)]


def test_a_document_kept_in_batches_gives_back_its_bytes_and_its_batches():
    body, plan = document(BATCHES)
    kept = keep_batches(body, plan)
    assert kept.content() == body and b"".join(kept.chunks(size=64)) == body
    assert kept.sha256 == hashlib.sha256(body).hexdigest() and kept.size == len(body)
    assert kept.batch_rows == (50,) * 10 and len(kept.members) == 12
    head, batches, tail = batches_of(kept)
    assert head == body[: plan.head_size] and tail == b'], "after": 1}'
    for (raw, member, count), rows in zip(batches, BATCHES, strict=True):
        assert json.loads(b"[" + raw + b"]") == rows and count == 50
        assert zlib.decompress(member) in (raw, b"," + raw)
    assert load_document(kept) == json.loads(body)


def test_the_members_of_batches_kept_as_they_were_are_reused_not_compressed_again():
    body, plan = document(BATCHES)
    before = keep_batches(body, plan)
    edited = [*BATCHES[:3], [{**BATCHES[3][0], "n": -1}, *BATCHES[3][1:]], *BATCHES[4:]]
    new_body, new_plan = document(edited)
    new_plan.head, new_plan.tail = before.members[0], before.members[-1]
    new_plan.reused = [None if i == 3 else m for i, m in enumerate(before.members[1:-1])]
    after = keep_batches(new_body, new_plan)
    assert after.content() == new_body
    assert [a is b for a, b in zip(before.members, after.members, strict=True)] == [
        True, True, True, True, False, *[True] * 7]  # fmt: skip


def test_a_document_kept_as_one_stream_has_no_batches():
    kept = KeptJson((zlib.compress(b'{"data": []}'),), 12, "x")
    with pytest.raises(ValueError, match="one member per batch"):
        batches_of(kept)
