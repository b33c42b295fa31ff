"""What one client finds out about its service: the API prefix and the token realm.

The service description shows ``/api/mdd-backend`` only on the asynchronous paths
(wire-format row 2) and writes the token realm as ``tenat`` (row 4: a literal realm or
a typo for the tenant). The configured values are tried first; when the service answers
404 to them, the alternative is tried once, and whichever works is kept for the rest of
the client's life and logged (``client.api.http.discovery.report()`` lists it). A 2xx
answer settles the configured value, so a service that matches the settings costs
nothing more.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass, field
from typing import Literal

from mddframes.config import Settings
from mddframes.wire.profile import API_PREFIX as DEFAULT_API_PREFIX
from mddframes.wire.profile import LITERAL_REALM as LITERAL_REALM  # (read from here too)

logger = logging.getLogger(__name__)

# the warnings of a value found other than the configured one (that one, then the found)
_OTHER_PREFIX = (
    "the synchronous operations answer without the configured prefix %r, under %r: using "
    "it for this client (docs/wire-format.md row 2; set api_prefix to skip the probe)"
)
_OTHER_REALM = (
    "the token realm %r is unknown to the service; %r granted a token: using it for this "
    "client (docs/wire-format.md row 4; set realm to skip the probe)"
)


@dataclass
class Discovery:
    """The prefix of the synchronous operations and the token realm, once known.

    Attributes
    ----------
    sync_prefix : str or None
        The prefix the synchronous operations answered under; ``None`` until one did.
    realm : str or None
        The realm a token was granted under; ``None`` until one was.
    """

    settings: Settings
    sync_prefix: str | None = None
    realm: str | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def prefixes(self) -> list[str]:
        """The prefixes to try for a synchronous operation, the one to use first."""
        if self.sync_prefix is not None:
            return [self.sync_prefix]
        configured = self.settings.api_prefix
        return [configured, "" if configured else DEFAULT_API_PREFIX]

    def realms(self) -> list[str]:
        """The realms to try for a token, the one to use first."""
        if self.realm is not None:
            return [self.realm]
        configured = self.settings.realm
        other = LITERAL_REALM if configured != LITERAL_REALM else self.settings.tenant
        return [configured] + ([other] if other and other != configured else [])

    def settle_prefix(self, prefix: str) -> None:
        """Remember the prefix the synchronous operations answered under."""
        self._settle("sync_prefix", prefix, self.settings.api_prefix, _OTHER_PREFIX)

    def settle_realm(self, realm: str) -> None:
        """Remember the realm a token was granted under."""
        self._settle("realm", realm, self.settings.realm, _OTHER_REALM)

    def _settle(
        self, name: Literal["sync_prefix", "realm"], found: str, configured: str, warning: str
    ) -> None:
        # the first answer wins (concurrent first calls may each find one); a value that
        # is not the configured one is logged once, with ``configured`` and ``found``
        with self._lock:
            if getattr(self, name) is None:
                setattr(self, name, found)
                if found != configured:
                    logger.warning(warning, configured, found)

    def report(self) -> dict[str, object]:
        """What was configured and what was found (``None``: not found out yet)."""
        return {
            "api_prefix": self.settings.api_prefix,
            "sync_prefix": self.sync_prefix,
            "realm": self.settings.realm,
            "token_realm": self.realm,
        }


def base_url_looks_like_api(base_url: str, api_prefix: str = DEFAULT_API_PREFIX) -> bool:
    """Whether ``base_url`` looks like an API address rather than the service's root.

    The token URL is built from the root; a base URL that already holds the API prefix
    or an ``/api`` segment (say, the emulator's ``api:`` line) makes every realm 404.
    """
    path = base_url.split("://", 1)[-1].partition("/")[2].rstrip("/")
    segments = path.split("/")
    return bool(path) and (api_prefix.strip("/") in path or "api" in segments)
