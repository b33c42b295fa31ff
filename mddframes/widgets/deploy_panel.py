"""DeployPanel: mark picked elements as deployed, or confirm a deployment info file.

"Deploy" runs :meth:`DeployPanel.run` (``client.deploy_many``); "Confirm" runs
:meth:`DeployPanel.confirm` (``client.confirm_deployed`` with the uploaded file).
"""

from __future__ import annotations

from typing import Any

import ipywidgets as widgets
import pandas as pd

from mddframes.errors import InvalidArgumentError
from mddframes.widgets._display import highlight_rows, id_summary
from mddframes.widgets._panel import Panel
from mddframes.widgets.picker import ElementPicker


class DeployPanel(Panel):
    """Deploy elements under a deployment id, or confirm a deployment info file.

    Parameters
    ----------
    client : Client
    system : str
    picker : ElementPicker, optional
        A picker to reuse (default: a new one over ``system``).

    Attributes
    ----------
    deployment_id : ipywidgets.Text
    picker : ElementPicker
    button : ipywidgets.Button
        "Deploy".
    upload : ipywidgets.FileUpload
        A deployment info file (JSON) made by the service's "push to git" action.
    confirm_button : ipywidgets.Button
    """

    def __init__(self, client: Any, system: str, *, picker: ElementPicker | None = None) -> None:
        self.client = client
        self.system = system
        self.picker = picker if picker is not None else ElementPicker(client, system)
        self.deployment_id = widgets.Text(
            description="Deployment", placeholder="e.g. deploy-2024-07-15.1"
        )
        self.deployment_id.add_class("mdd-deploy-id")
        self.button = widgets.Button(description="Deploy", button_style="primary")
        self.button.add_class("mdd-deploy-button")
        self.upload = widgets.FileUpload(accept=".json", multiple=False, description="Info file")
        self.upload.add_class("mdd-deploy-upload")
        self.confirm_button = widgets.Button(
            description="Confirm deployment", layout=widgets.Layout(width="auto")
        )
        self.confirm_button.add_class("mdd-confirm-button")
        super().__init__(
            [
                self.deployment_id,
                self.picker,
                self.button,
                widgets.HTML("<b>Or confirm a deployment info file:</b>"),
                widgets.HBox([self.upload, self.confirm_button]),
            ],
            css_class="mdd-deploy-panel",
        )
        self.deployment_id.observe(lambda _: self._refresh_buttons(), "value")
        self.picker.observe(lambda _: self._refresh_buttons(), "selection")
        self.upload.observe(lambda _: self._refresh_buttons(), "value")
        self._click_runs(self.button, self.run)
        self._click_runs(self.confirm_button, self.confirm)
        self._refresh_buttons()

    def _refresh_buttons(self) -> None:
        self.button.disabled = (
            self.busy or not self.deployment_id.value.strip() or not self.picker.selected
        )
        self.confirm_button.disabled = self.busy or not self.upload.value

    def run(self) -> pd.DataFrame:
        """Mark the selected elements as deployed, as the Deploy button does.

        Returns
        -------
        pandas.DataFrame
            ``deploy_many``'s result: ``id``, ``deployment_id``, ``ok``, ``error``.
        """
        ids = self.picker.selected
        deployment = self.deployment_id.value.strip()
        return self._run_work(
            f"Deploying {len(ids)} element(s) as {deployment!r}",
            lambda: self._deploy(ids, deployment),
            self._show_result,
        )

    def _deploy(self, ids: list[str], deployment: str) -> pd.DataFrame:
        if not deployment:
            raise InvalidArgumentError("the deployment id is empty: type one first")
        if not ids:
            raise InvalidArgumentError("no elements are selected: pick some in the list first")
        result: pd.DataFrame = self.client.deploy_many(
            ids, deployment, progress=False, on_progress=self._on_progress
        )
        return result

    def confirm(self, info: Any = None) -> pd.DataFrame:
        """Confirm a deployment info file, as the Confirm button does.

        Parameters
        ----------
        info : path, dict, str or bytes, optional
            The deployment info; default: the uploaded file.

        Returns
        -------
        pandas.DataFrame
            ``confirm_deployed``'s result: ``id``, ``version``, ``deployment_id``, ``ok``,
            ``error``.
        """
        return self._run_work(
            "Confirming the deployment info file",
            lambda: self._confirm(info),
            self._show_result,
        )

    def _confirm(self, info: Any) -> pd.DataFrame:
        if info is None:
            if not self.upload.value:
                raise InvalidArgumentError("no deployment info file is uploaded")
            info = bytes(self.upload.value[0]["content"])
        result: pd.DataFrame = self.client.confirm_deployed(info)
        self._on_progress(len(result), len(result))
        return result

    def _show_result(self, result: pd.DataFrame) -> None:
        ok = result["ok"].fillna(False).astype(bool)
        failed = result["id"][~ok].tolist()
        self._say(f"{int(ok.sum())} of {len(result)} element(s) deployed.")
        if failed:
            self._complain(f"Failed (highlighted, see 'error'): {id_summary(failed)}.")
        self._show(highlight_rows(result, ~ok, "#f8d7da"))
