"""One table or mapping written from its edited frame: :func:`write_table`, :func:`write_mapping`.

The steps are the engine's (:mod:`mddframes.writing.engine`); the document strategy is
chosen in :func:`mddframes.writing.changes.prepare_edit`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import pandas as pd

from mddframes.codec.values import JsonValue
from mddframes.ids import require_id
from mddframes.writing.changes import prepare_edit
from mddframes.writing.engine import write_one
from mddframes.writing.result import WriteResult

if TYPE_CHECKING:
    from mddframes.api import Api


def write_table(
    api: Api,
    table_id: str,
    frame: pd.DataFrame,
    *,
    columns: Sequence[Mapping[str, JsonValue]] | pd.DataFrame | None = None,
    dry_run: bool = False,
    allow_deletes: bool = False,
    force: bool = False,
    backup_dir: str | os.PathLike[str] | None = None,
) -> WriteResult:
    """Write an edited table frame back to the service, safely (see the module steps).

    Parameters
    ----------
    api : Api
        The client the table was read through.
    table_id : str
        The table id.
    frame : pandas.DataFrame
        The frame from :func:`~mddframes.frames.table.read_table`, edited; its index
        must still be each row's original position (new rows: labels no other row
        uses; deleted rows: labels gone).
    columns : list of dict or pandas.DataFrame, optional
        New column metadata (``metadata.columns``): a list of column objects, or the
        frame of ``read_table_columns`` edited. Default: kept as read.
    dry_run : bool, default False
        Build and check the payload, return the diff and the report, send nothing.
    allow_deletes : bool, default False
        Allow rows (and undeclared columns) to be deleted.
    force : bool, default False
        Write even if the table changed on the service since it was read (the frame
        wins; the backup keeps what is overwritten), or when it was never read through
        this client (the index then addresses what the service holds now).
    backup_dir : path, optional
        Root folder of the backups; default the ``backup_dir`` setting, else the user's
        data folder (:func:`~mddframes.writing.backups.backup_root`). The backup goes to
        ``<root>/<tenant>/table/<id>/<UTC timestamp>.json``.

    Returns
    -------
    WriteResult

    Raises
    ------
    ConcurrentModificationError
        The table changed since it was read (``changes`` holds what changed).
    IncompletePayloadError
        The completeness check found errors (``report`` names table, row, column).
    WriteVerificationError
        The table read back after the write differs from what was sent.
    WriteRefusedError
        The table was never read through this client and ``force`` is False.
    MddError
        The service refused a call.

    Examples
    --------
    >>> countries = client.read_table("tbl-0109")
    >>> countries.loc[countries["alpha2"] == "DE", "name"] = "Deutschland"
    >>> client.write_table("tbl-0109", countries, dry_run=True)  # sends nothing
    WriteResult(table 'tbl-0109': dry-run; 1 cell(s) changed in 1 row(s) (row 56 column 'name'))
    >>> result = client.write_table("tbl-0109", countries)  # check, backup, PUT, verify
    >>> result.verified, result.backup is not None
    (True, True)
    """
    table_id = require_id(table_id, what="table_id")
    return write_one(
        api, "table", table_id,
        lambda: prepare_edit(api, "table", table_id, frame, columns=columns,
                             allow_deletes=allow_deletes, force=force),
        dry_run=dry_run, backup_dir=backup_dir,
    )  # fmt: skip


def write_mapping(
    api: Api,
    mapping_id: str,
    frame: pd.DataFrame,
    *,
    dry_run: bool = False,
    allow_deletes: bool = False,
    force: bool = False,
    backup_dir: str | os.PathLike[str] | None = None,
) -> WriteResult:
    """Write an edited mapping frame back to the service, safely.

    The same steps and errors as :func:`write_table`, for a mapping (no ``columns``).

    Parameters
    ----------
    api : Api
        The client the mapping was read through.
    mapping_id : str
        The mapping id.
    frame : pandas.DataFrame
        The frame from :func:`~mddframes.frames.table.read_mapping`, edited; its index
        must still be each row's original position.
    dry_run : bool, default False
        Build and check the payload, return the diff and the report, send nothing.
    allow_deletes : bool, default False
        Allow rows to be deleted.
    force : bool, default False
        Write even if the mapping changed on the service since it was read, or when it
        was never read through this client.
    backup_dir : path, optional
        Root folder of the backups; default the ``backup_dir`` setting, else the user's
        data folder (:func:`~mddframes.writing.backups.backup_root`). The backup goes to
        ``<root>/<tenant>/mapping/<id>/<UTC timestamp>.json``.

    Returns
    -------
    WriteResult

    Raises
    ------
    ConcurrentModificationError, IncompletePayloadError, WriteVerificationError,
    WriteRefusedError, MddError
        As for :func:`write_table`.
    """
    mapping_id = require_id(mapping_id, what="mapping_id")
    return write_one(
        api, "mapping", mapping_id,
        lambda: prepare_edit(api, "mapping", mapping_id, frame, allow_deletes=allow_deletes,
                             force=force),
        dry_run=dry_run, backup_dir=backup_dir,
    )  # fmt: skip
