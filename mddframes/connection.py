"""``connect()``: settings resolved from arguments, ``MDD_*`` variables and a profile.

The one entry point of :mod:`mddframes` besides :meth:`Client.from_emulator`; it resolves
the settings (:mod:`mddframes.config`) and hands them to the frame-level
:class:`~mddframes.client.Client`. Its keywords are the settings, typed by
:class:`~mddframes.config.SettingArguments` and documented from their declarations.
"""

from __future__ import annotations

from typing import Unpack

from mddframes.client import Client
from mddframes.config import SettingArguments, document_settings, resolve_settings


def connect(
    tenant: str | None = None,
    *,
    profile: str | None = None,
    **settings: Unpack[SettingArguments],
) -> Client:
    """Connect to a tenant of the service.

    Each setting comes from its argument, else its ``MDD_*`` environment variable, else
    the profile file (see :mod:`mddframes.config`), else its default. Nothing is sent
    until the first call: the token is fetched lazily.

    Parameters
    ----------
    {tenant}
    profile : str, optional
        Profile of the configuration file (``MDD_PROFILE``), default ``"default"``.
    {settings}

    Returns
    -------
    Client

    Raises
    ------
    ConfigurationError
        If a required setting is missing or a value is invalid.
    TypeError
        If a keyword is not a setting.

    Examples
    --------
    >>> client = mddframes.connect("acme", base_url="https://{tenant}.example.com",
    ...                            client_id="ci-bot", client_secret="...")
    >>> client.tenant  # nothing sent yet: the token is fetched by the first call
    'acme'
    >>> client.close()
    """
    return Client(resolve_settings(tenant, profile=profile, **settings))


connect.__doc__ = document_settings(connect.__doc__)
