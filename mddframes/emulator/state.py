"""Everything one running emulator holds: settings, store, tokens, tasks, faults, counters.

The HTTP layer (``app.py``, ``admin.py``) only translates requests into calls on an
:class:`EmulatorState`.
"""

from __future__ import annotations

import logging
import secrets
import threading
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from mddframes.emulator import generation
from mddframes.emulator.auth import TokenIssuer
from mddframes.emulator.dataset import JSON, Dataset
from mddframes.emulator.faults import FaultInjector
from mddframes.emulator.store import Store
from mddframes.emulator.tasks import TaskManager
from mddframes.wire.profile import API_PREFIX as API_PREFIX  # (read from here too)

logger = logging.getLogger(__name__)

DEMO_CLIENT_ID = "mddframes-demo"


@dataclass
class EmulatorConfig:
    """How an emulator is set up (see :func:`mddframes.emulator.serve`)."""

    tenant: str = "acme"
    client_id: str = DEMO_CLIENT_ID
    client_secret: str = field(default_factory=lambda: secrets.token_urlsafe(24), repr=False)
    token_ttl: float = 300
    legacy: bool = False
    export_seconds_per_element: float = 0.002
    db: str | None = None
    elements: int | None = None
    api_prefix: str = API_PREFIX
    dialect: str = "default"  # see emulator/dialects.py
    misfits: bool = False  # the sample with a column its values do not fit (sample docs)


def sample_dataset(*, misfits: bool = False) -> Dataset:
    """The deterministic sample data (``sample.build_sample``)."""
    from mddframes.emulator.sample import build_sample

    return build_sample(misfits=misfits)


def scale_dataset(n_elements: int) -> Dataset:
    """Scale data of ``n_elements`` elements (``scale.build_scale``)."""
    if n_elements < 1:
        raise ValueError(f"the number of elements must be at least 1, got {n_elements}")
    from mddframes.emulator.scale import build_scale

    return build_scale(n_elements)


def scale_records(n_elements: int) -> Iterator[tuple[str, JSON]]:
    """The records of :func:`scale_dataset`, streamed (``scale.scale_records``)."""
    if n_elements < 1:
        raise ValueError(f"the number of elements must be at least 1, got {n_elements}")
    from mddframes.emulator.scale import scale_records as stream

    return stream(n_elements)


class EmulatorState:
    """The state of one emulator.

    Parameters
    ----------
    config : EmulatorConfig
        Settings.
    dataset : Dataset or callable returning one, optional
        What to serve instead of the sample/scale data (tests use tiny datasets).
    """

    def __init__(
        self, config: EmulatorConfig, dataset: Dataset | Callable[[], Dataset] | None = None
    ) -> None:
        self.config = config
        self._initial_settings = (config.legacy, config.token_ttl)
        if dataset is not None:
            self._initial: Callable[[], Dataset | Iterable[tuple[str, JSON]]] = (
                dataset if callable(dataset) else (lambda: dataset)
            )
        elif config.elements is not None:
            n = config.elements
            # streamed into the store: a million elements never sit in memory as dicts
            self._initial = lambda: scale_records(n)
        else:
            misfits = config.misfits
            self._initial = lambda: sample_dataset(misfits=misfits)
        self.store = Store(config.db)
        if self.store.is_empty():
            self.store.load(self._initial())
        else:
            logger.info("serving the existing data of %s", config.db)
        self.issuer = TokenIssuer(
            config.tenant, {config.client_id: config.client_secret}, config.token_ttl
        )
        self.tasks = TaskManager(
            lambda sid, otid: self.render(sid, otid),
            config.export_seconds_per_element,
        )
        self.faults = FaultInjector()
        #: The recording this emulator replays (:mod:`mddframes.emulator.replay`), if any.
        self.replay: Any = None
        self._counts: Counter[str] = Counter()
        self._faulted: Counter[str] = Counter()
        self._count_lock = threading.Lock()

    def render(self, structure_id: str, object_type_id: str) -> tuple[str, str]:
        """One element's script: the recorded one when replaying, else the template's."""
        if self.replay is not None:
            found: tuple[str, str] = self.replay.render(structure_id, object_type_id)
            return found
        return generation.render(self.store, structure_id, object_type_id)

    def __repr__(self) -> str:
        return f"EmulatorState(tenant={self.config.tenant!r}, db={self.config.db!r}, legacy={self.config.legacy})"

    # counters: every request that reaches an operation's route is counted, faulted or not
    def count(self, operation: str, faulted: bool = False) -> None:
        """Count one request of ``operation`` (``faulted``: answered by an injected fault)."""
        with self._count_lock:
            self._counts[operation] += 1
            if faulted:
                self._faulted[operation] += 1

    def count_fault(self, operation: str) -> None:
        """Count a fault on a request already counted (an answer lost after acting)."""
        with self._count_lock:
            self._faulted[operation] += 1

    def counters(self) -> dict[str, dict[str, int]]:
        """``{"requests": {op: n}, "faulted": {op: n}}``."""
        with self._count_lock:
            return {"requests": dict(self._counts), "faulted": dict(self._faulted)}

    def reset_counters(self) -> None:
        """Forget all counts."""
        with self._count_lock:
            self._counts.clear()
            self._faulted.clear()

    def reset(self) -> None:
        """Back to the data and settings the emulator started with; no tasks, faults or
        counts. Tokens already issued stay valid."""
        self.store.load(self._initial())
        self.config.legacy, self.issuer.ttl = self._initial_settings
        self.tasks.clear()
        self.faults.clear()
        self.reset_counters()

    def load(self, dataset: Dataset | Iterable[tuple[str, JSON]]) -> None:
        """Serve ``dataset`` from now on (``reset`` still returns to the starting data)."""
        self.store.load(dataset)
        self.tasks.clear()

    def close(self) -> None:
        """Stop task threads and close the store."""
        self.tasks.shutdown()
        self.store.close()
