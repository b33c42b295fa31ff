"""The Client's notebook panels: :class:`Panels`, a base of :class:`~mddframes.client.Client`.

:mod:`mddframes.widgets` is imported inside each method: ipywidgets is heavy and only
notebooks need it (the one place the facade reaches the panels).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

import pandas as pd

from mddframes.codec.kinds import Kind

if TYPE_CHECKING:
    from mddframes.widgets import DeployPanel, ExportPanel, PackagePanel, WriteReview
    from mddframes.widgets.lineage_panel import LineagePanel

__all__ = ["Panels"]


class Panels:
    """Panels that export, add to a package, deploy, trace lineage and review a write."""

    def export_panel(
        self,
        system: str,
        *,
        dest: str | os.PathLike[str] = ".",
        timeout: float | None = None,
    ) -> ExportPanel:
        """A notebook panel that exports scripts of picked elements.

        See :class:`mddframes.widgets.ExportPanel`.

        Parameters
        ----------
        system : str
            The system whose elements the picker offers.
        dest : str or os.PathLike, default '.'
            Where the exported zip is written.
        timeout : float, optional
            Seconds to wait for a batch export task (the client's default when
            None).

        Returns
        -------
        mddframes.widgets.ExportPanel
            The panel (it displays itself in a notebook).
        """
        from mddframes.widgets import ExportPanel

        return ExportPanel(self, system, dest=dest, timeout=timeout)

    def package_panel(self, system: str) -> PackagePanel:
        """A notebook panel that adds picked elements to an open deployment package.

        See :class:`mddframes.widgets.PackagePanel`.

        Parameters
        ----------
        system : str
            The system whose open packages and elements the panel offers.

        Returns
        -------
        mddframes.widgets.PackagePanel
            The panel (it displays itself in a notebook).
        """
        from mddframes.widgets import PackagePanel

        return PackagePanel(self, system)

    def deploy_panel(self, system: str) -> DeployPanel:
        """A notebook panel that deploys picked elements or confirms a deployment info file.

        See :class:`mddframes.widgets.DeployPanel`.

        Parameters
        ----------
        system : str
            The system whose elements the picker offers.

        Returns
        -------
        mddframes.widgets.DeployPanel
            The panel (it displays itself in a notebook).
        """
        from mddframes.widgets import DeployPanel

        return DeployPanel(self, system)

    def lineage_panel(self, system: str) -> LineagePanel:
        """A notebook panel that traces a picked element or column upstream, downstream or
        its impact, as a frame and a drawing.

        Parameters
        ----------
        system : str
            The system whose lineage the panel reads (once, when it opens).

        Returns
        -------
        LineagePanel
            The panel; it displays itself, and ``panel.run()`` answers blocking.

        See Also
        --------
        mddframes.widgets.LineagePanel
        """
        from mddframes.widgets import LineagePanel

        return LineagePanel(self, system)

    def review_write(
        self,
        object_id: str,
        frame: pd.DataFrame,
        *,
        kind: Kind | None = None,
        allow_deletes: bool = False,
        backup_dir: str | os.PathLike[str] | None = None,
    ) -> WriteReview:
        """A notebook panel showing an edit's dry-run diff and check report, then writing it.

        See :class:`mddframes.widgets.WriteReview`.

        Parameters
        ----------
        object_id : str
            The table or mapping to write.
        frame : pandas.DataFrame
            The edited frame, as for :meth:`write_table`.
        kind : {'table', 'mapping'}, optional
            Which kind of object; by default the kind the frame was read as.
        allow_deletes : bool, default False
            Whether the write may delete rows.
        backup_dir : str or os.PathLike, optional
            Where the backup goes (the ``backup_dir`` setting when None).

        Returns
        -------
        mddframes.widgets.WriteReview
            The panel (it displays itself in a notebook).
        """
        from mddframes.widgets import WriteReview

        return WriteReview(
            self, object_id, frame, kind=kind, allow_deletes=allow_deletes, backup_dir=backup_dir
        )
