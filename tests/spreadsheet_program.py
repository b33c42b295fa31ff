"""Where LibreOffice is: the one ``soffice`` the spreadsheet-program tests drive (None when
it is not installed; those tests then skip, except under CI)."""

from __future__ import annotations

import shutil

SOFFICE = shutil.which("soffice")
