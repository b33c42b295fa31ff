"""``mddframes doctor --recording``: doctor's checks on a recording, offline.

The recording is replayed by an emulator on loopback (:mod:`mddframes.emulator.replay`:
its state, dialect, prefix and realm), a client connects to it and doctor runs as
against a tenant; :mod:`mddframes.recording.offline` adds the rows of what nothing
covers. It lives with the command line because it needs the client, doctor and the
emulator at once, which only the top layer may import.
"""

from __future__ import annotations

import os

import pandas as pd

from mddframes.client import Client
from mddframes.doctor import run_doctor
from mddframes.emulator import serve
from mddframes.emulator.recordings import Learned, Recording, learn
from mddframes.recording.offline import uncovered_rows


def doctor_recording(
    path: str | os.PathLike[str], system: str | None = None
) -> tuple[pd.DataFrame, Learned, Recording]:
    """Run doctor's checks on a recording, offline.

    Parameters
    ----------
    path : path
        The recording.
    system : str, optional
        The system whose tree, elements, table, mapping and packages are checked; by
        default the first one whose tree the recording read.

    Returns
    -------
    report : pandas.DataFrame
        Doctor's report (:func:`~mddframes.doctor.run_doctor`), plus a row per
        difference no dialect or setting covers.
    learned : Learned
        What the recording says about its tenant.
    recording : Recording
        The recording read.
    """
    recording = Recording.read(path)
    learned = learn(recording)
    if system is None:
        system = next((c.params.get("name") for c in recording.of("getTree")), None)
    with serve(replay=path) as emulator, Client.from_emulator(emulator) as client:
        report = run_doctor(client.api, system)
    extra = uncovered_rows(learned)
    if len(extra):
        report = pd.concat([report, extra], ignore_index=True)
    return report, learned, recording
