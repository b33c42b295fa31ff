"""``write_table`` of a one-cell edit on a small table against GET + PUT + GET (issue 36).

A small table's write pays a fixed cost the big tables hide: the lock, the backup, the
diff, the report and the verification. The floor is what a careful script does by hand
with ``requests``: GET the table, PUT it back, GET it again to check (goal: the write at
most 1.5x that, issue 46; issue 36's was 2x). Each write edits a different cell, so no
call is skipped as unchanged; the emulator runs in a child process, so only the client's
time counts.
"""

from __future__ import annotations

import tempfile

from benchmarks.common import (
    Result,
    floor_session,
    get_put_get,
    median_at_most,
    paired_times,
    remote_emulator,
)
from mddframes import Client

REPEAT = 41  # single writes take milliseconds: many pairs for a stable median


def run() -> list[Result]:
    """The write against its floor, measured in the same run."""
    with (
        remote_emulator(100) as emu,
        Client.from_emulator(emu) as client,
        tempfile.TemporaryDirectory() as backups,
    ):
        table_id = client.read_tree("SCALE")["table_id"].dropna().iloc[0]
        url = f"{emu.api_url}/api/table/{table_id}"
        session = floor_session(emu)
        session.headers["Content-Type"] = "application/json"
        frame = client.read_table(table_id)
        column = next(name for name in frame.columns if str(frame[name].dtype) == "string")
        edits = iter(range(1, 1_000_000))

        def floor() -> None:
            get_put_get(session, url, timeout=30)

        def candidate() -> None:
            frame.at[frame.index[0], column] = f"edited {next(edits)}"
            result = client.write_table(table_id, frame, backup_dir=backups)
            if result.status != "written":
                raise RuntimeError(f"write_table did not write: {result.status}")

        for _ in range(3):  # warm: connections, imports, the first write's set-up
            floor()
            candidate()
        base, cand = paired_times(floor, candidate, repeat=REPEAT)
        size = len(session.get(url, timeout=30).content)
        session.close()
    return [median_at_most(f"write_table one cell, small table ({len(frame)} rows, {size:,} bytes), vs GET+PUT+GET",
                           base, cand, 1.5)]  # fmt: skip
