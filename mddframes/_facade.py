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
        kept, entry_indent = [], None
        for line in lines:
            indent = len(line) - len(line.lstrip())
            if line.strip().startswith("api : "):
                entry_indent = indent  # 4 spaces, or 0 where Python 3.13 dedents docstrings
                continue
            if entry_indent is not None and line.strip() and indent > entry_indent:
                continue  # the api entry's description
            entry_indent = None
            kept.append(line)
        method.__doc__ = "\n".join(kept)
        # a function object takes any attribute, but typeshed's FunctionType declares none
        method.__wrapped_function__ = function  # type: ignore[attr-defined]
        return method

    return decorate
