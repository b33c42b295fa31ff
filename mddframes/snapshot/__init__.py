"""Snapshots: a whole system as a folder of Parquet files, read back as frames, compared.

:func:`snapshot` writes one (bounded memory, crash safe); :func:`read_snapshot` opens
one as a :class:`Snapshot`; :func:`diff_snapshots` says what changed between two
snapshots or between a snapshot and the service. The layout is in
:mod:`mddframes.snapshot.layout` and docs/guide/snapshots.md. pyarrow is the optional
extra ``mddframes[arrow]``.
"""

from mddframes.snapshot.diff import SnapshotDiff, diff_snapshots
from mddframes.snapshot.reader import Snapshot, read_snapshot
from mddframes.snapshot.writer import snapshot

__all__ = ["Snapshot", "SnapshotDiff", "diff_snapshots", "read_snapshot", "snapshot"]
