"""``mddframes doctor --recording tenant.har``: what a recording teaches, offline.

The command line (:mod:`mddframes.cli._doctor_offline`) replays the recording in an
emulator on loopback and runs doctor against it as against a tenant; this module adds
what the learner (:func:`~mddframes.emulator.recordings.learn`) found that no dialect or
setting covers, as one ``unknown`` row each naming its wire-format row with the advice
to send the recording, and writes the profile it learned. It reads the emulator's
learner, so it is one of the client side's "starters" in tests/client/test_layers.py.
Nothing leaves the machine.
"""

from __future__ import annotations

import os
import re
from datetime import UTC, datetime
from pathlib import Path

import pandas as pd

from mddframes.emulator.recordings import DIALECT_OF, Learned, Recording

__all__ = ["SEND_ADVICE", "profile_text", "uncovered_rows", "write_profile"]

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


def profile_text(learned: Learned, recording: Recording, name: str) -> str:
    """The TOML profile ``name`` holding what ``learned`` found (settings the client reads).

    ``realm`` and ``api_prefix`` are settings; the field spelling, paging, tree shape and
    ETags the client finds out by itself on every call, so they are written as comments
    (and the emulator reads the dialect from the recording: ``--dialect-from``).
    """
    stamp = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    lines = [
        f"# learned by mddframes doctor --recording {recording.name} on {stamp}",
        f"# dialect: {learned.dialect} (mddframes emulator --dialect-from {recording.name})",
    ]
    for dialect, evidence in learned.differences.items():
        lines.append(f"# differs ({dialect}, row {DIALECT_OF[dialect]}): {evidence}")
    for line in learned.uncovered:
        lines.append(f"# not covered: {line}")
    lines.append(f"[profiles.{_toml_key(name)}]")
    if learned.realm:
        lines.append(f"realm = {_toml_string(learned.realm)}")
    prefix = learned.served_prefix if learned.api_prefix == "" else learned.api_prefix
    if prefix is not None:
        lines.append(f"api_prefix = {_toml_string(prefix)}")
    return "\n".join(lines) + "\n"


def write_profile(
    learned: Learned, recording: Recording, path: str | os.PathLike[str], name: str
) -> Path:
    """Write :func:`profile_text` to ``path`` (owner-only; a profile file may hold a
    secret later)."""
    from mddframes.disk_modes import write_private

    return write_private(path, profile_text(learned, recording, name).encode("utf-8"))


def _toml_string(value: str) -> str:
    escaped = value.replace("\\", "\\\\").replace('"', '\\"')
    return f'"{escaped}"'


def _toml_key(name: str) -> str:
    plain = name.replace("-", "").replace("_", "").isalnum()
    return name if plain else _toml_string(name)
