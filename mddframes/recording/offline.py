"""``mddframes doctor --recording tenant.har``: doctor's checks on a recording, offline.

The recording is replayed by an emulator on loopback (:mod:`mddframes.emulator.replay`:
its state, dialect, prefix and realm) and doctor runs against it as against a tenant;
what :func:`~mddframes.recording.learn.learn` found that no dialect or setting covers
is added as one ``unknown`` row each, naming its wire-format row, with the advice to
send the recording. Nothing leaves the machine.
"""

from __future__ import annotations

import os
import re

import pandas as pd

from mddframes.recording.har import Recording
from mddframes.recording.learn import Learned, learn

__all__ = ["SEND_ADVICE", "doctor_recording", "uncovered_rows"]

#: What a user whose tenant differs in a way nothing covers is asked to do.
SEND_ADVICE = (
    "no dialect or setting covers this: the recording is worth sending with your report "
    "(record it again with --redact-values for a public one)"
)
_ROWS = re.compile(r"wire-format rows? ([0-9][0-9, -]*)")


def uncovered_rows(learned: Learned) -> pd.DataFrame:
    """One ``unknown`` report row per difference nothing covers (may be empty)."""
    rows = []
    for line in learned.uncovered:
        found = _ROWS.search(line)
        rows.append(
            {
                "check": "recording",
                "row": found.group(1).strip(" ,") if found else "",
                "result": "unknown",
                "evidence": line,
                "action": SEND_ADVICE,
            }
        )
    columns = ["check", "row", "result", "evidence", "action"]
    return pd.DataFrame(rows, columns=columns).astype("string")


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
    from mddframes.client import Client
    from mddframes.doctor import run_doctor
    from mddframes.emulator import serve

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
