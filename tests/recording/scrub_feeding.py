"""Feeding a body to a scrubber's stream in pieces, as the recorder's tee does."""

from __future__ import annotations

from mddframes.recording.scrub import Scrubber


def fed_into(scrubber: Scrubber, body: bytes, cuts: list[int]) -> bytes:
    """What a stream writes of ``body`` fed to ``feed_into`` in pieces of ``cuts``."""
    stream, position = scrubber.stream(), 0
    written: list[bytes | memoryview] = []
    for cut in cuts:
        stream.feed_into(body[position : position + cut], written.append)
        position += cut
    stream.feed_into(body[position:], written.append)
    written.append(stream.finish())
    return b"".join(bytes(piece) for piece in written)
