"""A faithful local emulator of the metadata service (token endpoint included).

``serve()`` runs it in a background thread and yields an :class:`EmulatorHandle`;
``mddframes emulator`` runs it in the foreground. The emulator imports nothing from
the client side of mddframes, and the client imports nothing from it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mddframes.emulator.server import EmulatorHandle, serve

__all__ = ["EmulatorHandle", "serve"]


def __getattr__(name: str) -> Any:
    # imported lazily so that the pure-data modules (dataset, sample, scale) load
    # without the web stack
    if name in __all__:
        from mddframes.emulator import server

        return getattr(server, name)
    raise AttributeError(f"module 'mddframes.emulator' has no attribute {name!r}")
