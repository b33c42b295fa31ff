"""Running the emulator: :func:`serve` (background thread) and :func:`run_foreground` (CLI).

uvicorn serves a socket this module binds itself, so port 0 gives a free port without
a race, and a taken port fails at once instead of hanging. Its HTTP protocol class is
subclassed only to register each connection's transport, which the "dropped
connection" fault needs (see :mod:`mddframes.emulator.faults`).
"""

from __future__ import annotations

import contextlib
import logging
import os
import socket
import threading
import time
from collections.abc import Iterator, Sequence
from typing import Any, TypeVar

import requests
import uvicorn
from requests.adapters import HTTPAdapter
from urllib3.util.retry import Retry
from uvicorn.protocols.http.auto import AutoHTTPProtocol

from mddframes.emulator.app import TOKEN_PATH, create_app
from mddframes.emulator.churn import token_churn
from mddframes.emulator.dataset import Dataset
from mddframes.emulator.faults import CONNECTIONS
from mddframes.emulator.state import API_PREFIX, DEMO_CLIENT_ID, EmulatorConfig, EmulatorState
from mddframes.wire.dialects import DIALECTS, Dialect, check_dialect
from mddframes.wire.profile import LITERAL_REALM

logger = logging.getLogger(__name__)


# uvicorn declares AutoHTTPProtocol as a variable of type[asyncio.Protocol] (httptools' or
# h11's class, chosen at import), which mypy does not accept as a base class
class _TrackedHTTPProtocol(AutoHTTPProtocol):  # type: ignore[misc, valid-type]
    """uvicorn's HTTP protocol, registering its transport while the connection lives."""

    def connection_made(self, transport: Any) -> None:
        super().connection_made(transport)
        CONNECTIONS.add(self.server, self.client, transport)

    def connection_lost(self, exc: Exception | None) -> None:
        CONNECTIONS.remove(self.server, self.client)
        super().connection_lost(exc)


class AdminCallError(RuntimeError):
    """An ``/_emulator/`` admin call or the handle's token request was refused."""


_T = TypeVar("_T")


def _answer_part(value: object, kind: type[_T], what: str) -> _T:
    """``value`` when it is a ``kind``; else :class:`AdminCallError` naming ``what``."""
    if not isinstance(value, kind):
        # the type only: a token must not end up in a message
        raise AdminCallError(f"{what} is a {type(value).__name__}, not a {kind.__name__}")
    return value


def _bind(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # proto IPPROTO_TCP (not 0) so asyncio sets TCP_NODELAY on accepted connections;
    # without it every response waits on Nagle's algorithm (docs/performance.md)
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise OSError(
            f"the emulator cannot listen on {host}:{port}: {exc.strerror or exc}"
        ) from exc
    sock.listen(128)
    sock.setblocking(False)
    return sock


def _uvicorn_server(state: EmulatorState) -> uvicorn.Server:
    config = uvicorn.Config(
        create_app(state),
        http=_TrackedHTTPProtocol,
        lifespan="off",
        log_level="warning",
        access_log=False,
        timeout_graceful_shutdown=3,
    )
    return uvicorn.Server(config)


class EmulatorHandle:
    """A running emulator: where it is, its credentials, and admin helpers.

    The admin helpers are thin wrappers over HTTP calls to ``/_emulator/...``; see
    docs/internals.md ("The emulator handle"). The client secret is never shown by
    ``repr``.
    """

    def __init__(
        self,
        base_url: str,
        config: EmulatorConfig,
        state: EmulatorState | None = None,
    ) -> None:
        self.base_url = base_url
        self.tenant = config.tenant
        self.realm = config.tenant
        self.api_prefix = config.api_prefix
        self.dialect = config.dialect
        # the realm the token endpoint answers under (``realm`` is the default a user
        # would configure; in the literal-realm dialect the client must discover this one)
        self.token_realm = (
            LITERAL_REALM if DIALECTS[config.dialect].kind == "realm" else config.tenant
        )
        self.client_id = config.client_id
        self.client_secret = config.client_secret
        self._state = state
        self._session = requests.Session()
        # the server closes a connection idle past its keep-alive (uvicorn: 5 s); one
        # reused just then is reset before the request is read: sent once more, on a
        # new connection (the control channel's calls are safe to repeat)
        self._session.mount(
            "http://", HTTPAdapter(max_retries=Retry(total=1, allowed_methods=None, status=0))
        )
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return (
            f"EmulatorHandle(base_url={self.base_url!r}, tenant={self.tenant!r}, "
            f"client_id={self.client_id!r}, client_secret='***')"
        )

    @property
    def api_url(self) -> str:
        """``base_url`` plus the API prefix."""
        return self.base_url + self.api_prefix

    @property
    def token_url(self) -> str:
        """The token endpoint of the emulator's realm."""
        return self.base_url + TOKEN_PATH.format(realm=self.token_realm)

    def close(self) -> None:
        """Close the handle's HTTP session."""
        self._session.close()

    def token(self) -> str:
        """A fresh access token (client_credentials grant)."""
        with self._lock:
            response = self._session.post(
                self.token_url,
                data={
                    "grant_type": "client_credentials",
                    "client_id": self.client_id,
                    "client_secret": self.client_secret,
                },
                timeout=10,
            )
        if response.status_code != 200:
            raise AdminCallError(
                f"token request refused: {response.status_code} {response.text[:200]}"
            )
        answer = _answer_part(response.json(), dict, "the token answer")
        return _answer_part(answer["access_token"], str, "the token answer's access_token")

    def _admin(self, method: str, path: str, body: dict[str, Any] | None = None) -> dict[str, Any]:
        url = f"{self.base_url}/_emulator{path}"
        with self._lock:
            response = self._session.request(method, url, json=body, timeout=60)
        if response.status_code >= 400:
            try:
                message = response.json().get("message", response.text)
            except ValueError:
                message = response.text
            raise AdminCallError(f"{method} {url} failed with {response.status_code}: {message}")
        return _answer_part(response.json(), dict, f"the answer to {method} {url}")

    # data
    def reset(self) -> None:
        """Back to the starting data and settings; no tasks, faults or counts."""
        self._admin("POST", "/reset")

    def load_sample(self) -> dict[str, int]:
        """Serve the deterministic sample data; returns record counts."""
        return self._admin("POST", "/load-sample")

    def load_scale(self, n: int) -> dict[str, int]:
        """Serve scale data of ``n`` elements; returns record counts."""
        return self._admin("POST", "/load-scale", {"elements": n})

    def info(self) -> dict[str, Any]:
        """Settings and record counts (no secret)."""
        return self._admin("GET", "/info")

    def close_package(self, system: str, name: str) -> dict[str, Any]:
        """Close a deployment package; returns it."""
        return self._admin("POST", "/packages/close", {"system": system, "name": name})

    def make_deployment_info(
        self, structure_ids: Sequence[str], deployment_id: str | None = None
    ) -> dict[str, Any]:
        """The deployment info document the UI's "push to git" action would write."""
        return self._admin(
            "POST",
            "/deployment-info",
            {"structureIds": list(structure_ids), "deploymentId": deployment_id},
        )

    def touch_table(self, table_id: str) -> dict[str, Any]:
        """Change one value of a table behind the client's back; returns what changed."""
        from urllib.parse import quote

        return self._admin("POST", f"/tables/{quote(table_id, safe='')}/touch")

    # export tasks
    def hold_next_task(self, polls: int | None = None, seconds: float | None = None) -> None:
        """The next export task stays RUNNING for ``polls`` status polls and ``seconds``."""
        self._admin("POST", "/tasks/hold-next", {"polls": polls or 0, "seconds": seconds or 0})

    def hold_task(
        self, task_id: str, polls: int | None = None, seconds: float | None = None
    ) -> None:
        """Keep a task RUNNING for ``polls`` more status polls and ``seconds`` from now."""
        from urllib.parse import quote

        self._admin(
            "POST",
            f"/tasks/{quote(task_id, safe='')}/hold",
            {"polls": polls or 0, "seconds": seconds or 0},
        )

    def fail_next_task(self, message: str = "export failed (injected)") -> None:
        """The next export task fails half-way with ``message``."""
        self._admin("POST", "/tasks/fail-next", {"message": message})

    def fail_task(self, task_id: str, message: str = "export failed (injected)") -> None:
        """End a task as FAILED now."""
        from urllib.parse import quote

        self._admin("POST", f"/tasks/{quote(task_id, safe='')}/fail", {"message": message})

    # faults and settings
    def inject_faults(
        self,
        latency: float = 0.0,
        error_rate: float = 0.0,
        error_statuses: Sequence[int] = (500, 502, 503),
        rate_limit_rate: float = 0.0,
        retry_after: int = 1,
        drop_rate: float = 0.0,
        seed: int = 0,
        operations: Sequence[str] | None = None,
        *,
        rate_limit_rps: float = 0.0,
        rate_limit_burst: int = 2,
        retry_after_style: str = "seconds",
        lose_answer_rate: float = 0.0,
        lose_answer_methods: Sequence[str] = ("PUT", "POST"),
        lose_answer_status: int | None = None,
    ) -> None:
        """Inject faults into the service's operations (see :class:`FaultSettings`).

        ``rate_limit_rps``/``rate_limit_burst`` enforce a token bucket shared by every
        connection (429 with ``Retry-After`` as ``retry_after_style`` says:
        ``"seconds"``, ``"http-date"`` or ``"none"``); ``lose_answer_rate`` carries out
        that share of the requests of ``lose_answer_methods`` and then closes the
        connection instead of answering (or answers ``lose_answer_status``, a 5xx, as a
        gateway does after the service behind it acted).
        """
        self._admin(
            "PUT",
            "/faults",
            {
                "rate_limit_rps": rate_limit_rps,
                "rate_limit_burst": rate_limit_burst,
                "retry_after_style": retry_after_style,
                "lose_answer_rate": lose_answer_rate,
                "lose_answer_methods": list(lose_answer_methods),
                "lose_answer_status": lose_answer_status,
                "latency": latency,
                "error_rate": error_rate,
                "error_statuses": list(error_statuses),
                "rate_limit_rate": rate_limit_rate,
                "retry_after": retry_after,
                "drop_rate": drop_rate,
                "seed": seed,
                "operations": None if operations is None else list(operations),
            },
        )

    def clear_faults(self) -> None:
        """No more faults."""
        self._admin("DELETE", "/faults")

    def set_token_ttl(self, seconds: float) -> None:
        """Lifetime of tokens issued from now on."""
        self._admin("PUT", "/token-ttl", {"seconds": seconds})

    def revoke_tokens(self) -> int:
        """Invalidate every token issued so far; returns how many were active."""
        answer = self._admin("POST", "/tokens/revoke")
        return _answer_part(answer["revoked"], int, "the revoke answer's count")

    def churn_tokens(
        self, every: float, *, ttl: float | None = None
    ) -> contextlib.AbstractContextManager[list[int]]:
        """Revoke every token each ``every`` seconds while the ``with`` block runs
        (tokens living ``ttl`` meanwhile): :func:`mddframes.emulator.churn.token_churn`."""
        return token_churn(self, every, ttl=ttl)

    def set_legacy(self, flag: bool) -> None:
        """``True``: behave as a service without batch export (404 on start)."""
        self._admin("PUT", "/legacy", {"legacy": bool(flag)})

    def counters(self) -> dict[str, int]:
        """Requests received per operation id, including ones answered by a fault."""
        answer = self._admin("GET", "/counters")
        return _answer_part(answer["requests"], dict, "the counters answer's requests")

    def fault_counters(self) -> dict[str, int]:
        """Requests per operation id that an injected fault answered."""
        answer = self._admin("GET", "/counters")
        return _answer_part(answer["faulted"], dict, "the counters answer's faulted")

    def reset_counters(self) -> None:
        """Forget all counts."""
        self._admin("DELETE", "/counters")


def _wait_started(
    server: uvicorn.Server,
    thread: threading.Thread,
    failure: list[BaseException],
    startup_timeout: float,
) -> None:
    """Return once ``server`` accepts connections; raise if it stopped or took too long."""
    deadline = time.monotonic() + startup_timeout
    while not server.started:
        if failure or not thread.is_alive():
            raise RuntimeError(
                f"the emulator stopped while starting: {failure[0] if failure else 'unknown reason'}"
            )
        if time.monotonic() > deadline:
            raise TimeoutError(f"the emulator did not start within {startup_timeout} s")
        time.sleep(0.01)


@contextlib.contextmanager
def serve(
    *,
    db: str | None = None,
    elements: int | None = None,
    token_ttl: float = 300,
    legacy: bool = False,
    export_seconds_per_element: float = 0.002,
    tenant: str = "acme",
    host: str = "127.0.0.1",
    port: int = 0,
    client_id: str = DEMO_CLIENT_ID,
    client_secret: str | None = None,
    startup_timeout: float = 10,
    dataset: Dataset | None = None,
    dialect: Dialect = "default",
    replay: str | os.PathLike[str] | None = None,
    dialect_from: str | os.PathLike[str] | None = None,
    misfits: bool = False,
) -> Iterator[EmulatorHandle]:
    """Run an emulator in a background thread for the duration of a ``with`` block.

    Parameters
    ----------
    db : str, optional
        SQLite file that keeps the state across runs; ``None`` keeps it in memory.
        A file that already holds data is served as it is.
    elements : int, optional
        Serve scale data of that many elements instead of the sample.
    token_ttl : float
        Token lifetime in seconds.
    legacy : bool
        Behave as a service without batch export.
    export_seconds_per_element : float
        Time a batch export task spends per element.
    tenant : str
        Tenant name, also the token realm.
    host, port : str, int
        Where to listen; port 0 picks a free port.
    client_id, client_secret : str
        The API user's credentials; the secret is random per run unless given.
    startup_timeout : float
        Seconds to wait for the server to accept connections.
    dataset : Dataset, optional
        Serve this instead of sample or scale data (tests).
    dialect : str
        A variation of the wire format the real service might have, served by every
        route: ``default``, ``spring-page``, ``snake-case``, ``nested-tree``,
        ``unprefixed``, ``literal-realm`` or ``etag`` (:mod:`mddframes.emulator.dialects`).
    replay : path, optional
        A recording (``mddframes record``, ``Client.recording``): serve the state it saw,
        in its dialect, prefix and realm (:mod:`mddframes.emulator.replay`); ``dataset``,
        ``elements``, ``tenant`` and ``dialect`` are then taken from it.
    dialect_from : path, optional
        A recording: serve the sample data in the dialect, prefix and realm learned
        from it (:mod:`mddframes.emulator.recordings`).
    misfits : bool, default False
        Serve the sample with one column whose values do not fit its declared type
        (``external_ref`` of ``tbl-0001`` declared ``BIGINT``, holding integers beyond
        64 bits): reads of it raise a ``DeclaredTypeWarning``. The default sample has none.

    Yields
    ------
    EmulatorHandle
    """
    config = EmulatorConfig(
        tenant=tenant,
        client_id=client_id,
        token_ttl=token_ttl,
        legacy=legacy,
        export_seconds_per_element=export_seconds_per_element,
        db=db,
        elements=elements,
        dialect=check_dialect(dialect),
        misfits=misfits,
    )
    if client_secret is not None:
        config.client_secret = client_secret
    played = apply_recording(config, replay, dialect_from)
    if played is not None:
        dataset = played.dataset
    sock = _bind(host, port)
    state: EmulatorState | None = None
    server: uvicorn.Server | None = None
    thread: threading.Thread | None = None
    handle: EmulatorHandle | None = None
    failure: list[BaseException] = []
    try:
        state = EmulatorState(config, dataset)
        state.replay = played
        server = _uvicorn_server(state)

        def run() -> None:
            try:
                server.run(sockets=[sock])
            except BaseException as exc:  # reported to the caller below
                failure.append(exc)

        thread = threading.Thread(target=run, name="mddframes-emulator", daemon=True)
        thread.start()
        _wait_started(server, thread, failure, startup_timeout)
        bound_host, bound_port = sock.getsockname()[:2]
        url_host = f"[{bound_host}]" if ":" in bound_host else bound_host
        handle = EmulatorHandle(f"http://{url_host}:{bound_port}", config, state)
        logger.info("emulator listening on %s", handle.base_url)
        yield handle
    finally:
        if handle is not None:
            handle.close()
        if server is not None:
            server.should_exit = True
        if thread is not None:
            thread.join(timeout=15)
            if thread.is_alive():
                logger.warning("the emulator thread did not stop within 15 s")
        if state is not None:
            state.close()
        sock.close()


def apply_recording(
    config: EmulatorConfig,
    replay: str | os.PathLike[str] | None,
    dialect_from: str | os.PathLike[str] | None,
) -> Any:
    """Set ``config``'s dialect, prefix and tenant from a recording; the replay, if any.

    Returns
    -------
    Replay or None
        The recording to serve (``replay``), else None.
    """
    if replay is None and dialect_from is None:
        return None
    from mddframes.emulator.recordings import Recording, learn
    from mddframes.emulator.replay import load_replay

    played = load_replay(replay) if replay is not None else None
    learned = played.learned if played is not None else learn(Recording.read(str(dialect_from)))
    config.dialect = check_dialect(learned.dialect)
    config.api_prefix = learned.served_prefix
    if learned.tenant and learned.tenant != LITERAL_REALM:
        config.tenant = learned.tenant
    for line in learned.uncovered:
        logger.warning("the recording differs in a way the emulator does not serve: %s", line)
    return played


def banner_lines(config: EmulatorConfig, base_url: str, *, show_secret: bool) -> list[str]:
    """What ``mddframes emulator`` prints: where it listens and how to connect to it.

    The ``export MDD_...=`` lines are the settings :func:`mddframes.connect` reads; the
    base URL is the root (the token URL hangs off it), not the ``api`` address. The
    secret is the emulator's throwaway one, printed only when ``show_secret`` (stdout is
    a terminal), so a banner captured in a log or CI output does not carry it.
    """
    realm = LITERAL_REALM if DIALECTS[config.dialect].kind == "realm" else config.tenant
    if show_secret:
        secret_line = f"  export MDD_CLIENT_SECRET={config.client_secret}"
    else:
        secret_line = (
            "  # MDD_CLIENT_SECRET: not printed (stdout is not a terminal); choose it with "
            "--client-secret or MDD_EMULATOR_CLIENT_SECRET"
        )
    lines = [
        f"mddframes emulator listening on {base_url}",
        "Connect with (mddframes.connect() and the mddframes commands read these):",
        f"  export MDD_BASE_URL={base_url}",
        f"  export MDD_TENANT={config.tenant}",
        f"  export MDD_CLIENT_ID={config.client_id}",
        secret_line,
    ]
    if config.api_prefix != API_PREFIX:
        lines.append(f"  export MDD_API_PREFIX={config.api_prefix}")
    lines += [
        f"  api (not the base URL): {base_url}{config.api_prefix}",
        f"  swagger ui:    {base_url}{config.api_prefix}/swagger-ui/index.html",
        f"  dialect:       {config.dialect}",
        f"  tenant/realm:  {config.tenant}/{realm}",
        f"  token url:     {base_url}{TOKEN_PATH.format(realm=realm)}",
        f"  client id:     {config.client_id}",
        "Press Ctrl-C to stop.",
    ]
    return lines


def run_foreground(
    config: EmulatorConfig,
    host: str = "127.0.0.1",
    port: int = 0,
    announce: Any = print,
    *,
    show_secret: bool | None = None,
    replay: str | os.PathLike[str] | None = None,
    dialect_from: str | os.PathLike[str] | None = None,
) -> int:
    """Serve in the current thread until interrupted (Ctrl-C); for the command line.

    ``show_secret``: print the client secret in the banner; by default only when stdout
    is a terminal. ``replay``, ``dialect_from``: as :func:`serve`'s.
    """
    if show_secret is None:
        show_secret = _stdout_is_terminal()
    played = apply_recording(config, replay, dialect_from)
    sock = _bind(host, port)
    state = EmulatorState(config, played.dataset if played is not None else None)
    state.replay = played
    if played is not None:
        announce(
            f"replaying {played.name}: {len(played.recording.calls)} recorded calls, "
            f"dialect {config.dialect}"
        )
    try:
        server = _uvicorn_server(state)
        bound_host, bound_port = sock.getsockname()[:2]
        for line in banner_lines(
            config, f"http://{bound_host}:{bound_port}", show_secret=show_secret
        ):
            announce(line)
        server.run(sockets=[sock])
    finally:
        state.close()
        sock.close()
    return 0


def _stdout_is_terminal() -> bool:
    import sys

    try:
        return sys.stdout.isatty()
    except (AttributeError, ValueError):
        return False
