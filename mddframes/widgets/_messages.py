"""Errors and warnings in words, for a panel's Output area.

A notebook user who clicks a button sees no traceback they asked for: they need what
failed, for which element, and what to do next. The library's errors already name the
operation, the element and the server's message (never a secret); this module adds the
"what to do" for each kind and keeps a traceback only for errors that are bugs.
"""

from __future__ import annotations

import traceback
import warnings

from mddframes.errors import (
    AuthError,
    ConcurrentModificationError,
    ConfigurationError,
    DataShapeError,
    ExportFailedError,
    ExportTimeoutError,
    IncompletePayloadError,
    InvalidArgumentError,
    MddError,
    NotFoundError,
    PackageClosedError,
    RateLimitError,
    ServerError,
    TransportError,
    WriteVerificationError,
)

# Most specific first: the first matching class gives the advice.
_ADVICE: tuple[tuple[type[BaseException], str], ...] = (
    (
        PackageClosedError,
        "Refresh the package list and pick an open package (a closed one takes no elements).",
    ),
    (
        ExportTimeoutError,
        "The task still runs on the service: press 'Re-attach' to wait for it again.",
    ),
    (ExportFailedError, "Check the elements and the object type named above, then export again."),
    (
        ConcurrentModificationError,
        "Someone changed it since you read it: read it again and re-apply your edit.",
    ),
    (
        IncompletePayloadError,
        "Nothing was sent. Fix the rows and columns the check report names.",
    ),
    (
        WriteVerificationError,
        "The write was sent but reads back differently: compare with the backup.",
    ),
    (AuthError, "Check the client id and secret (MDD_CLIENT_ID / MDD_CLIENT_SECRET)."),
    (ConfigurationError, "Check the settings (arguments, MDD_* variables or the profile)."),
    (NotFoundError, "It may have been deleted or renamed: refresh and pick again."),
    (RateLimitError, "The service is busy: wait a minute and try again."),
    (ServerError, "The service failed: try again later, or ask its administrators."),
    (TransportError, "The service could not be reached: check the network and the base URL."),
    (InvalidArgumentError, "Change the input named above and try again."),
    (DataShapeError, "The data has an unexpected shape: see the message above."),
)


def advice_for(error: BaseException) -> str | None:
    """What a user can do about ``error``, or None when mddframes has no advice."""
    for kind, advice in _ADVICE:
        if isinstance(error, kind):
            return advice
    return None


def describe_error(action: str, error: BaseException) -> str:
    """A few lines for the Output area: what failed, why, and what to do.

    Parameters
    ----------
    action : str
        What the user asked for, e.g. ``"export of 18 elements as sql-ddl"``.
    error : BaseException
        What was raised.

    Returns
    -------
    str
        The message. Errors of mddframes are described in words; anything else is a bug
        and keeps its traceback, so nothing that was raised is lost.
    """
    lines = [f"{action} failed: {error}"]
    lines.extend(str(note) for note in getattr(error, "__notes__", ()) or ())
    advice = advice_for(error)
    if advice:
        lines.append(f"What to do: {advice}")
    if not isinstance(error, MddError):
        lines.append("This looks like a bug in mddframes; the traceback follows.")
        lines.append("".join(traceback.format_exception(error)).rstrip())
    return "\n".join(lines) + "\n"


def describe_warning(caught: warnings.WarningMessage) -> str:
    """One line for a warning caught during a panel's work."""
    return f"Warning ({caught.category.__name__}): {caught.message}\n"
