"""Sphinx configuration of the mddframes documentation (``bash scripts/docs`` builds it).

Built with warnings as errors and nitpicky cross-references (``-W --keep-going -n``) and
offline: no intersphinx (these machines and CI reach only the package registries), so
the external names the signatures and docstrings mention are listed below for nitpicky
mode to ignore instead of linking them.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parent
REPOSITORY = DOCS.parent
sys.path.insert(0, str(REPOSITORY))  # this checkout's mddframes, not an installed one
sys.path.insert(0, str(DOCS / "_ext"))

import mddframes  # noqa: E402

project = "mddframes"
author = "mddframes contributors"
copyright = "mddframes contributors"
release = version = mddframes.__version__

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "numpydoc",
    "sphinxarg.ext",  # sphinx-argparse: the command line page from the parser itself
    "myst_nb",  # Markdown pages and the notebooks
    "mdd_reference",  # docs/_ext: the reference pages from mddframes.__all__
]

source_suffix = {".rst": "restructuredtext", ".md": "myst-nb", ".ipynb": "myst-nb"}
root_doc = "index"
exclude_patterns = ["_build", "**.ipynb_checkpoints", "README.md"]
templates_path: list[str] = []

html_theme = "pydata_sphinx_theme"
html_title = f"mddframes {release}"
html_theme_options = {
    "navigation_with_keys": False,
    "header_links_before_dropdown": 4,  # guide, notebooks, reference, command line
    "show_toc_level": 2,
    "secondary_sidebar_items": ["page-toc"],
}
html_static_path = ["_static"]
html_css_files = ["mddframes.css"]
# the pages outside a section (the command line, settings...) have no section to navigate:
# no empty left sidebar for them
html_sidebars = {
    page: []
    for page in ("index", "cli", "settings", "internals", "wire-format", "performance",
                 "contributing", "changelog", "notebooks")
}  # fmt: skip
html_show_sourcelink = False

# the notebooks: committed without outputs, executed here against the embedded emulator
# (each starts its own, on a free port) so the site shows their frames and charts; a cell
# that fails fails the build. Each runs in a temporary folder, as in tests/client/test_notebooks.py.
nb_execution_mode = "force"
nb_execution_raise_on_error = True
nb_execution_show_tb = True
nb_execution_timeout = 600
nb_execution_in_temp = True
myst_enable_extensions = ["colon_fence", "deflist", "substitution"]
# numbers the pages quote, taken from the code so that they cannot drift
from mddframes.emulator import scale as _scale  # noqa: E402

myst_substitutions = {
    "scale_table_every": _scale.TABLE_EVERY,
    "scale_mapping_every": _scale.MAPPING_EVERY,
}
myst_heading_anchors = 3

# autodoc / autosummary: the stubs are written by docs/_ext/mdd_reference.py
autosummary_generate = False
autodoc_typehints = "signature"
autodoc_member_order = "bysource"
autodoc_default_options = {"exclude-members": "__init__, __new__"}
add_module_names = False

# numpydoc renders the docstrings' sections; classes list their members through autodoc,
# so numpydoc's own member tables (which would need stubs of their own) are off
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False
# numpydoc's validation of every documented docstring; a failure is a build warning, so
# an error under -W. The checks enforced:
#   PR01 a parameter of the signature is not documented
#   PR02 a documented parameter is not in the signature
#   PR03 the parameters are documented in another order than the signature's
#   RT01 no Returns section although the function returns something
#   GL06 a section numpydoc does not know (a typo such as "Return", "Example")
#   GL07 the sections are in another order than numpydoc's
# (the summary-style checks, SS*/ES01/SA01/EX01, are left out: many short docstrings say
# what they need in one line, and an Examples section is asked for where a user looks,
# not on every function)
numpydoc_validation_checks = {"PR01", "PR02", "PR03", "RT01", "GL06", "GL07"}
# Not validated: the constructors of the errors and of the result and value classes
# mddframes builds and hands out (a user reads their attributes, never calls them), and
# the widgets' base Panel (its parameters are ipywidgets.VBox's).
numpydoc_validation_exclude = {
    r"\.__init__$",  # documented on the class
    r"^mddframes\.(errors\.|widgets\.)?\w+(Error|Warning)$",
    r"^mddframes\.(BulkResult|CheckReport|Diff|ExportArchive|LineageAnswer|Plan|Script|WriteResult)$",
    r"^mddframes\.tables_as_code\.(ObjectFile|PlannedObject)$",
    r"^mddframes\.widgets\.Panel$",
}

# nitpicky mode (-n): every cross-reference must resolve. No inventory of Python's or the
# libraries' documentation is available offline, so their names are ignored here:
nitpicky = True
_EXTERNAL_MODULES = (
    "pandas", "pd", "numpy", "np", "pyarrow", "pa", "polars", "pl", "requests",
    "urllib3", "ipywidgets", "traitlets", "openpyxl", "tqdm", "fastapi", "uvicorn",
    "starlette", "filelock", "ijson", "orjson", "collections", "typing", "pathlib",
    "os", "io", "datetime", "decimal", "concurrent", "threading", "logging", "json",
    "csv", "zipfile", "argparse", "types", "contextlib", "enum", "re", "uuid",
    "http", "email", "hashlib", "tempfile", "subprocess", "abc", "_io", "typing_extensions",
    "socket", "ssl", "queue", "builtins", "numbers", "dataclasses", "functools",
    "weakref", "warnings", "inspect", "sqlite3", "asyncio", "importlib", "zoneinfo",
)  # fmt: skip
nitpick_ignore_regex = [
    # typing as the annotations import it, and a few annotations autodoc splits badly
    (r"py:.*", r"(t|Path|TypeVar)(\..*)?"),
    (r"py:.*", r"(list|dict|tuple|set|type)\[.*"),
    (r"py:.*", rf"({'|'.join(_EXTERNAL_MODULES)})(\..*)?"),
    # matplotlib's Axes (lineage.draw), imported for type checking only, so shown bare
    (r"py:class", r"Axes"),
    # Client.recording's Recorder (mddframes.recording), imported for type checking only
    (r"py:class", r"Recorder"),
    # Python's built-in types, as annotations name them
    (
        r"py:.*",
        r"(str|int|float|bool|bytes|bytearray|object|dict|list|tuple|set|frozenset|"
        r"None|NoneType|type|Exception|BaseException|Warning|UserWarning|RuntimeWarning|"
        r"ValueError|TypeError|KeyError|RuntimeError|OSError|LookupError|TimeoutError|"
        r"ConnectionError|FileNotFoundError|PermissionError|NotImplementedError|"
        r"Ellipsis|ellipsis|memoryview|range|slice|callable|iterable|Any|Self|"
        r"Callable|Iterable|Iterator|Mapping|Sequence|Literal|TypeAlias|NoReturn|"
        r"Generator|MutableMapping|Hashable|ContextManager|BinaryIO|TextIO|IO)",
    ),
]


def _copy_notebooks(app: object) -> None:
    """The notebooks, copied into the (git-ignored) source folder as committed."""
    target = DOCS / "notebooks"
    if target.exists():
        shutil.rmtree(target)
    target.mkdir()
    for notebook in sorted((REPOSITORY / "notebooks").glob("*.ipynb")):
        shutil.copy2(notebook, target / notebook.name)


def setup(app: object) -> None:
    app.connect("builder-inited", _copy_notebooks, priority=400)  # type: ignore[attr-defined]
