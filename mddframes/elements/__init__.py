"""New elements, deployment packages and deployment.

- :func:`create_child` creates one element; :func:`create_children` creates many from a
  frame, parents before children, where a row may name a parent created by another row
  of the same frame through a temporary ``key``;
- :func:`add_to_package` adds elements to an open deployment package, checking first
  that it is open;
- :func:`deploy`, :func:`deploy_many` and :func:`confirm_deployed` mark elements as
  deployed.

Every bulk call returns a result frame with ``id``, ``ok`` and ``error`` columns, so a
partial failure is never hidden.

The package, by job: :mod:`~mddframes.elements.creation`,
:mod:`~mddframes.elements.packages`, :mod:`~mddframes.elements.deployment`, and
:mod:`~mddframes.elements.records` for what they share.
"""

from mddframes.elements.creation import create_child, create_children, creation_order
from mddframes.elements.deployment import confirm_deployed, deploy, deploy_many
from mddframes.elements.packages import add_to_package
from mddframes.elements.records import element_series
from mddframes.errors import PartialFailureWarning

__all__ = [
    "PartialFailureWarning",
    "add_to_package",
    "confirm_deployed",
    "create_child",
    "create_children",
    "creation_order",
    "deploy",
    "deploy_many",
    "element_series",
]
