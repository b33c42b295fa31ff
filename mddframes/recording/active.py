"""Turning recording on: for one client (``Client.recording``) or for every client a
command creates (``mddframes record OUT.har -- COMMAND``).

Nothing is recorded unless one of these asked for it.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Iterator
from typing import Any

from mddframes.errors import InvalidArgumentError
from mddframes.recording.recorder import Recorder

__all__ = ["attach_if_recording", "recording", "recording_all"]

_ACTIVE: list[Recorder] = []
_guard = threading.Lock()


@contextlib.contextmanager
def recording(
    http: Any, path: str | os.PathLike[str], *, redact_values: bool = False
) -> Iterator[Recorder]:
    """Record the calls of ``http`` (an HttpSession) into ``path`` for a ``with`` block.

    Parameters
    ----------
    http : HttpSession
        The session to record.
    path : path
        The HAR file, written when the block ends (even when it raises).
    redact_values : bool
        Replace the data of table, mapping, element and raw-data bodies too.

    Yields
    ------
    Recorder
    """
    if http.interceptor is not None:
        raise InvalidArgumentError("this client is already being recorded or played back")
    recorder = Recorder(path, redact_values=redact_values)
    try:
        recorder.attach(http)
        yield recorder
    finally:
        http.interceptor = None
        recorder.close()


@contextlib.contextmanager
def recording_all(
    path: str | os.PathLike[str], *, redact_values: bool = False
) -> Iterator[Recorder]:
    """Record every client created in this process during the block into ``path``."""
    recorder = Recorder(path, redact_values=redact_values)
    with _guard:
        _ACTIVE.append(recorder)
    try:
        yield recorder
    finally:
        with _guard:
            _ACTIVE.remove(recorder)
        recorder.close()


def attach_if_recording(http: Any) -> None:
    """Attach ``http`` to the process's recording, when ``recording_all`` runs one."""
    with _guard:
        recorder = _ACTIVE[-1] if _ACTIVE else None
    if recorder is not None:
        recorder.attach(http)
