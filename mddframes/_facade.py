"""How the Client's methods are made: docstrings taken from the layer, deprecated aliases."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

#: Old raw method names of the Client -> their Api method (``client.api.<name>``).
DEPRECATED_RAW_NAMES: dict[str, str] = {
    "get_tree": "get_tree",
    "get_structure": "get_structure",
    "get_raw_data": "get_raw_data",
    "get_object_types": "get_object_types",
    "get_table": "get_table",
    "get_table_stream": "get_table_stream",
    "put_table": "put_table",
    "get_mapping": "get_mapping",
    "put_mapping": "put_mapping",
    "list_packages": "list_deployment_packages",
    "post_package_structures": "add_to_deployment_package",
    "post_child": "create_child_structure",
    "export_structure": "external_export_structure",
    "post_export": "structure_mass_export_async",
    "get_export_status": "structure_mass_export_async_status",
    "get_export_result": "structure_mass_export_async_result",
    "deploy_structure": "deploy_structure",
    "confirm_deployment": "confirm_structure_deployment",
}


def facade_of(function: Callable[..., Any]) -> Callable[[Callable[..., Any]], Any]:
    """Give a facade method the docstring of the layer function it calls.

    The layer function documents its first parameter, the ``api``; the method's caller
    never passes it, so that entry is left out. One docstring, two places to read it.
    """

    def decorate(method: Callable[..., Any]) -> Callable[..., Any]:
        lines = (function.__doc__ or "").splitlines()
        kept, skipping = [], False
        for line in lines:
            if line.strip().startswith("api : "):
                skipping = True
                continue
            if skipping and line.startswith(" " * 8) and line.strip():
                continue  # the api entry's description
            skipping = False
            kept.append(line)
        method.__doc__ = "\n".join(kept)
        method.__wrapped_function__ = function  # type: ignore[attr-defined]
        return method

    return decorate


def deprecated_raw(old: str, new: str) -> Callable[..., Any]:
    """A Client method ``old`` that warns and calls ``client.api.<new>``."""

    def alias(self: Any, *args: Any, **kwargs: Any) -> Any:
        warnings.warn(
            f"Client.{old}() is deprecated and will be removed in the next release; "
            f"use client.api.{new}()",
            DeprecationWarning,
            stacklevel=2,
        )
        return getattr(self.api, new)(*args, **kwargs)

    alias.__name__ = old
    alias.__qualname__ = f"Client.{old}"
    alias.__doc__ = f"Deprecated: use ``client.api.{new}()`` (:meth:`mddframes.api.Api.{new}`)."
    return alias
