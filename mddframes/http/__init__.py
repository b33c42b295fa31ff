"""The HTTP layer: endpoints table, token provider, session with retries and error translation."""

from mddframes.http.auth import TokenGrant, TokenProvider, renew_margin
from mddframes.http.endpoints import ENDPOINTS, Endpoint, build_path, endpoint
from mddframes.http.session import HttpSession, error_for_response, make_retry

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
