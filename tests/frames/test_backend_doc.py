"""The ``dtype_backend`` parameter is documented once and shown in every reader's help."""

from __future__ import annotations

import inspect

import pytest

import mddframes
from mddframes.frames.backends import backend_documented


def test_every_reader_taking_a_backend_shows_its_entry_in_full():
    readers = [mddframes.Client.read_table, mddframes.Client.read_mapping,
               mddframes.Client.read_object_types, mddframes.Client.read_packages,
               mddframes.Client.read_tables]  # fmt: skip
    for reader in readers:
        # cleandoc: Python 3.13 dedents docstrings itself, 3.11 keeps their indentation
        doc = inspect.cleandoc(reader.__doc__ or "")
        assert "{dtype_backend}" not in doc, reader
        assert '\ndtype_backend : {"numpy_nullable", "pyarrow"}' in doc, reader
        assert "\n    columns (values no Arrow type holds exactly stay" in doc, reader


def test_a_docstring_without_the_line_is_refused():
    def reader() -> None:
        """Reads.

        Parameters
        ----------
        dtype_backend : str
        """

    with pytest.raises(ValueError, match="no {dtype_backend} line"):
        backend_documented(reader)
