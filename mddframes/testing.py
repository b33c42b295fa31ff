"""Helpers for users' own tests: their tenant, offline, from a recording.

:func:`replayed` connects a client to an emulator replaying a recording
(``mddframes record``, ``Client.recording``), so notebooks and pipelines run in CI
without the tenant, its credentials or its network. A fixture to copy::

    import pytest
    from mddframes.testing import replayed

    @pytest.fixture
    def tenant():
        with replayed("tests/tenant.har") as client:
            yield client
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from typing import Any

from mddframes.client import Client

__all__ = ["replayed"]


@contextlib.contextmanager
def replayed(path: str | os.PathLike[str], **settings: Any) -> Iterator[Client]:
    """A client of an emulator that replays the recording at ``path``, for a ``with`` block.

    The emulator serves the state the recording saw, in its dialect, prefix and realm,
    on 127.0.0.1 (a free port); reads, writes, exports and package additions work as on
    the tenant, and a request the recording cannot answer is a 404 naming it. Each
    block starts from the recording again.

    Parameters
    ----------
    path : path
        A recording.
    **settings
        Other settings of the client (``max_workers``, ``timeout``...).

    Yields
    ------
    Client
        Connected to the replay.

    Examples
    --------
    >>> with client.recording("tenant.har"):  # a client of the tenant
    ...     tree = client.read_tree("DWH")
    >>> with replayed("tenant.har") as offline:
    ...     len(offline.read_tree("DWH")) == len(tree)
    True
    """
    from mddframes.emulator import serve

    with serve(replay=path) as emulator, Client.from_emulator(emulator, **settings) as client:
        yield client
