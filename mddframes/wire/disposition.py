"""The file name a ``Content-Disposition`` header gives (docs/wire-format.md row 21).

A generated script comes as ``attachment; filename="<ascii>"; filename*=UTF-8''<utf-8>``;
the client names the script from it, the recorder redacts it, and the emulator's replay
serves a recorded one again, all by this one reading of the header.
"""

from __future__ import annotations

from email.message import Message
from email.utils import collapse_rfc2231_value


def disposition_file_name(value: str) -> str | None:
    """The file name a ``Content-Disposition`` value gives (RFC 6266/2231), as sent.

    ``filename*`` (RFC 2231-encoded, parsed as a tuple) wins over the plain ``filename``,
    which servers send as an ASCII fallback (``"Zürich.md"`` -> ``"Z_rich.md"``).

    Parameters
    ----------
    value : str
        The header's value (``""`` when the answer has none).

    Returns
    -------
    str or None
        The file name, stripped; None when the header names none.
    """
    if not value:
        return None
    message = Message()
    message["Content-Disposition"] = value
    params = message.get_params(header="content-disposition", failobj=[])[1:]
    names = [v for k, v in params if k.lower() == "filename"]
    extended = [v for v in names if isinstance(v, tuple)]
    chosen = extended[0] if extended else (names[0] if names else None)
    return collapse_rfc2231_value(chosen).strip() if chosen else None
