"""Large answers never reach the disk unscrubbed: whatever a spool writes to its private
temporary file is scrubbed first, text or binary, of any size (a small spool memory
here, so that a few hundred KiB go to disk as 64 MiB would).

The temporary files are unlinked when made; the test reads them through the process's
open files (``/proc/self/fd``) while the answer is being read, as anyone with the
user's rights could.
"""

from __future__ import annotations

import io
import json
import os
import zipfile
from pathlib import Path

import pytest
from scripted_service import API, Script, make_client
from web_spellings import base64_text, holds, html_hex, json_escaped, percent

from mddframes.recording.recorder import Recorder

pytestmark = pytest.mark.skipif(
    not os.path.isdir("/proc/self/fd"), reason="reads open files through /proc"
)

SECRET = "Sz3cr3t-Value_9xyz"
SPELLED = [
    SECRET,
    percent(SECRET, lower=True),
    percent(percent(SECRET)),
    html_hex(SECRET),
    json_escaped(SECRET, 0x5555_5555),
    base64_text(SECRET, urlsafe=True, padded=False, before=b"ab"),
]
PIECE = 64 << 10


def _spool_files(folder: Path) -> list[bytes]:
    """What the process's open files in ``folder`` hold now (the unlinked ones too)."""
    held = []
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            continue
        if target.startswith(str(folder)) and not target.endswith(".har.tmp"):
            with open(f"/proc/self/fd/{fd}", "rb") as file:
                held.append(file.read())
    return held


def _body(kind: str) -> bytes:
    """About 600 KiB echoing the secret in every spelling, every 64 KiB or so."""
    filler = "w " * 30_000
    if kind == "zip":
        archive = io.BytesIO()
        with zipfile.ZipFile(archive, "w") as zf:
            for index, spelled in enumerate(SPELLED):
                # stored: the bytes of the answer hold the spellings as they are
                zf.writestr(f"script-{index}.sql", f"{filler}-- {spelled}\n", zipfile.ZIP_STORED)
        return archive.getvalue()
    text = "".join(f"{filler}<{spelled}>" for spelled in SPELLED * 2)
    return json.dumps({"echo": text}).encode() if kind == "text" else text.encode()


MIMES = {"text": "application/json", "binary": "application/octet-stream", "zip": "application/zip"}


@pytest.mark.parametrize("kind", sorted(MIMES))
def test_nothing_reaches_a_spool_file_before_it_is_scrubbed(
    script: tuple[Script, str], tmp_path: Path, kind: str
) -> None:
    plan, base_url = script
    body = _body(kind)
    plan.routes[f"{API}/table/t1"] = lambda handler: (200, {"Content-Type": MIMES[kind]}, body)
    folder = tmp_path / "recordings"
    folder.mkdir()
    recorder = Recorder(folder / "big.har", spool_in_memory=16 << 10)
    seen: list[bytes] = []
    with make_client(base_url, client_secret=SECRET) as client:
        recorder.attach(client.http)
        try:
            with client.http.call("getTable", {"tableId": "t1"}, stream=True) as answer:
                read = []
                for piece in answer.iter_content(PIECE):
                    read.append(piece)
                    seen.extend(_spool_files(folder))
            assert b"".join(read) == body  # the client gets the answer as served
        finally:
            client.http.interceptor = None
            recorder.close()

    # a text or binary answer past the spool's memory did go to a file (scrubbed); a
    # zip never does
    if kind == "zip":
        assert seen == []
    else:
        assert sum(len(held) for held in seen) > 100 << 10
    for held in seen:
        text = held.decode("latin-1")
        for spelled in SPELLED:
            assert spelled not in text
        assert holds(text, SECRET, depth=2) is None
    har = (folder / "big.har").read_text("utf-8")
    assert all(spelled not in har for spelled in SPELLED)
    assert sorted(p.name for p in folder.iterdir()) == ["big.har"]  # no spool left
