"""PackagePanel: add picked elements to an open deployment package.

The button runs :meth:`PackagePanel.run`, which calls ``client.add_to_package`` (it
checks the package is open before sending and reports each id).
"""

from __future__ import annotations

from typing import Any

import ipywidgets as widgets
import pandas as pd

from mddframes.errors import InvalidArgumentError, PackageClosedError
from mddframes.widgets._display import highlight_rows, id_summary
from mddframes.widgets._panel import Panel
from mddframes.widgets.picker import ElementPicker


class PackagePanel(Panel):
    """Add elements to one of a system's open deployment packages.

    Parameters
    ----------
    client : Client
    system : str
    picker : ElementPicker, optional
        A picker to reuse (default: a new one over ``system``).

    Attributes
    ----------
    package : ipywidgets.Dropdown
        The open packages; value: the package name.
    packages : pandas.DataFrame
        The open packages as last read (``client.read_packages``).
    picker : ElementPicker
    button, refresh_button : ipywidgets.Button
    count : ipywidgets.Label
        How many elements the chosen package holds.
    """

    def __init__(self, client: Any, system: str, *, picker: ElementPicker | None = None) -> None:
        self.client = client
        self.system = system
        self.picker = picker if picker is not None else ElementPicker(client, system)
        self.packages = pd.DataFrame()
        self.package = widgets.Dropdown(description="Package", options=[])
        self.package.add_class("mdd-package")
        self.refresh_button = widgets.Button(description="Refresh", icon="refresh")
        self.refresh_button.add_class("mdd-package-refresh")
        self.count = widgets.Label()
        self.count.add_class("mdd-package-count")
        self.button = widgets.Button(description="Add to package", button_style="primary")
        self.button.add_class("mdd-package-add")
        super().__init__(
            [
                widgets.HBox([self.package, self.refresh_button, self.count]),
                self.picker,
                self.button,
            ],
            css_class="mdd-package-panel",
        )
        self.package.observe(self._on_package, "value")
        self.picker.observe(lambda _: self._refresh_buttons(), "selection")
        self._click_rereads(self.refresh_button, self.refresh, "Reading the packages")
        self._click_runs(self.button, self.run)
        self.refresh()

    def refresh(self) -> pd.DataFrame:
        """Read the open packages again; keeps the chosen one when it is still open.

        Returns
        -------
        pandas.DataFrame
            The open packages.
        """
        packages = self.client.read_packages(self.system)
        if "status" in packages.columns:
            packages = packages[packages["status"].astype("string").str.upper() == "OPEN"]
        self.packages = packages.reset_index(drop=True)
        current = self.package.value
        names = self.packages["name"].astype(str).tolist() if len(self.packages) else []
        self.package.options = names
        if names:
            self.package.value = current if current in names else names[0]
        self._on_package()
        return self.packages

    def _on_package(self, _: Any = None) -> None:
        name = self.package.value
        if name is None:
            self.count.value = "no open package" if not len(self.packages) else ""
        else:
            row = self.packages[self.packages["name"].astype(str) == name].iloc[0]
            count = row.get("n_structures")
            self.count.value = f"{int(count)} element(s) in it" if pd.notna(count) else ""
        self._refresh_buttons()

    def _refresh_buttons(self) -> None:
        self.button.disabled = self.busy or self.package.value is None or not self.picker.selected

    def run(self) -> pd.DataFrame:
        """Add the selected elements to the chosen package, as the button does.

        Returns
        -------
        pandas.DataFrame
            ``add_to_package``'s result: ``id``, ``ok``, ``error``, ``already_in_package``.

        Raises
        ------
        InvalidArgumentError
            No package chosen or nothing selected.
        PackageClosedError
            The package was closed in between (the list is refreshed).
        """
        package = self.package.value
        ids = self.picker.selected
        return self._run_work(
            f"Adding {len(ids)} element(s) to package {package!r}",
            lambda: self._add(package, ids),
            self._show_result,
        )

    def _add(self, package: str | None, ids: list[str]) -> pd.DataFrame:
        if package is None:
            raise InvalidArgumentError("no open package is chosen")
        if not ids:
            raise InvalidArgumentError("no elements are selected: pick some in the list first")
        try:
            result: pd.DataFrame = self.client.add_to_package(self.system, package, ids)
        except PackageClosedError:
            self.refresh()  # the closed package leaves the list
            raise
        self.refresh()
        self._on_progress(len(ids), len(ids))
        return result

    def _show_result(self, result: pd.DataFrame) -> None:
        was_in = result["already_in_package"].fillna(False).astype(bool)
        ok = result["ok"].fillna(False).astype(bool)
        already = result["id"][was_in].tolist()
        failed = result["id"][~ok].tolist()
        added = int((ok & ~was_in).sum())
        self._say(f"Package {self.package.value!r}: {added} element(s) added.")
        if already:
            self._say(f"Already in the package (highlighted): {id_summary(already)}.")
        if failed:
            self._complain(f"Not in the package afterwards: {id_summary(failed)}.")
        self._show(highlight_rows(result, result["already_in_package"], "#fff3cd"))
