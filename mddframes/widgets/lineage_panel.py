"""LineagePanel: pick an element or one of its columns, see what feeds it or what it feeds.

The system's lineage is read once (``client.read_lineage``); the button runs
:meth:`LineagePanel.run`, which asks :class:`~mddframes.Lineage` the chosen question and
shows the answer's frame and its drawing (:func:`mddframes.lineage.draw`).
"""

from __future__ import annotations

from typing import Any

import ipywidgets as widgets

from mddframes.errors import InvalidArgumentError
from mddframes.lineage import Lineage, LineageAnswer, draw
from mddframes.widgets._panel import Panel
from mddframes.widgets.picker import ElementPicker

#: The questions the panel asks, in the order of its toggle.
QUESTIONS: tuple[str, ...] = ("upstream", "downstream", "impact")

_WHOLE_ELEMENT = ""  # the column choice that means the element itself


class LineagePanel(Panel):
    """Trace an element or a column of a system upstream, downstream, or its impact.

    Parameters
    ----------
    client : Client
    system : str
    picker : ElementPicker, optional
        A picker to reuse (default: a new one over ``system``); the first selected
        element is the one traced.

    Attributes
    ----------
    lineage : Lineage
        The system's lineage as read when the panel was made (``refresh()`` reads it
        again).
    picker : ElementPicker
    column : ipywidgets.Dropdown
        The chosen element's columns that mappings read or write; ``""`` = the element.
    question : ipywidgets.ToggleButtons
        ``"upstream"``, ``"downstream"`` or ``"impact"`` (impact needs a column).
    button, refresh_button : ipywidgets.Button

    Examples
    --------
    >>> panel = client.lineage_panel("FLOW")
    >>> panel.picker.select(["flow-02"]); panel.column.value = "amount"
    >>> panel.question.value = "impact"
    >>> panel.run().to_frame()[["element_name", "column", "depth"]]  # what the button shows
            element_name        column  depth
    0          stg_sales        amount      1
    1  sales_by_customer  total_amount      2
    2       sales_by_day  total_amount      2
    3     customer_value    value_band      3
    """

    def __init__(self, client: Any, system: str, *, picker: ElementPicker | None = None) -> None:
        self.client = client
        self.system = system
        self.picker = picker if picker is not None else ElementPicker(client, system)
        self.column = widgets.Dropdown(description="Column", options=[("(element)", "")])
        self.column.add_class("mdd-lineage-column")
        self.question = widgets.ToggleButtons(options=list(QUESTIONS), value="upstream")
        self.question.add_class("mdd-lineage-question")
        self.refresh_button = widgets.Button(description="Re-read", icon="refresh")
        self.refresh_button.add_class("mdd-lineage-refresh")
        self.button = widgets.Button(description="Trace", button_style="primary")
        self.button.add_class("mdd-lineage-trace")
        super().__init__(
            [
                self.picker,
                widgets.HBox([self.column, self.question, self.refresh_button]),
                self.button,
            ],
            css_class="mdd-lineage-panel",
        )
        self.lineage = self.refresh()
        self.picker.observe(lambda _: self._on_element(), "selection")
        self.column.observe(lambda _: self._refresh_buttons(), "value")
        self.question.observe(lambda _: self._refresh_buttons(), "value")
        self._click_rereads(self.refresh_button, self.refresh, "Reading the lineage")
        self._click_runs(self.button, self.run)

    def refresh(self) -> Lineage:
        """Read the system's lineage again.

        Returns
        -------
        Lineage
            The lineage now traced.
        """
        self.lineage = Lineage(
            self.client.read_lineage(self.system, progress=False, on_progress=self._on_progress)
        )
        self._on_element()
        return self.lineage

    @property
    def element(self) -> str | None:
        """The element traced: the first one selected in the picker (None if none)."""
        selected = self.picker.selected
        return selected[0] if selected else None

    def _on_element(self) -> None:
        element = self.element
        columns = sorted(self.lineage.columns_of.get(element, ())) if element else []
        self.column.options = [("(element)", _WHOLE_ELEMENT), *[(c, c) for c in columns]]
        self.column.value = _WHOLE_ELEMENT
        self._refresh_buttons()

    def _refresh_buttons(self) -> None:
        element = self.element
        impact_without_column = self.question.value == "impact" and not self.column.value
        self.button.disabled = (
            self.busy
            or element is None
            or element not in self.lineage.names
            or impact_without_column
        )

    def run(self) -> LineageAnswer:
        """Ask the chosen question of the chosen element or column, as the button does.

        Returns
        -------
        LineageAnswer
            Shown in the Output as its frame and its drawing.

        Raises
        ------
        InvalidArgumentError
            Nothing picked, an element no mapping touches, or impact without a column.
        """
        element, column, question = self.element, self.column.value, self.question.value
        target = element if not column else f"{element}.{column}"
        return self._run_work(
            f"Tracing {question} of {target!r}",
            lambda: self._ask(element, column, question),
            self._show_answer,
        )

    def _ask(self, element: str | None, column: str, question: str) -> LineageAnswer:
        if element is None:
            raise InvalidArgumentError("no element is picked: pick one in the list first")
        address: str | tuple[str, str] = (element, column) if column else element
        if question == "impact":
            answer = self.lineage.impact(address)
        elif question == "downstream":
            answer = self.lineage.downstream(address)
        else:
            answer = self.lineage.upstream(address)
        self._on_progress(1, 1)
        return answer

    def _show_answer(self, answer: LineageAnswer) -> None:
        from io import BytesIO

        from IPython.display import Image
        from matplotlib.figure import Figure

        frame = answer.to_frame()
        self._say(f"{answer.question} of {answer.start!r}: {len(frame)} found.")
        self._show(frame)
        if len(frame):
            # a Figure without pyplot: drawn off the kernel's thread, never shown twice
            figure = Figure(figsize=(10, max(3.0, 0.35 * len(frame))))
            draw(answer, ax=figure.subplots())
            png = BytesIO()
            figure.savefig(png, format="png", dpi=90, bbox_inches="tight")
            # an explicit PNG: outside a kernel a Figure has no image formatter
            image = Image(data=png.getvalue(), format="png")  # type: ignore[no-untyped-call]
            self._show(image)
