"""Snapshot: a snapshot folder read back as the frames the readers returned when it was taken."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from mddframes.codec import depth
from mddframes.codec.frame import INDEX_NAME
from mddframes.codec.kinds import Kind
from mddframes.errors import DataShapeError, InvalidArgumentError, NotFoundError
from mddframes.frames.structures import structure_record, structures_frame
from mddframes.ids import close_matches
from mddframes.snapshot.arrow_columns import arrow_to_frame
from mddframes.snapshot.bundles import ENVELOPES_KEY
from mddframes.snapshot.layout import FORMAT, MANIFEST

#: The columns of :attr:`Snapshot.objects`.
OBJECT_COLUMNS = ("kind", "id", "digest", "rows", "file", "row_group", "offset")


class Snapshot:
    """A snapshot folder written by :func:`~mddframes.snapshot.snapshot`, read lazily.

    Parameters
    ----------
    path : str or os.PathLike
        The snapshot folder (the one holding ``manifest.json``).
    manifest : dict, optional
        The manifest, when it is not the folder's ``manifest.json`` (a version of a
        history store: its files are named relative to the store).

    Attributes
    ----------
    path : pathlib.Path
        The folder.
    manifest : dict
        ``manifest.json`` as written.

    Raises
    ------
    InvalidArgumentError
        ``path`` holds no complete snapshot (no manifest: an interrupted one leaves none).

    Examples
    --------
    >>> from mddframes.snapshot import snapshot
    >>> _ = snapshot(client.api, "LAB", "snapshots/lab", progress=False, structures=False)
    >>> snap = Snapshot("snapshots/lab")
    >>> tree = snap.read_tree()
    >>> rows = snap.read_table(tree["table_id"].dropna().iloc[0])
    """

    def __init__(
        self, path: str | os.PathLike[str], *, manifest: dict[str, Any] | None = None
    ) -> None:
        self.path = Path(path)
        if manifest is None:
            manifest = self._read_manifest()
        self.manifest: dict[str, Any] = manifest
        self._objects: dict[tuple[str, str], dict[str, Any]] = {
            (o["kind"], o["id"]): o for o in self.manifest["objects"]
        }
        # the last object file opened, and its envelopes: objects are mostly read in
        # manifest order, file after file (a diff), and a footer is read once per file
        self._open: tuple[str, pq.ParquetFile] | None = None
        self._envelopes: tuple[str, dict[str, Any]] | None = None
        self._group: tuple[tuple[str, int], pa.Table] | None = None

    def _read_manifest(self) -> dict[str, Any]:
        path = self.path / MANIFEST
        if not path.is_file():
            raise InvalidArgumentError(
                f"{str(self.path)!r} holds no complete snapshot (no {MANIFEST})"
            )
        manifest: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
        if manifest.get("format") != FORMAT:
            raise DataShapeError(f"{str(path)!r} is not the manifest of an mddframes snapshot")
        return manifest

    def __repr__(self) -> str:
        m = self.manifest
        return (
            f"Snapshot({str(self.path)!r}, system={m['system']!r}, taken={m['started_at']!r}, "
            f"objects={len(m['objects'])}, failures={len(m['failures'])})"
        )

    @property
    def system(self) -> str:
        """The system the snapshot holds."""
        return str(self.manifest["system"])

    @property
    def objects(self) -> pd.DataFrame:
        """One row per table and mapping: kind, id, digest, rows, file, row_group, offset."""
        rows = [{c: o[c] for c in OBJECT_COLUMNS} for o in self.manifest["objects"]]
        frame = pd.DataFrame(rows, columns=list(OBJECT_COLUMNS))
        return frame.astype({"kind": "string", "id": "string", "digest": "string",
                             "rows": "Int64", "file": "string",
                             "row_group": "Int64", "offset": "Int64"})  # fmt: skip

    @property
    def failures(self) -> pd.DataFrame:
        """One row per object that could not be read: kind, id, error_type, status, message."""
        columns = ["kind", "id", "error_type", "status", "message"]
        frame = pd.DataFrame(self.manifest["failures"], columns=columns)
        return frame.astype({"status": "Int64"})

    def read_tree(self) -> pd.DataFrame:
        """The frame ``read_tree(system)`` returned.

        Returns
        -------
        pandas.DataFrame
            Equal (``assert_frame_equal``) to the read at snapshot time.
        """
        return self._frame("tree")

    def read_object_types(self) -> pd.DataFrame:
        """The frame ``read_object_types()`` returned.

        Returns
        -------
        pandas.DataFrame
            Equal to the read at snapshot time.
        """
        return self._frame("object_types")

    def read_packages(self) -> pd.DataFrame:
        """The frame ``read_packages(system)`` returned (the open packages).

        Returns
        -------
        pandas.DataFrame
            Equal to the read at snapshot time.
        """
        return self._frame("packages")

    def read_structures(self) -> pd.DataFrame:
        """The frame ``read_structures(tree["id"])`` would have returned.

        Returns
        -------
        pandas.DataFrame
            One row per element read, in tree order.

        Raises
        ------
        NotFoundError
            The snapshot was taken with ``structures=False``.
        """
        return structures_frame([structure_record(r) for _id, r in self.iter_structures()])

    def iter_structures(self) -> Iterator[tuple[str, Any]]:
        """Each element's id and record (its decoded JSON), one row group at a time.

        Yields
        ------
        (str, dict)
            The element id and its ``getStructure`` answer as it was.

        Raises
        ------
        NotFoundError
            The snapshot was taken with ``structures=False``.
        """
        entry = self.manifest["files"].get("structures")
        if entry is None:
            raise NotFoundError(f"the snapshot {str(self.path)!r} was taken without structures")
        parquet = pq.ParquetFile(self.path / entry["file"])
        for group in range(parquet.num_row_groups):
            table = parquet.read_row_group(group, columns=["id", "record"])
            for element_id, record in zip(
                table.column("id").to_pylist(), table.column("record").to_pylist(), strict=True
            ):
                yield element_id, depth.loads(record, what=f"element {element_id!r}")

    def read_table(self, table_id: str) -> pd.DataFrame:
        """The frame ``read_table(table_id)`` returned at snapshot time.

        Parameters
        ----------
        table_id : str
            A table of the snapshot.

        Returns
        -------
        pandas.DataFrame
            Its rows, indexed by position (``row``), its columns and dtypes as read.

        Raises
        ------
        NotFoundError
            The snapshot has no such table (see :attr:`failures` for those that failed).
        """
        return self._object_frame("table", table_id)

    def read_mapping(self, mapping_id: str) -> pd.DataFrame:
        """The frame ``read_mapping(mapping_id)`` returned at snapshot time.

        Parameters
        ----------
        mapping_id : str
            A mapping of the snapshot.

        Returns
        -------
        pandas.DataFrame
            Its column mappings, indexed by position (``row``).

        Raises
        ------
        NotFoundError
            The snapshot has no such mapping.
        """
        return self._object_frame("mapping", mapping_id)

    def object_entry(self, kind: Kind, object_id: str) -> dict[str, Any]:
        """The manifest's entry of one table or mapping (digest, rows, file...).

        Parameters
        ----------
        kind : {"table", "mapping"}
            The kind of object.
        object_id : str
            Its id.

        Returns
        -------
        dict
            The entry.

        Raises
        ------
        NotFoundError
            The snapshot has no such object.
        """
        entry = self._objects.get((kind, str(object_id)))
        if entry is None:
            known = [key[1] for key in self._objects if key[0] == kind]
            raise NotFoundError(f"the snapshot {str(self.path)!r} has no {kind} {object_id!r}"
                                + close_matches([str(object_id)], known))  # fmt: skip
        return entry

    def envelope(self, kind: Kind, object_id: str) -> dict[str, Any]:
        """The object's payload as it was without its rows (its rows list empty).

        Parameters
        ----------
        kind : {"table", "mapping"}
            The kind of object.
        object_id : str
            Its id.

        Returns
        -------
        dict
            Everything of the payload but the rows (metadata, column declarations...).
        """
        entry = self.object_entry(kind, object_id)
        if self._envelopes is None or self._envelopes[0] != entry["file"]:
            metadata = self._parquet(entry["file"]).metadata.metadata or {}
            self._envelopes = entry["file"], json.loads(metadata[ENVELOPES_KEY])
        envelope: dict[str, Any] = self._envelopes[1][entry["id"]]
        return envelope

    def _parquet(self, relative: str) -> pq.ParquetFile:
        if self._open is None or self._open[0] != relative:
            self._open = relative, pq.ParquetFile(self.path / relative)
        return self._open[1]

    def _frame(self, what: str) -> pd.DataFrame:
        entry = self.manifest["files"].get(what)
        if entry is None:
            raise NotFoundError(f"the snapshot {str(self.path)!r} has no {what}")
        return arrow_to_frame(pq.read_table(self.path / entry["file"]))

    def _object_frame(self, kind: Kind, object_id: str) -> pd.DataFrame:
        entry = self.object_entry(kind, object_id)
        where = (entry["file"], entry["row_group"])
        if self._group is None or self._group[0] != where:
            # a row group holds the objects of a chunk: read once for all of them
            self._group = where, self._parquet(entry["file"]).read_row_group(entry["row_group"])
        long = arrow_to_frame(self._group[1].slice(entry["offset"], entry["rows"]))
        position = entry["row_column"]
        positions = long[position].to_numpy(dtype="int64")
        # no columns: pandas' own empty columns (a RangeIndex), as the read gave
        frame = long[list(entry["columns"])] if entry["columns"] else pd.DataFrame(index=long.index)
        if (positions == range(len(positions))).all():
            frame.index = pd.RangeIndex(len(positions), name=INDEX_NAME)
        else:  # pragma: no cover - a read's positions are always 0..n-1
            frame.index = pd.Index(positions, name=INDEX_NAME)
        return frame
