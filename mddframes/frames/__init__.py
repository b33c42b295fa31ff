"""Loaders: decoded JSON from the raw layer -> tidy DataFrames.

Each loader is a module function taking the raw :class:`~mddframes.api.Api` first
(``read_tree(client.api, system)``); the :class:`~mddframes.client.Client` exposes the
same functions as methods. The ``*_frame`` helpers do the same work on decoded JSON alone.
"""

from mddframes.errors import TreeIntegrityWarning
from mddframes.frames.bulk_tables import (
    iter_groups,
    iter_mappings,
    iter_tables,
    read_mappings,
    read_tables,
)
from mddframes.frames.listing import (
    object_types_frame,
    packages_frame,
    raw_data_frame,
    read_object_types,
    read_packages,
    read_raw_data,
)
from mddframes.frames.structures import read_structure, read_structures, structures_frame
from mddframes.frames.tree import read_tree, tree_frame

__all__ = [
    "TreeIntegrityWarning",
    "iter_groups",
    "iter_mappings",
    "iter_tables",
    "object_types_frame",
    "packages_frame",
    "raw_data_frame",
    "read_mappings",
    "read_object_types",
    "read_packages",
    "read_raw_data",
    "read_structure",
    "read_structures",
    "read_tables",
    "read_tree",
    "structures_frame",
    "tree_frame",
]
