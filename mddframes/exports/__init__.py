"""Script exports: single scripts, asynchronous batch tasks and their zip archives.

The service generates the output script of one element synchronously
(``externalExportStructure``) and of many elements as an asynchronous task
(``structureMassExportAsync`` + status + result). This module wraps both:

- :class:`Script` is one generated script (file name and text), shown as highlighted
  code in a notebook;
- :class:`ExportTask` follows a batch task: status, a polling :meth:`ExportTask.wait`
  with back-off, a time-out that hands back the task id, download and extraction;
- :func:`export_batch` runs start, wait and download, and on a service without batch
  export falls back to concurrent single exports that build the same zip layout
  (:func:`mddframes.archive.archive_entry_name`, shared by both paths); the zip is an
  :class:`mddframes.archive.ExportArchive`.

The package, by job: :mod:`~mddframes.exports.scripts` (single scripts),
:mod:`~mddframes.exports.tasks` (batch tasks), :mod:`~mddframes.exports.batch`
(start, wait and download, or the fallback).
"""

from mddframes.errors import LegacyExportWarning
from mddframes.exports.batch import export_batch
from mddframes.exports.scripts import Script, export_script, export_scripts
from mddframes.exports.tasks import ExportStatus, ExportTask, poll_intervals, start_export

__all__ = [
    "ExportStatus",
    "ExportTask",
    "LegacyExportWarning",
    "Script",
    "export_batch",
    "export_script",
    "export_scripts",
    "poll_intervals",
    "start_export",
]
