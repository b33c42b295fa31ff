"""Docstring entries many public functions share, each written once.

A function's docstring holds a line that is only ``{name}`` where a shared entry goes;
:func:`documented` replaces it at import with the entry of that name in
:data:`SECTIONS` (or in the sections a caller adds, as
:func:`~mddframes.frames.backends.backend_documented` adds ``dtype_backend``), indented
as the line was. The indent is the line's own, so a docstring reads the same whether
Python keeps its indentation (3.11, 3.12) or dedents it (3.13).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import TypeVar

#: The shared entries of the Parameters sections, by the name of their ``{name}`` line.
SECTIONS: dict[str, str] = {
    "api": "api : Api\n    The raw layer (``client.api``).",
    "max_workers": (
        "max_workers : int, optional\n    Concurrent requests; default ``api.max_workers``."
    ),
    "progress": (
        "progress : bool, optional\n"
        "    Show progress (``tqdm.auto`` bars): by default only on a terminal or in Jupyter."
    ),
}

_LINE = re.compile(r"\{(\w+)\}")
_Documented = TypeVar("_Documented")


def filled(doc: str, sections: Mapping[str, str] = SECTIONS) -> tuple[str, set[str]]:
    """``doc`` with each ``{name}`` line replaced by ``sections[name]``, and the names filled.

    Raises
    ------
    ValueError
        A ``{name}`` line names no section (a typo would otherwise show in ``help()``).
    """
    lines: list[str] = []
    names: set[str] = set()
    for line in doc.splitlines():
        match = _LINE.fullmatch(line.strip())
        if match is None:
            lines.append(line)
            continue
        name = match.group(1)
        if name not in sections:
            raise ValueError(f"the docstring line {{{name}}} names no shared section")
        indent = line[: len(line) - len(line.lstrip())]
        lines.extend(indent + part if part else "" for part in sections[name].splitlines())
        names.add(name)
    return "\n".join(lines), names


def documented_with(
    sections: Mapping[str, str], required: str | None = None
) -> Callable[[_Documented], _Documented]:
    """A decorator that fills a function's ``{name}`` lines from ``SECTIONS`` and
    ``sections`` (see the module docstring).

    Parameters
    ----------
    sections : mapping of str to str
        Entries beside :data:`SECTIONS` (the same name: these win).
    required : str, optional
        A name the docstring must fill; by default any one.

    Returns
    -------
    callable
        The decorator: it returns the function itself, its ``__doc__`` filled, and raises
        ``ValueError`` when the docstring fills nothing (or not ``required``): a decorator
        that would do nothing.
    """
    every = {**SECTIONS, **sections}

    def decorate(function: _Documented) -> _Documented:
        doc, names = filled(getattr(function, "__doc__", None) or "", every)
        if not names or (required is not None and required not in names):
            raise ValueError(f"{function!r}: its docstring has no {{{required or 'name'}}} line")
        function.__doc__ = doc
        return function

    return decorate


#: Fill a function's ``{api}``, ``{max_workers}`` and ``{progress}`` lines.
documented = documented_with({})
