"""A recorded text answer's spool gives back exactly what was written (hypothesis):
kept in memory, or escaped into its file as it arrives and copied out escaped or
unescaped again (to be scrubbed once more), in any cutting of the body into pieces."""

from __future__ import annotations

import io
import tempfile

import orjson
from hypothesis import given, settings
from hypothesis import strategies as st

from mddframes.recording.recorder import _copy_text
from mddframes.recording.scrub import Scrubber
from mddframes.recording.spool import TextSpool, escaped, unescaped

# text with every kind of character JSON escapes (quotes, backslashes, controls) and
# multi-byte ones a cut can split
TEXT = st.text(
    alphabet=st.sampled_from(['"', "\\", "/", "\n", "\x00", "\x1f", "a", "u", "0", "é", "€", "😀"]),
    max_size=200,
)
CUTS = st.lists(st.integers(min_value=1, max_value=40), max_size=20)


def _pieces(data: bytes, cuts: list[int]) -> list[bytes]:
    pieces, position = [], 0
    for cut in cuts:
        pieces.append(data[position : position + cut])
        position += cut
    pieces.append(data[position:])
    return pieces


@settings(max_examples=300, deadline=None)
@given(text=TEXT, cuts=CUTS, in_memory=st.integers(min_value=0, max_value=120), again=CUTS)
def test_a_spool_gives_back_its_body_escaped_or_not(
    text: str, cuts: list[int], in_memory: int, again: list[int]
) -> None:
    body = text.encode("utf-8")
    spool = TextSpool(tempfile.gettempdir(), in_memory=in_memory)
    try:
        for piece in _pieces(body, cuts):
            spool.write(piece)
        spool.finish()
        assert spool.escaped == (len(body) > in_memory)
        assert spool.raw() == body
        if spool.escaped:
            out = io.BytesIO()
            spool.copy_escaped(out)
            # the file holds the JSON string's inside: a JSON reader gives the text back
            assert orjson.loads(b'"' + out.getvalue() + b'"') == text
            assert out.getvalue() == escaped(body)
            # and unescaping it in any other cutting gives the bytes back
            assert b"".join(unescaped(_pieces(out.getvalue(), again))) == body
    finally:
        spool.close()


def test_a_character_cut_at_the_end_of_a_large_body_becomes_a_replacement() -> None:
    spool = TextSpool(tempfile.gettempdir(), in_memory=2)
    spool.write(b'ab"c')
    spool.write("é".encode()[:1])  # the answer ended mid-character
    spool.finish()
    out = io.BytesIO()
    spool.copy_escaped(out)
    spool.close()
    assert orjson.loads(b'"' + out.getvalue() + b'"') == 'ab"c\ufffd'


@settings(max_examples=100, deadline=None)
@given(before=TEXT, after=TEXT, cuts=CUTS)
def test_a_large_body_is_scrubbed_again_for_a_secret_learned_after_it_was_spooled(
    before: str, after: str, cuts: list[int]
) -> None:
    token = 'tok-"late"\\-0123456789'
    body = (before + token + after).encode("utf-8")
    scrubber = Scrubber("client-secret-value", "client-id", "tenant.example:443")
    spool = TextSpool(tempfile.gettempdir(), in_memory=8)
    try:
        for piece in _pieces(body, cuts):
            spool.write(piece)  # (spooled before the token is known: kept as it came)
        spool.finish()
        scrubber.add("token", token)
        out = io.BytesIO()
        _copy_text(spool.raw_pieces(), out, scrubber)
    finally:
        spool.close()
    text = orjson.loads(b'"' + out.getvalue() + b'"')
    assert token not in text
    assert text.encode("utf-8") == scrubber.bytes(body)
