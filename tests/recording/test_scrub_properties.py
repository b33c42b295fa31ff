"""The scrubber's fast scans and its cutting of a stream never let a secret through
(hypothesis).

The scrubber looks for escapes, a few *cores* (pieces of its secrets) and long base64
runs before it decodes anything, and cuts a stream only between runs of the bytes an
encoded secret is made of; these properties say those shortcuts decide exactly: in any
chunking, small chunks or large ones (scanned by byte groups), the stream writes what
a whole scrub writes, and the secret's spellings (made here, by the tests' own
encoders) are gone.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scrub_feeding import fed_into
from web_spellings import base64_text, html_decimal, json_escaped, percent

from mddframes.recording.scrub import GROUPED_FROM, Scrubber, byte_groups


def fed(scrubber: Scrubber, body: bytes, cuts: list[int]) -> bytes:
    stream, pieces, position = scrubber.stream(), [], 0
    for cut in cuts:
        pieces.append(stream.feed(body[position : position + cut]))
        position += cut
    pieces.append(stream.feed(body[position:]))
    pieces.append(stream.finish())
    return b"".join(pieces)


def spellings(secret: str) -> list[str]:
    return [
        secret,
        percent(secret),
        percent(secret, 0b0101, lower=True),
        json_escaped(secret, 0x55555),
        html_decimal(secret),
        base64_text(secret),
        base64_text(secret, urlsafe=True, padded=False, before=b"x"),
    ]


# any printable text (an HTML reader drops control characters: no spelling holds them)
SECRETS = st.text(
    alphabet=st.characters(min_codepoint=33, max_codepoint=0x2FF, blacklist_categories=("Cc",)),
    min_size=8,
    max_size=40,
)

# runs once, on the newest pandas: checks the service's wire, not pandas (tests/pandas_ends.py)
pytestmark = pytest.mark.pandas_free

FILLER = st.binary(max_size=300)


@settings(max_examples=200, deadline=None)
@given(
    secret=SECRETS,
    token=SECRETS,
    spelling=st.integers(min_value=0),
    before=FILLER,
    after=FILLER,
    cuts=st.lists(st.integers(min_value=1, max_value=400), max_size=12),
)
def test_no_spelling_of_a_secret_survives_scrubbing_in_any_chunking(
    secret: str, token: str, spelling: int, before: bytes, after: bytes, cuts: list[int]
) -> None:
    scrubber = Scrubber(secret, "client-id", "tenant.example:443")
    scrubber.add("token", token)
    forms = spellings(secret) + spellings(token)
    echoed = forms[spelling % len(forms)].encode()
    body = before + b" " + echoed + b" " + after

    assert echoed not in scrubber.bytes(body)
    assert echoed not in fed(scrubber, body, cuts)
    # the copy-free path writes exactly what feed returns, in any chunking
    assert fed_into(scrubber, body, cuts) == fed(scrubber, body, cuts)


def test_a_secret_straddling_held_back_bytes_and_a_large_chunk_is_found() -> None:
    secret = "s3cr3t-value-0123456789"
    scrubber = Scrubber(secret, "client-id", "tenant.example:443")
    for spelled in spellings(secret):
        body = b"x" * 10 + spelled.encode() + b"y" * 5000
        for cut in range(11, 10 + len(spelled)):  # every cut inside the secret
            assert spelled.encode() not in fed_into(scrubber, body, [cut]), (spelled, cut)


@settings(max_examples=60, deadline=None)
@given(
    secret=SECRETS,
    spelling=st.integers(min_value=0),
    filler=st.binary(min_size=1, max_size=40),
    tail=st.binary(max_size=80),
    at=st.floats(min_value=0.0, max_value=1.0),
    cuts=st.lists(st.integers(min_value=GROUPED_FROM, max_value=3 * GROUPED_FROM), max_size=3),
)
def test_a_large_body_scanned_by_byte_groups_loses_no_secret(
    secret: str, spelling: int, filler: bytes, tail: bytes, at: float, cuts: list[int]
) -> None:
    # chunks past GROUPED_FROM: the stream tests a byte of each group before its cores,
    # the groups chosen from the first chunk's start, which the rest need not resemble
    scrubber = Scrubber(secret, "client-id", "tenant.example:443")
    forms = spellings(secret)
    echoed = forms[spelling % len(forms)].encode()
    plain = filler * (4 * GROUPED_FROM // len(filler)) + tail
    where = int(at * len(plain))
    body = plain[:where] + b"\n" + echoed + b"\n" + plain[where:]

    written = fed_into(scrubber, body, cuts)
    assert written == fed(scrubber, body, cuts)
    assert echoed not in written


@settings(max_examples=200, deadline=None)
@given(
    cores=st.lists(st.binary(min_size=1, max_size=10), max_size=8),
    sample=st.binary(max_size=200),
)
def test_byte_groups_hold_every_core_once_under_a_byte_it_holds(
    cores: list[bytes], sample: bytes
) -> None:
    groups = byte_groups(cores, sample)
    assert sorted(core for _, members in groups for core in members) == sorted(cores)
    assert all(byte in core for byte, members in groups for core in members)
