"""What every panel shares: an Output area, a progress bar, and work run off the kernel.

A panel's main button and its public blocking ``run()`` do the same thing: the button
runs it in a background thread (so the kernel stays free and the progress bar moves),
disables itself meanwhile, and keeps what was raised in ``last_error`` after writing it
into the Output area in words. ``run()`` writes the same results and errors into the
Output and also returns or raises them, so a script or a test gets the result object.
"""

from __future__ import annotations

import threading
import warnings
from collections.abc import Callable
from typing import Any, TypeVar

import ipywidgets as widgets

from mddframes.errors import BusyError
from mddframes.widgets._messages import describe_error, describe_warning

R = TypeVar("R")

# warnings.catch_warnings swaps module-global state; two threads inside it at once could
# leave the hook of one installed for good, so panels capture warnings one at a time.
_CAPTURE_LOCK = threading.Lock()


class Panel(widgets.VBox):  # type: ignore[misc]  # VBox is Any: ipywidgets has no types
    """Base of the panels: ``output``, ``progress``, background work.

    Subclasses build their widgets, pass them as ``children`` and call
    :meth:`_run_work` from ``run()``.
    """

    def __init__(self, children: list[widgets.Widget], *, css_class: str) -> None:
        self.progress = widgets.IntProgress(
            value=0, min=0, max=1, description="", layout=widgets.Layout(width="100%")
        )
        self.progress.add_class("mdd-progress")
        self.output = widgets.Output(layout=widgets.Layout(max_height="480px", overflow="auto"))
        self.output.add_class("mdd-output")
        super().__init__(children=[*children, self.progress, self.output])
        self.add_class("mdd-panel")
        self.add_class(css_class)
        self.last_result: Any = None
        self.last_error: BaseException | None = None
        self._busy = threading.Lock()
        self._thread: threading.Thread | None = None
        self._running = False  # a button's work is on its way (set before its thread starts)

    # -- results into the Output area (thread-safe: they only append to its outputs) --

    def _say(self, text: str) -> None:
        self.output.append_stdout(text if text.endswith("\n") else text + "\n")

    def _complain(self, text: str) -> None:
        self.output.append_stderr(text if text.endswith("\n") else text + "\n")

    def _show(self, value: Any) -> None:
        self.output.append_display_data(value)

    def _on_progress(self, done: int, total: int | None) -> None:
        if total is not None and total > 0 and self.progress.max != total:
            self.progress.max = total
        self.progress.value = min(done, self.progress.max)

    # -- doing the work --

    def _run_work(self, action: str, work: Callable[[], R], show: Callable[[R], None]) -> R:
        """Clear the Output, do ``work``, show its result; errors go to the Output too.

        Raises
        ------
        BusyError
            The panel's previous work still runs.
        Exception
            Whatever ``work`` raised, after it was written into the Output in words.
        """
        if not self._busy.acquire(blocking=False):
            raise BusyError(f"{action}: the panel is still busy with its previous work")
        try:
            self.output.outputs = ()
            self.progress.value = 0
            self.progress.bar_style = ""
            self.last_error = None
            with _CAPTURE_LOCK, warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                try:
                    result = work()
                finally:
                    for warning in caught:
                        self._complain(describe_warning(warning))
            self.progress.bar_style = "success"
            self.last_result = result
            show(result)
            return result
        except Exception as exc:
            self.last_error = exc
            self.progress.bar_style = "danger"
            self._complain(describe_error(action, exc))
            raise
        finally:
            self._busy.release()
            self._refresh_buttons()

    def _click_rereads(
        self, button: widgets.Button, reread: Callable[[], Any], action: str
    ) -> None:
        """Make ``button`` call ``reread`` (a quick read, on the kernel's thread); what it
        raises goes into the Output in words (``action`` names it): a click handler's
        exception would be lost."""

        def on_click(_: widgets.Button) -> None:
            try:
                reread()
            except Exception as exc:
                self._complain(describe_error(action, exc))

        button.on_click(on_click)

    def _click_runs(self, button: widgets.Button, target: Callable[[], Any]) -> None:
        """Make ``button`` run ``target`` in a background thread."""

        def on_click(_: widgets.Button) -> None:
            self._start(button, target)

        button.on_click(on_click)

    def _start(self, button: widgets.Button, target: Callable[[], Any]) -> None:
        if self.busy:
            self._complain("Still working on the previous request; wait for it to finish.")
            return
        button.disabled = True
        self._running = True

        def body() -> None:
            try:
                target()
            except Exception as exc:  # already in the Output, in words
                self.last_error = exc
            finally:
                self._running = False
                button.disabled = False
                self._refresh_buttons()

        self._thread = threading.Thread(target=body, name=f"mddframes-{type(self).__name__}")
        self._thread.daemon = True
        self._thread.start()

    @property
    def busy(self) -> bool:
        """True while the panel's work runs."""
        return self._running or self._busy.locked()

    def wait(self, timeout: float | None = None) -> Any:
        """Wait for work started by a button to end; return its result (None on error).

        Parameters
        ----------
        timeout : float, optional
            Seconds to wait at most.

        Returns
        -------
        object
            ``last_result``, or None when the work failed (see ``last_error``).
        """
        if self._thread is not None:
            self._thread.join(timeout)
            if self._thread.is_alive():
                raise TimeoutError(f"{type(self).__name__}: the work still runs")
        return None if self.last_error is not None else self.last_result

    def _refresh_buttons(self) -> None:
        """Re-derive which buttons are enabled (subclasses override)."""
