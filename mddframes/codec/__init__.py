"""Lossless payload <-> frame conversion, the completeness check and the diff.

No HTTP here: everything works on parsed JSON, so every rule is tested by properties alone.

- :func:`from_payload` -- a table or mapping payload -> DataFrame (index = row position).
- :func:`to_payload` -- edited frame + original payload -> the full payload to send,
  overlaying only the cells that changed; :func:`overlay` also says where each row
  came from (what :func:`check_payload` and :func:`diff_payloads` use to match rows).
- :func:`check_payload` -> :class:`CheckReport` (errors refuse a write).
- :func:`diff_payloads` -> :class:`Diff` (changed cells, added and deleted rows).
- :data:`ABSENT` -- the marker of a key a row does not have (in diffs and reports).
"""

from mddframes.codec.check import CheckReport, check_payload
from mddframes.codec.diff import Diff, diff_payloads
from mddframes.codec.frame import from_payload
from mddframes.codec.frame_overlay import Overlay, overlay, to_payload
from mddframes.codec.values import ABSENT

__all__ = [
    "ABSENT",
    "CheckReport",
    "Diff",
    "Overlay",
    "check_payload",
    "diff_payloads",
    "from_payload",
    "overlay",
    "to_payload",
]
