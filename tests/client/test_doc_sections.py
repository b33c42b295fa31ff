"""Shared docstring entries are written once and show in full wherever they are used."""

from __future__ import annotations

import inspect
import re

import pytest

import mddframes
from mddframes.doc_sections import documented, documented_with, filled

_PLACEHOLDER = re.compile(r"^\s*\{\w+\}\s*$", re.M)


def test_a_line_is_filled_at_its_own_indent_kept_or_dedented():
    # Python 3.11 and 3.12 keep a docstring's indentation, 3.13 dedents it
    for indent in ("    ", ""):
        doc = f"Reads.\n\n{indent}Parameters\n{indent}----------\n{indent}{{progress}}\n"
        text, names = filled(doc)
        assert names == {"progress"}
        assert f"\n{indent}progress : bool, optional\n{indent}    Show progress" in text
        assert "{progress}" not in text


def test_a_line_naming_no_section_is_refused():
    with pytest.raises(ValueError, match="{max_worker} names no shared section"):
        filled("Reads.\n\n    {max_worker}\n")


def test_a_docstring_with_nothing_to_fill_is_refused():
    def reader() -> None:
        """Reads; its entries are written out, none is left to fill."""

    with pytest.raises(ValueError, match="no {name} line"):
        documented(reader)
    with pytest.raises(ValueError, match="no {extra} line"):
        documented_with({"extra": "extra : int"}, "extra")(reader)


def test_sections_given_beside_the_shared_ones_are_filled_too():
    def reader() -> None:
        """Reads.

        Parameters
        ----------
        {api}
        {extra}
        """

    doc = inspect.cleandoc(documented_with({"extra": "extra : int\n    More."})(reader).__doc__)
    assert "\napi : Api\n    The raw layer (``client.api``).\nextra : int\n    More." in doc


def _client_methods():
    return [
        (name, member)
        for name, member in inspect.getmembers(mddframes.Client, inspect.isfunction)
        if not name.startswith("_")
    ]


@pytest.mark.parametrize("parameter", ["max_workers", "progress"])
def test_every_client_method_documents_its_shared_parameters_in_full(parameter):
    seen = 0
    for name, method in _client_methods():
        if parameter not in inspect.signature(method).parameters:
            continue
        seen += 1
        doc = inspect.cleandoc(method.__doc__ or "")
        assert not _PLACEHOLDER.search(doc), name
        entry = re.search(rf"^{parameter} : [^\n]+\n    \S[^\n]+", doc, re.M)
        assert entry is not None, (name, parameter)
    assert seen >= 10  # the bulk reads, writes, exports, deploys, search, snapshot


def _layer_functions():
    """The public functions users call with ``client.api`` as their first argument."""
    import mddframes.frames
    import mddframes.lineage
    import mddframes.tables_as_code
    import mddframes.writing

    found = {}
    for package in (mddframes, mddframes.frames, mddframes.writing, mddframes.lineage,
                    mddframes.tables_as_code):  # fmt: skip
        for name in getattr(package, "__all__", []):
            member = getattr(package, name)
            if inspect.isfunction(member) and list(inspect.signature(member).parameters)[:1] == [
                "api"
            ]:
                found[f"{package.__name__}.{name}"] = member
    return found


def test_every_layer_function_documents_its_api_in_full():
    functions = _layer_functions()
    assert len(functions) >= 10  # readers, writers, lineage, tables as code
    for name, function in functions.items():
        doc = inspect.cleandoc(function.__doc__ or "")
        assert not _PLACEHOLDER.search(doc), name
        assert re.search(r"^api : Api[^\n]*\n    \S", doc, re.M), name
