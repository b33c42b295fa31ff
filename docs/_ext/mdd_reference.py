"""Writes the API reference's pages from the code at every build, so they cannot drift.

At ``builder-inited`` this extension walks ``mddframes.__all__``, the public members of
:class:`mddframes.Client` and :class:`mddframes.api.Api`, the ``__all__`` of the widgets,
writing (the journal), tables-as-code and lineage packages, and every class of
:mod:`mddframes.errors`, and writes one reStructuredText stub per name into
``docs/reference/_generated/`` (git-ignored). A name another branch adds to one of those
lists gets its page with no edit here. The error tree is drawn as a nested list (no
graphviz needed).
"""

from __future__ import annotations

import inspect
import shutil
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from sphinx.application import Sphinx

#: the packages whose ``__all__`` get a reference section beside ``mddframes.__all__``
SECTIONS = (
    ("mddframes.widgets", "Notebook panels", "The ipywidgets panels and the element picker."),
    (
        "mddframes.writing",
        "Writing and the journal",
        "The safe writer, its backups and the batch journal (pending writes, resume, roll back).",
    ),
    (
        "mddframes.tables_as_code",
        "Tables as code",
        "Tables and mappings as files: pull, plan, apply, and the file formats.",
    ),
    (
        "mddframes.lineage",
        "Lineage and search",
        "The lineage of a system's mappings, its questions and drawings, and search.",
    ),
)
#: classes whose public members each get a page of their own
MEMBER_PAGES = ("mddframes.Client", "mddframes.api.Api")


def _title(text: str, underline: str = "=") -> str:
    text = text.replace("__", "\\_\\_")  # ``__version__`` is no hyperlink reference
    return f"{text}\n{underline * len(text)}\n"


def _public_members(cls: type) -> list[str]:
    """The public names a user calls on ``cls``: defined on it or a base of mddframes."""
    names = []
    for name in sorted(dir(cls)):
        if name.startswith("_"):
            continue
        owner = next((k for k in cls.__mro__ if name in vars(k)), None)
        if owner is not None and owner.__module__.startswith("mddframes"):
            names.append(name)
    return names


def _directive(obj: Any) -> str:
    if inspect.isclass(obj):
        return "autoexception" if issubclass(obj, BaseException) else "autoclass"
    if inspect.isroutine(obj):
        return "autofunction"
    return "autodata"


def _alias_text(obj: Any) -> str:
    return repr(obj).replace("typing.", "")


def _stub(module: str, name: str, obj: Any) -> str:
    qualified = f"{module}.{name}"
    lines = [_title(qualified), f".. currentmodule:: {module}\n"]
    directive = _directive(obj)
    if qualified in MEMBER_PAGES:
        members = _public_members(obj)
        lines.append(f".. {directive}:: {name}\n   :no-members:\n")
        lines.append(_title("Members", "-"))
        lines.append(".. autosummary::\n   :toctree: .\n   :nosignatures:\n")
        lines.extend(f"   {name}.{member}" for member in members)
        lines.append("")
    elif directive in ("autoclass", "autoexception"):
        lines.append(f".. {directive}:: {name}\n   :members:\n   :show-inheritance:\n")
    elif directive == "autodata":
        # autodoc cannot document a type alias (``dict[str, Any]`` reads as a class)
        lines.append(f".. py:data:: {name}\n   :value: {_alias_text(obj)}\n")
        what = "constant" if isinstance(obj, str | int | float | tuple) else "type alias"
        lines.append(f"   A {what} of the public API.\n")
    else:
        lines.append(f".. {directive}:: {name}\n")
    return "\n".join(lines) + "\n"


def _member_stub(module: str, owner: str, member: str, obj: Any) -> str:
    attribute = inspect.getattr_static(obj, member)
    directive = (
        "autoproperty" if isinstance(attribute, property) else
        "automethod" if callable(getattr(obj, member)) else "autoattribute"
    )  # fmt: skip
    return (
        _title(f"{module}.{owner}.{member}")
        + f"\n.. currentmodule:: {module}\n\n.. {directive}:: {owner}.{member}\n"
    )


def _section(title: str, intro: str, module: str, names: Iterable[str]) -> str:
    names = list(names)
    body = [_title(title), intro + "\n", f".. currentmodule:: {module}\n"]
    module_object = __import__(module, fromlist=["__all__"])
    data = [n for n in names if _directive(getattr(module_object, n)) == "autodata"]
    body.append(".. autosummary::\n   :toctree: .\n   :nosignatures:\n")
    body.extend(f"   {name}" for name in names if name not in data)
    if data:  # autosummary cannot import a type alias: listed by hand, same pages
        body.append("\nType aliases and constants:\n")
        body.extend(f"- :data:`{name}`" for name in data)
        body.append("\n.. toctree::\n   :hidden:\n")
        body.extend(f"   {module}.{name}" for name in data)
    return "\n".join(body) + "\n"


def _error_tree(errors: Any) -> str:
    """The error and warning classes of ``errors`` as a nested list, roots first."""
    classes = [
        c for c in vars(errors).values()
        if inspect.isclass(c) and c.__module__ == errors.__name__
        and issubclass(c, BaseException)
    ]  # fmt: skip
    own = set(classes)

    def line(cls: type, depth: int) -> list[str]:
        outside = [b.__name__ for b in cls.__bases__ if b not in own]
        also = f" (also {', '.join(f'``{n}``' for n in outside)})" if outside else ""
        text = [f"{'  ' * depth}- :class:`~mddframes.errors.{cls.__name__}`{also}"]
        for sub in sorted(cls.__subclasses__(), key=lambda c: c.__name__):
            if sub in own and _first_own_base(sub, own) is cls:
                text.extend(line(sub, depth + 1))
        return text

    roots = [c for c in classes if _first_own_base(c, own) is None]
    out: list[str] = []
    for root in sorted(roots, key=lambda c: (not issubclass(c, Exception), c.__name__)):
        out.extend(line(root, 0))
    return "\n\n".join(out) + "\n"


def _first_own_base(cls: type, own: set[type]) -> type | None:
    return next((b for b in cls.__bases__ if b in own), None)


def generate(folder: Path) -> list[str]:
    """Write every page of the reference into ``folder``; returns the documented names."""
    import mddframes
    from mddframes import errors

    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    documented: list[str] = []

    def write(module: str, name: str, obj: Any) -> None:
        (folder / f"{module}.{name}.rst").write_text(_stub(module, name, obj), "utf-8")
        documented.append(f"{module}.{name}")
        if f"{module}.{name}" in MEMBER_PAGES:
            for member in _public_members(obj):
                text = _member_stub(module, name, member, obj)
                (folder / f"{module}.{name}.{member}.rst").write_text(text, "utf-8")
                documented.append(f"{module}.{name}.{member}")

    top = list(mddframes.__all__)
    exported = {id(getattr(mddframes, n)) for n in top}
    for name in top:
        write("mddframes", name, getattr(mddframes, name))
    (folder / "mddframes.rst").write_text(
        _section(
            "mddframes",
            "Everything ``import mddframes`` offers (``mddframes.__all__``); "
            f"this is version ``{mddframes.__version__}`` (:data:`mddframes.__version__`).",
            "mddframes",
            top,
        ),
        "utf-8",
    )
    from mddframes.api import Api

    write("mddframes.api", "Api", Api)
    (folder / "mddframes.api.rst").write_text(
        _section(
            "The raw API",
            "``client.api``: the service's own operations, one method each, returning "
            "decoded JSON.",
            "mddframes.api",
            ["Api"],
        ),
        "utf-8",
    )
    for module_name, title, intro in SECTIONS:
        module = __import__(module_name, fromlist=["__all__"])
        names = [n for n in module.__all__ if id(getattr(module, n)) not in exported]
        for name in names:
            write(module_name, name, getattr(module, name))
        (folder / f"{module_name}.rst").write_text(
            _section(title, intro, module_name, names), "utf-8"
        )
    # the error tree: every class of mddframes.errors, nested under its base
    tree = _error_tree(errors)
    extra = [
        n for n, c in vars(errors).items()
        if inspect.isclass(c) and c.__module__ == errors.__name__
        and issubclass(c, BaseException) and id(c) not in exported
    ]  # fmt: skip
    for name in extra:
        write("mddframes.errors", name, getattr(errors, name))
    pages = [f"mddframes.errors.{n}" for n in extra]
    for name in sorted(top):
        obj = getattr(mddframes, name)
        if inspect.isclass(obj) and obj.__module__ == errors.__name__:
            alias = folder / f"mddframes.errors.{name}.rst"
            alias.write_text(
                _title(f"mddframes.errors.{name}") + f"\n.. currentmodule:: mddframes.errors\n\n"
                f".. {_directive(obj)}:: {name}\n\n"
                f"The same class as :class:`mddframes.{name}`.\n",
                "utf-8",
            )
            pages.append(f"mddframes.errors.{name}")
    (folder / "mddframes.errors.rst").write_text(
        _title("Errors and warnings")
        + "\nEvery error mddframes raises is a :class:`~mddframes.MddError`, every warning "
        "it emits a :class:`~mddframes.MddWarning` (:mod:`mddframes.errors`). The tree, "
        "each class under its base (a base from Python's own named in brackets):\n\n"
        + tree
        + "\n.. toctree::\n   :hidden:\n\n"
        + "\n".join(f"   {p}" for p in sorted(pages))
        + "\n",
        "utf-8",
    )
    return documented


def _on_builder_inited(app: Sphinx) -> None:
    folder = Path(app.srcdir) / "reference" / "_generated"
    generate(folder)
    # the dtype rule's table, included by the guide's reading page (not a page itself)
    from mddframes.codec.dtypes import rules_markdown

    (folder / "dtype-rules.md.inc").write_text(rules_markdown(), "utf-8")


def _exists_in_package(target: str, context: Iterable[str]) -> bool:
    """Whether ``target`` names a module or object of mddframes, as written in a docstring:
    dotted from ``mddframes``, or relative to one of the ``context`` names (the object
    whose docstring it is, its class, its module and the packages above)."""
    target = target.lstrip(".~")
    candidates = [target] + [f"{c}.{target}" for c in context if c]
    return any(c.startswith("mddframes") and _resolve(c) is not _MISSING for c in candidates)


_MISSING = object()


def _resolve(dotted: str) -> Any:
    """The module or object ``dotted`` names, else ``_MISSING``."""
    import importlib

    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj: Any = importlib.import_module(".".join(parts[:cut]))
        except (ImportError, ValueError, TypeError):
            continue
        try:
            for part in parts[cut:]:
                obj = getattr(obj, part)
        except AttributeError:
            return _MISSING
        return obj
    return _MISSING


def _docstring_context(node: Any, docname: str) -> list[str]:
    """The names a docstring's bare reference is relative to: the documented object's
    own dotted name (from the node's source, ``...:docstring of mddframes.x.y.f``, else
    the stub page's name, for a signature's annotation) and each name above it, then
    the page's current module and class."""
    names: list[str] = []
    source = str(node.source or "")
    page = docname.rsplit("/", 1)[-1]
    owner = ""
    if "docstring of " in source:
        owner = source.rsplit("docstring of ", 1)[1].split(":")[0].strip()
    elif page.startswith("mddframes."):
        documented = _resolve(page)
        module, qualname = (getattr(documented, a, None) for a in ("__module__", "__qualname__"))
        if isinstance(module, str) and isinstance(qualname, str):
            owner = f"{module}.{qualname}"
    if owner:
        parts = owner.split(".")
        names += [".".join(parts[:cut]) for cut in range(len(parts), 0, -1)]
        # a Client method's docstring is its layer function's (``facade_of``)
        layer = getattr(_resolve(owner), "__wrapped_function__", None)  # _MISSING: None
        if layer is not None:
            names.append(layer.__module__)
    module, cls = node.get("py:module") or "", node.get("py:class")
    names += [f"{module}.{cls}" if cls else module, module]
    return names


def _internal_reference(app: Sphinx, env: Any, node: Any, contnode: Any) -> Any:
    """A docstring's reference to a module or object of mddframes outside the public
    reference (``mddframes.writing.engine``, a helper of a module) renders as code, not a
    link; a reference to a name the package does not have still fails the build."""
    if node.get("refdomain") != "py":
        return None
    if _exists_in_package(node["reftarget"], _docstring_context(node, env.docname)):
        return contnode
    return None


def setup(app: Sphinx) -> dict[str, Any]:
    app.connect("builder-inited", _on_builder_inited)
    app.connect("missing-reference", _internal_reference)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
