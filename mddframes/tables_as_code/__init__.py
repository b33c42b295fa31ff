"""Tables as code: a system's tables and mappings as files in git, planned and applied.

- :func:`pull_folder` -- write every table and mapping of a system into a folder, one file
  per object (CSV with a sidecar, JSON, or xlsx; :mod:`.files` has the formats).
- :func:`plan_folder` -- compare the folder with what the service holds now, through the
  safe writer's dry run: per object unchanged, N cells changed, rows added or deleted,
  or refused with the completeness check's report. Sends nothing.
- :func:`apply_plan` -- write exactly the planned changes through the write journal,
  refusing any object whose files or service content moved since the plan.

The command line's ``mddframes pull / plan / apply`` call these; README "Tables as
code" has a pipeline example.
"""

from mddframes.tables_as_code.apply import APPLY_COLUMNS, apply_plan
from mddframes.tables_as_code.files import ObjectFile, read_object, write_object
from mddframes.tables_as_code.plan import Plan, PlannedObject, plan_folder
from mddframes.tables_as_code.pull import pull_folder

__all__ = [
    "APPLY_COLUMNS",
    "ObjectFile",
    "Plan",
    "PlannedObject",
    "apply_plan",
    "plan_folder",
    "pull_folder",
    "read_object",
    "write_object",
]
