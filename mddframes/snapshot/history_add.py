"""A version added to a history store: a snapshot taken into ``.staging``, then ingested.

On top of the store (:mod:`~mddframes.snapshot.history_store`) and its upgrade
(:mod:`~mddframes.snapshot.history_upgrade`), which a format-1 store takes first.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import TYPE_CHECKING

from mddframes.snapshot.history_journal import STAGING
from mddframes.snapshot.history_store import ingest, open_store, undo_unfinished
from mddframes.snapshot.history_upgrade import upgrade_unlocked
from mddframes.snapshot.layout import MANIFEST
from mddframes.snapshot.writer import write_snapshot
from mddframes.writing.locks import folder_lock

if TYPE_CHECKING:
    from mddframes.api import Api


def add_version(
    api: Api,
    system: str,
    root: str | os.PathLike[str],
    *,
    max_workers: int | None,
    progress: bool | None,
    structures: bool,
) -> int:
    """Take a snapshot of ``system`` and add it to the store at ``root`` as a new version.

    The work of ``snapshot(..., history=root)``, documented there.

    Returns
    -------
    int
        The number of the version added.
    """
    store = Path(root)
    open_store(store)
    with folder_lock(store, api.settings.lock_timeout, purpose=f"history of {system!r}"):
        upgrade_unlocked(store)
        undo_unfinished(store)
        staged = store / STAGING / "snapshot"
        if (staged / MANIFEST).is_file():
            manifest = json.loads((staged / MANIFEST).read_text(encoding="utf-8"))
            wanted = (api.settings.base_url, api.tenant, system)
            if (manifest.get("service"), manifest.get("tenant"), manifest.get("system")) != wanted:
                shutil.rmtree(staged)  # another system's: taken anew
        if not (staged / MANIFEST).is_file():
            write_snapshot(api, system, staged, max_workers=max_workers, progress=progress,
                           structures=structures)  # fmt: skip
        number = ingest(store, staged)
        shutil.rmtree(staged)
        return number
