"""Recordings of sessions, on the client's side: record (scrubbed HAR 1.2), doctor offline.

- :mod:`~mddframes.recording.scrub`: what a recording must never hold, taken out;
- :mod:`~mddframes.recording.redact`: ``--redact-values`` placeholders;
- :mod:`~mddframes.recording.recorder`: the recorder the HTTP session sends through;
- :mod:`~mddframes.recording.active`: ``Client.recording`` and ``mddframes record``;
- :mod:`~mddframes.recording.offline`: ``mddframes doctor --recording`` and profiles.

Reading a recording, learning its dialect and replaying it are the emulator's
(:mod:`mddframes.emulator.recordings`, :mod:`mddframes.emulator.replay`).
"""

from mddframes.recording.active import recording, recording_all
from mddframes.recording.recorder import Recorder

__all__ = ["Recorder", "recording", "recording_all"]
