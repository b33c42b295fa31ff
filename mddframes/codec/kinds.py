"""The kinds of object a write replaces whole: the one home of :data:`Kind`."""

from __future__ import annotations

from typing import Literal

#: A table or a mapping: the two objects the service replaces whole on a PUT.
Kind = Literal["table", "mapping"]

#: The kinds, in the order reports list them.
KINDS: tuple[Kind, ...] = ("table", "mapping")
