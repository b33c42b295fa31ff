"""The Client's safe writes and its write journal: :class:`Writes`, a base of
:class:`~mddframes.client.Client`.

Each method hands its arguments to :mod:`mddframes.writing`, passing ``self.api``, as
the rest of the facade does (kept apart from client.py by job: the way back).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence

import pandas as pd

from mddframes import writing
from mddframes._facade import facade_of
from mddframes.api import Api
from mddframes.codec.values import JsonValue
from mddframes.writing import WriteResult

__all__ = ["Writes"]


class Writes:
    """Writes of tables and mappings, restores, and the journal of batches."""

    api: Api

    @facade_of(writing.write_table)
    def write_table(
        self,
        table_id: str,
        frame: pd.DataFrame,
        *,
        columns: Sequence[Mapping[str, JsonValue]] | pd.DataFrame | None = None,
        dry_run: bool = False,
        allow_deletes: bool = False,
        force: bool = False,
        backup_dir: str | os.PathLike[str] | None = None,
    ) -> WriteResult:
        return writing.write_table(
            self.api, table_id, frame, columns=columns, dry_run=dry_run,
            allow_deletes=allow_deletes, force=force, backup_dir=backup_dir,
        )  # fmt: skip

    @facade_of(writing.write_mapping)
    def write_mapping(
        self,
        mapping_id: str,
        frame: pd.DataFrame,
        *,
        dry_run: bool = False,
        allow_deletes: bool = False,
        force: bool = False,
        backup_dir: str | os.PathLike[str] | None = None,
    ) -> WriteResult:
        return writing.write_mapping(
            self.api, mapping_id, frame, dry_run=dry_run, allow_deletes=allow_deletes,
            force=force, backup_dir=backup_dir,
        )  # fmt: skip

    @facade_of(writing.restore)
    def restore(
        self,
        backup: str | os.PathLike[str],
        *,
        dry_run: bool = False,
        backup_dir: str | os.PathLike[str] | None = None,
    ) -> WriteResult:
        return writing.restore(self.api, backup, dry_run=dry_run, backup_dir=backup_dir)

    @facade_of(writing.restore_backups)
    def restore_backups(
        self,
        backups: str | os.PathLike[str] | Iterable[str | os.PathLike[str]],
        *,
        dry_run: bool = False,
        backup_dir: str | os.PathLike[str] | None = None,
        max_workers: int | None = None,
        progress: bool | None = None,
    ) -> pd.DataFrame:
        return writing.restore_backups(
            self.api, backups, dry_run=dry_run, backup_dir=backup_dir,
            max_workers=max_workers, progress=progress,
        )  # fmt: skip

    @facade_of(writing.write_tables)
    def write_tables(
        self,
        frame: pd.DataFrame,
        *,
        dry_run: bool = False,
        allow_deletes: bool = False,
        force: bool = False,
        backup_dir: str | os.PathLike[str] | None = None,
        max_workers: int | None = None,
        progress: bool | None = None,
    ) -> pd.DataFrame:
        return writing.write_tables(
            self.api, frame, dry_run=dry_run, allow_deletes=allow_deletes, force=force,
            backup_dir=backup_dir, max_workers=max_workers, progress=progress,
        )  # fmt: skip

    @facade_of(writing.write_mappings)
    def write_mappings(
        self,
        frame: pd.DataFrame,
        *,
        dry_run: bool = False,
        allow_deletes: bool = False,
        force: bool = False,
        backup_dir: str | os.PathLike[str] | None = None,
        max_workers: int | None = None,
        progress: bool | None = None,
    ) -> pd.DataFrame:
        return writing.write_mappings(
            self.api, frame, dry_run=dry_run, allow_deletes=allow_deletes, force=force,
            backup_dir=backup_dir, max_workers=max_workers, progress=progress,
        )  # fmt: skip

    # -- the write journal (writing/recovery.py) ---------------------------------------------

    @facade_of(writing.pending_writes)
    def pending_writes(
        self,
        *,
        backup_dir: str | os.PathLike[str] | None = None,
        include_finished: bool = False,
    ) -> pd.DataFrame:
        return writing.pending_writes(
            self.api, backup_dir=backup_dir, include_finished=include_finished
        )

    @facade_of(writing.resume)
    def resume(
        self,
        batch: str | os.PathLike[str],
        *,
        backup_dir: str | os.PathLike[str] | None = None,
        max_workers: int | None = None,
        progress: bool | None = None,
    ) -> pd.DataFrame:
        return writing.resume(self.api, batch, backup_dir=backup_dir, max_workers=max_workers,
                              progress=progress)  # fmt: skip

    @facade_of(writing.roll_back)
    def roll_back(
        self,
        batch: str | os.PathLike[str],
        *,
        backup_dir: str | os.PathLike[str] | None = None,
        max_workers: int | None = None,
        progress: bool | None = None,
    ) -> pd.DataFrame:
        return writing.roll_back(self.api, batch, backup_dir=backup_dir,
                                 max_workers=max_workers, progress=progress)  # fmt: skip
