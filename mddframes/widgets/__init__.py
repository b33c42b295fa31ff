"""Notebook panels (ipywidgets 8) that drive exports, packages, deployment, writes and lineage.

Every panel is a plain ipywidgets container that displays itself, takes a
:class:`~mddframes.Client`, and calls only public, separately tested functions of
mddframes. Its main button runs the same work as its public blocking ``run()`` in a
background thread, drives the panel's progress bar and writes results and errors (in
words) into the panel's Output area.

>>> panel = client.export_panel("DWH", dest="exports")
>>> panel  # in a notebook: pick elements, an object type, press Export
ExportPanel(...)
>>> panel.picker.select(["dwh-0064"])
>>> archive = panel.run()  # or script it: the same work, blocking
"""

from mddframes.errors import BusyError  # its home is the error tree; kept here too
from mddframes.widgets._panel import Panel
from mddframes.widgets.deploy_panel import DeployPanel
from mddframes.widgets.edit_grid import EditGrid, edit
from mddframes.widgets.edit_model import EditModel
from mddframes.widgets.export_panel import ExportPanel, covering_object_types
from mddframes.widgets.lineage_panel import LineagePanel
from mddframes.widgets.package_panel import PackagePanel
from mddframes.widgets.picker import ElementPicker
from mddframes.widgets.review import WriteReview

__all__ = [
    "BusyError",
    "DeployPanel",
    "EditGrid",
    "EditModel",
    "ElementPicker",
    "ExportPanel",
    "LineagePanel",
    "PackagePanel",
    "Panel",
    "WriteReview",
    "covering_object_types",
    "edit",
]
