"""The scrubber's fast scans never let a secret through (hypothesis).

The scrubber searches a body for a few *cores* (pieces its secrets' spellings share)
before it runs its alternation of every spelling; these properties say that shortcut
decides exactly: whatever the secret, the spelling a service echoes it in, the text
around it and how the body is cut into chunks, no spelling of it reaches the output.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from mddframes.recording.scrub import Scrubber, _forms

SECRETS = st.text(min_size=6, max_size=40).filter(lambda s: s.strip() == s and "\x00" not in s)
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
    forms = sorted(_forms(secret, 1) | _forms(token))
    echoed = forms[spelling % len(forms)]
    body = before + echoed + after

    assert echoed not in scrubber.bytes(body)

    stream, pieces, position = scrubber.stream(), [], 0
    for cut in cuts:
        pieces.append(stream.feed(body[position : position + cut]))
        position += cut
    pieces.append(stream.feed(body[position:]))
    pieces.append(stream.finish())
    assert echoed not in b"".join(pieces)

    # the copy-free path writes exactly what feed returns, in any chunking
    into, written, position = scrubber.stream(), [], 0
    for cut in cuts:
        into.feed_into(body[position : position + cut], written.append)
        position += cut
    into.feed_into(body[position:], written.append)
    written.append(into.finish())
    assert b"".join(bytes(piece) for piece in written) == b"".join(pieces)


def test_a_secret_straddling_held_back_bytes_and_a_large_chunk_is_found() -> None:
    secret = "s3cr3t-value-0123456789"
    scrubber = Scrubber(secret, "client-id", "tenant.example:443")
    body = b"x" * 10 + secret.encode() + b"y" * 5000
    for cut in range(11, 10 + len(secret)):  # every cut inside the secret
        stream, written = scrubber.stream(), []
        stream.feed_into(body[:cut], written.append)
        stream.feed_into(body[cut:], written.append)
        written.append(stream.finish())
        assert secret.encode() not in b"".join(bytes(piece) for piece in written), cut
