"""The HTTP layer, one job per module.

- :mod:`~mddframes.http.endpoints`: the operations table and path building;
- :mod:`~mddframes.http.auth`: the token provider and the bearer auth;
- :mod:`~mddframes.http.retry`: which calls are repeated, and how;
- :mod:`~mddframes.http.session`: :class:`HttpSession`, the call itself;
- :mod:`~mddframes.http.decoding`: reading answers (JSON, text, streams, files);
- :mod:`~mddframes.http.translation`: failures into ``MddError`` subclasses.
"""

from mddframes.http.auth import TokenGrant, TokenProvider, renew_margin
from mddframes.http.endpoints import ENDPOINTS, Endpoint, build_path, endpoint
from mddframes.http.retry import make_retry
from mddframes.http.session import HttpSession
from mddframes.http.translation import error_for_response

__all__ = [
    "ENDPOINTS",
    "Endpoint",
    "HttpSession",
    "TokenGrant",
    "TokenProvider",
    "build_path",
    "endpoint",
    "error_for_response",
    "make_retry",
    "renew_margin",
]
