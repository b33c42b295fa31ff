"""Recordings of sessions: record (scrubbed HAR 1.2), read, replay, learn a dialect.

- :mod:`~mddframes.recording.scrub`: what a recording must never hold, taken out;
- :mod:`~mddframes.recording.redact`: ``--redact-values`` placeholders;
- :mod:`~mddframes.recording.recorder`: the recorder the HTTP session sends through;
- :mod:`~mddframes.recording.active`: ``Client.recording`` and ``mddframes record``.
"""

from mddframes.recording.active import recording, recording_all
from mddframes.recording.recorder import Recorder

__all__ = ["Recorder", "recording", "recording_all"]
