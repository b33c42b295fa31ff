"""What a write did: :class:`WriteResult`.

The steps of a write are in :mod:`mddframes.writing`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from mddframes.codec import CheckReport, Diff
from mddframes.codec.kept import KeptJson
from mddframes.codec.kinds import Kind
from mddframes.codec.stream import load_document
from mddframes.writing.route import WriteRoute

Status = Literal["written", "unchanged", "dry-run"]


@dataclass(frozen=True, eq=False)
class WriteResult:
    """What a write did.

    Attributes
    ----------
    kind : {"table", "mapping"}
    object_id : str
    status : {"written", "unchanged", "dry-run"}
        ``"unchanged"``: the frame held no change, nothing was sent. ``"dry-run"``:
        the payload passed the check but was not sent.
    diff : Diff
        What the write changes compared with what the service held.
    report : CheckReport
        The completeness check of the payload: warnings only, else it would have
        been refused; a dry run of a frame read from another object returns its
        errors here instead, led by the one naming that object.
    backup : pathlib.Path or None
        The backup of what the service held before the write (None when nothing
        was sent).
    verified : bool or None
        True when the object read back after the write equals what was sent; None
        when nothing was sent.
    payload : dict
        The full payload that was (or, for a dry run, would have been) sent. A large
        table's streamed write keeps it compressed and parses it on each access.
    route : {"streamed", "parsed"}
        How the document was built (:func:`~mddframes.writing.route.choose_write_route`).
    route_reason : str
        The condition of the rule that decided it (``"streamed declined: ..."`` when the
        streamed overlay found something only the parsed route handles).
    """

    kind: Kind
    object_id: str
    status: Status
    diff: Diff
    report: CheckReport
    backup: Path | None = None
    verified: bool | None = None
    _payload: dict[str, Any] | KeptJson = field(default_factory=dict, repr=False)
    route: WriteRoute = "parsed"
    route_reason: str = ""

    @property
    def payload(self) -> dict[str, Any]:
        if isinstance(self._payload, KeptJson):
            document: dict[str, Any] = load_document(self._payload, self.kind)
            return document
        return self._payload

    def __deepcopy__(self, memo: dict[int, Any]) -> WriteResult:
        return self  # immutable; kept in frame attrs, which pandas deep-copies

    def __repr__(self) -> str:
        extra = f", backup={str(self.backup)!r}" if self.backup else ""
        verified = f", verified={self.verified}" if self.verified is not None else ""
        return (
            f"WriteResult({self.kind} {self.object_id!r}: {self.status}; "
            f"{self.diff.summary}{verified}{extra})"
        )

    def _repr_html_(self) -> str:
        import html

        head = (
            f"<p><b>{html.escape(self.kind)} {html.escape(repr(self.object_id))}: "
            f"{html.escape(self.status)}</b>"
        )
        if self.verified is not None:
            head += f", verified: {self.verified}"
        if self.backup is not None:
            head += f", backup: <code>{html.escape(str(self.backup))}</code>"
        return head + "</p>" + self.diff._repr_html_() + self.report._repr_html_()
