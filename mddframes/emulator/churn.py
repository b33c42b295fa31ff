"""Token churn: every token revoked again and again while work runs (issue 49).

One home for the thread the token-churn benchmark and the chaos suite run beside their
work: :func:`token_churn`, also reached as
:meth:`~mddframes.emulator.server.EmulatorHandle.churn_tokens`.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from typing import Protocol

__all__ = ["token_churn"]


class _Revokes(Protocol):
    def revoke_tokens(self) -> int: ...

    def set_token_ttl(self, seconds: float) -> None: ...


@contextlib.contextmanager
def token_churn(
    emulator: _Revokes, every: float, *, ttl: float | None = None, restore_ttl: float = 300.0
) -> Iterator[list[int]]:
    """Revoke every token each ``every`` seconds in a thread while the block runs.

    Parameters
    ----------
    emulator : EmulatorHandle
        The emulator (its admin calls ``revoke_tokens`` and ``set_token_ttl``).
    every : float
        Seconds between two revocations of every token.
    ttl : float, optional
        The lifetime of the tokens issued meanwhile; set back to ``restore_ttl`` after.

    Yields
    ------
    list of int
        The tokens each revocation found active, one entry a revocation, filled while
        the block runs. A revocation the emulator was too busy to answer is skipped
        (the next one revokes them).
    """
    if every <= 0:
        raise ValueError(f"token_churn: every must be a positive number of seconds, not {every!r}")
    if ttl is not None:
        emulator.set_token_ttl(ttl)
    stop = threading.Event()
    counts: list[int] = []

    def revoke() -> None:
        while not stop.wait(every):
            with contextlib.suppress(Exception):  # a busy emulator: the next round revokes
                counts.append(emulator.revoke_tokens())

    thread = threading.Thread(target=revoke, name="emulator-token-churn", daemon=True)
    thread.start()
    try:
        yield counts
    finally:
        stop.set()
        thread.join(10)
        if ttl is not None:
            emulator.set_token_ttl(restore_ttl)
