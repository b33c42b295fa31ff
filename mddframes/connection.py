"""``connect()``: settings resolved from arguments, ``MDD_*`` variables and a profile.

The one entry point of :mod:`mddframes` besides :meth:`Client.from_emulator`; it resolves
the settings (:mod:`mddframes.config`) and hands them to the frame-level
:class:`~mddframes.client.Client`.
"""

from __future__ import annotations

import os

from mddframes.client import Client
from mddframes.config import Secret, resolve_settings


def connect(
    tenant: str | None = None,
    *,
    base_url: str | None = None,
    client_id: str | None = None,
    client_secret: str | Secret | None = None,
    realm: str | None = None,
    api_prefix: str | None = None,
    timeout: float | tuple[float, float] | None = None,
    max_retries: int | None = None,
    verify: bool | str | None = None,
    max_workers: int | None = None,
    allow_insecure_http: bool | None = None,
    lock_dir: str | os.PathLike[str] | None = None,
    lock_timeout: float | None = None,
    request_deadline: float | None = None,
    max_response_bytes: int | None = None,
    backup_dir: str | os.PathLike[str] | None = None,
    max_rate: float | str | None = None,
    retry_budget: int | None = None,
    retry_after_max: float | None = None,
    profile: str | None = None,
) -> Client:
    """Connect to a tenant of the service.

    Each setting comes from its argument, else its ``MDD_*`` environment variable, else
    the profile file (see :mod:`mddframes.config`), else its default. Nothing is sent
    until the first call: the token is fetched lazily.

    Parameters
    ----------
    tenant : str, optional
        Tenant name (``MDD_TENANT``); fills ``{tenant}`` in the base URL and is the
        default realm.
    base_url : str, optional
        e.g. ``"https://{tenant}.example.com"`` (``MDD_BASE_URL``).
    client_id, client_secret : str, optional
        The API user's credentials (``MDD_CLIENT_ID``, ``MDD_CLIENT_SECRET``).
    realm : str, optional
        Token realm (``MDD_REALM``), default the tenant.
    api_prefix : str, optional
        API path prefix (``MDD_API_PREFIX``), default ``"/api/mdd-backend"``.
    timeout : float or (float, float), optional
        ``(connect, read)`` time-outs in seconds (``MDD_TIMEOUT``), default ``(5, 60)``.
    max_retries : int, optional
        Retries of GET/PUT on 429/5xx and connection errors (``MDD_MAX_RETRIES``), default 5.
    verify : bool or str, optional
        TLS verification or a CA bundle path (``MDD_VERIFY``), default ``True``.
    max_workers : int, optional
        Default concurrency of bulk calls (``MDD_MAX_WORKERS``), default 8.
    allow_insecure_http : bool, optional
        Allow plain ``http://`` to a host that is not loopback.
    lock_dir : path, optional
        The machine's folder of write locks (``MDD_LOCK_DIR``); default the user's cache
        folder. Writers on one machine queue on a lock per object there.
    lock_timeout : float, optional
        Seconds a write waits for another writer of the same object on this machine
        (``MDD_LOCK_TIMEOUT``), default 300; then a ``LockTimeoutError`` names the holder.
    request_deadline : float, optional
        Seconds one call may take in all, retries included (``MDD_REQUEST_DEADLINE``),
        default 4 times the read time-out.
    max_response_bytes : int, optional
        The largest answer read, after decompression (``MDD_MAX_RESPONSE_BYTES``), default 2 GiB.
    backup_dir : path, optional
        The root folder of the backups and journals of writes (``MDD_BACKUP_DIR``);
        default the user's data folder + ``mddframes/backups``, whatever the current
        folder. A write's own ``backup_dir`` argument wins.
    max_rate : float or str, optional
        The service's request limit, declared up front (``MDD_MAX_RATE``): requests a
        second, or ``"N/min"`` (``"400/min"``). Default none: the client's shared pace
        adapts once the service answers 429 or 503.
    retry_budget : int, optional
        Repeats of one call after 429 answers (``MDD_RETRY_BUDGET``), default 10.
    retry_after_max : float, optional
        The longest ``Retry-After`` waited, in seconds (``MDD_RETRY_AFTER_MAX``), default 60.
    profile : str, optional
        Profile of the configuration file (``MDD_PROFILE``), default ``"default"``.

    Returns
    -------
    Client

    Raises
    ------
    ConfigurationError
        If a required setting is missing or a value is invalid.

    Examples
    --------
    >>> client = mddframes.connect("acme", base_url="https://{tenant}.example.com",
    ...                            client_id="ci-bot", client_secret="...")
    >>> client.tenant  # nothing sent yet: the token is fetched by the first call
    'acme'
    >>> client.close()
    """
    settings = resolve_settings(
        tenant,
        base_url=base_url,
        client_id=client_id,
        client_secret=client_secret,
        realm=realm,
        api_prefix=api_prefix,
        timeout=timeout,
        max_retries=max_retries,
        verify=verify,
        max_workers=max_workers,
        allow_insecure_http=allow_insecure_http,
        lock_dir=lock_dir,
        lock_timeout=lock_timeout,
        request_deadline=request_deadline,
        max_response_bytes=max_response_bytes,
        backup_dir=backup_dir,
        max_rate=max_rate,
        retry_budget=retry_budget,
        retry_after_max=retry_after_max,
        profile=profile,
    )
    return Client(settings)
