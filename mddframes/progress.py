"""When progress bars show: asked for, or by default only where someone watches.

Every ``progress`` argument of mddframes means the same: ``True`` shows the bars,
``False`` hides them, ``None`` (the default) shows them on a terminal or in Jupyter only,
so a script whose stderr goes to a log file or a CI job gets no bar lines in it.
"""

from __future__ import annotations

import sys


def progress_shown(progress: bool | None) -> bool:
    """Whether to show a progress bar for a ``progress`` argument.

    Parameters
    ----------
    progress : bool or None
        ``True``/``False`` as asked; ``None``: when stderr is a terminal or the code runs
        in a Jupyter kernel.

    Returns
    -------
    bool
    """
    if progress is not None:
        return bool(progress)
    return _in_jupyter() or _stderr_is_a_terminal()


def _stderr_is_a_terminal() -> bool:
    try:
        return sys.stderr is not None and sys.stderr.isatty()
    except (AttributeError, ValueError):
        return False


def _in_jupyter() -> bool:
    shell = sys.modules.get("IPython")
    if shell is None:
        return False
    try:
        ip = shell.get_ipython()
    except Exception:  # an IPython without a running shell
        return False
    return ip is not None and "IPKernelApp" in getattr(ip, "config", {})
