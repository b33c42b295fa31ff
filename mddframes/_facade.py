"""How the Client's methods are made: each takes the docstring of the layer function it calls."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ParamSpec, TypeVar

P = ParamSpec("P")
R = TypeVar("R")


def facade_of(function: Callable[..., Any]) -> Callable[[Callable[P, R]], Callable[P, R]]:
    """Give a facade method the docstring of the layer function it calls.

    The layer function documents its first parameter, the ``api``; the method's caller
    never passes it, so that entry is left out. One docstring, two places to read it.

    Parameters
    ----------
    function : callable
        The layer function the decorated method hands its arguments to.

    Returns
    -------
    callable
        A decorator that returns the method itself (same object, same signature for
        type checkers), with ``__doc__`` and ``__wrapped_function__`` set.
    """

    def decorate(method: Callable[P, R]) -> Callable[P, R]:
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
        # a function object takes any attribute, but typeshed's FunctionType declares none
        method.__wrapped_function__ = function  # type: ignore[attr-defined]
        return method

    return decorate
