"""Where LibreOffice is: the one ``soffice`` the spreadsheet-program tests drive (None when
it is not installed; those tests then skip, except under CI)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

SOFFICE = shutil.which("soffice")


def resave(sources: list[Path], folder: Path) -> list[Path]:
    """Open each workbook in LibreOffice Calc and save it as xlsx into ``folder``.

    One soffice process converts them all; its profile lives in a temporary folder,
    so no user settings take part and nothing is left behind.
    """
    if SOFFICE is None:
        pytest.fail("CI must have LibreOffice: .ci/run installs libreoffice-calc-nogui")
    folder.mkdir(parents=True, exist_ok=True)
    profile = folder.parent / f"{folder.name}-profile"
    command = [
        SOFFICE, f"-env:UserInstallation={profile.as_uri()}", "--headless", "--norestore",
        "--convert-to", "xlsx", "--outdir", str(folder), *map(str, sources),
    ]  # fmt: skip
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=600, check=False)
    finally:
        shutil.rmtree(profile, ignore_errors=True)
    outputs = [folder / source.name for source in sources]
    missing = [p.name for p in outputs if not p.exists()]
    assert done.returncode == 0 and not missing, (done.returncode, missing, done.stderr[-2000:])
    return outputs
