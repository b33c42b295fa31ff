"""Loaders: decoded JSON from the client -> tidy DataFrames.

Each loader is a module function taking the client first (``read_tree(client,
system)``); the :class:`~mddframes.client.Client` exposes the same functions as
methods. The pure helpers (:func:`tree_frame`) work on decoded JSON alone.
"""

from mddframes.frames.tree import TreeIntegrityWarning, read_tree, tree_frame

__all__ = [
    "TreeIntegrityWarning",
    "read_tree",
    "tree_frame",
]
