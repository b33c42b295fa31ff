"""A throwaway JupyterLab server for browser tests, and a side door into its kernel.

The module is not named ``jupyterlab.py`` on purpose: pytest puts this folder on
``sys.path``, where such a name would shadow the real package.

:class:`LabServer` starts JupyterLab on 127.0.0.1 with a free port, a random token and
its config, runtime, settings and workspace folders in a temporary folder, so nothing
outside that folder is read or written. Stopping it ends the server and, by pid, every
process it started that outlives it (kernels run in their own process group, so ending
the server's group is not enough). :meth:`LabServer.kernel` connects to the notebook's
running kernel with jupyter_client, so a test can ask the kernel about its state without
putting test code into the notebook.
"""

from __future__ import annotations

import json
import os
import secrets
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import psutil
import requests

#: The JupyterLab settings that keep the news and update pop-ups from covering the page.
_NOTIFICATION_SETTINGS = {"fetchNews": "false", "checkForUpdates": False}


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class LabServer:
    """A JupyterLab server serving ``root``, with all its state under ``home``.

    Parameters
    ----------
    root : Path
        The folder JupyterLab serves (notebooks are opened relative to it).
    home : Path
        An empty temporary folder for the config, runtime, settings and workspace
        folders and the server's log.
    """

    def __init__(self, root: Path, home: Path) -> None:
        self.root = Path(root)
        self.home = Path(home)
        self.port = free_port()
        self.token = secrets.token_hex(16)
        self.runtime_dir = self.home / "runtime"
        self.log_path = self.home / "jupyterlab.log"
        self._process: subprocess.Popen[bytes] | None = None
        self._known: dict[int, psutil.Process] = {}

    def __repr__(self) -> str:  # the token is a credential of the server: never shown
        return f"LabServer(root={str(self.root)!r}, port={self.port}, token='***')"

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def environment(self) -> dict[str, str]:
        """The environment of the server and its kernels: every Jupyter folder in ``home``."""
        env = dict(os.environ)
        env.update(
            JUPYTER_CONFIG_DIR=str(self.home / "config"),
            JUPYTER_RUNTIME_DIR=str(self.runtime_dir),
            JUPYTERLAB_SETTINGS_DIR=str(self.home / "settings"),
            JUPYTERLAB_WORKSPACES_DIR=str(self.home / "workspaces"),
            # the server's notebook secret and signatures, and the kernel's IPython history
            JUPYTER_DATA_DIR=str(self.home / "data"),
            IPYTHONDIR=str(self.home / "ipython"),
        )
        return env

    def start(self, timeout: float = 60.0) -> None:
        """Start the server and wait until ``/api/status`` answers."""
        settings = self.home / "settings" / "@jupyterlab" / "apputils-extension"
        settings.mkdir(parents=True, exist_ok=True)
        (settings / "notification.jupyterlab-settings").write_text(
            json.dumps(_NOTIFICATION_SETTINGS)
        )
        command = [
            sys.executable,
            "-m",
            "jupyterlab",
            "--no-browser",
            "--allow-root",
            "--ServerApp.ip=127.0.0.1",
            f"--ServerApp.port={self.port}",
            "--ServerApp.port_retries=0",
            f"--ServerApp.root_dir={self.root}",
            f"--IdentityProvider.token={self.token}",
        ]
        with self.log_path.open("wb") as log:
            self._process = subprocess.Popen(
                command,
                cwd=self.root,
                env=self.environment(),
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self._process.poll() is not None:
                raise RuntimeError(
                    f"JupyterLab exited with code {self._process.returncode} before answering; "
                    f"its log ({self.log_path}) ends:\n{self.log_tail()}"
                )
            try:
                if self.api("GET", "/api/status", timeout=2).ok:
                    return
            except requests.ConnectionError:
                pass
            time.sleep(0.2)
        raise TimeoutError(
            f"JupyterLab did not answer /api/status within {timeout:.0f} s; "
            f"its log ({self.log_path}) ends:\n{self.log_tail()}"
        )

    def log_tail(self, lines: int = 30) -> str:
        """The last lines of the server's log (for failure messages)."""
        if not self.log_path.exists():
            return "(no log)"
        return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])

    def api(self, method: str, path: str, **kw: Any) -> requests.Response:
        """Call the server's REST API with the token in the header (never in the URL)."""
        kw.setdefault("timeout", 10)
        headers = {"Authorization": f"token {self.token}", **kw.pop("headers", {})}
        return requests.request(method, self.base_url + path, headers=headers, **kw)

    def lab_url(self, notebook: str) -> str:
        """The URL that opens ``notebook`` in a fresh layout, logged in by the token."""
        return f"{self.base_url}/lab/tree/{notebook}?reset&token={self.token}"

    def sessions(self) -> list[dict[str, Any]]:
        """The server's notebook sessions (each with its kernel)."""
        response = self.api("GET", "/api/sessions")
        response.raise_for_status()
        return list(response.json())

    def delete_sessions(self) -> None:
        """End every session, so the next run starts with a fresh kernel."""
        for session in self.sessions():
            self.api("DELETE", f"/api/sessions/{session['id']}")

    def kernel_state(self, notebook: str) -> str | None:
        """The execution state of the kernel of ``notebook`` (``None``: no kernel yet)."""
        self._remember_children()
        for session in self.sessions():
            if session.get("path") == notebook and session.get("kernel"):
                return str(session["kernel"].get("execution_state"))
        return None

    def kernel_id(self, notebook: str) -> str:
        """The id of the running kernel of ``notebook``."""
        for session in self.sessions():
            if session.get("path") == notebook and session.get("kernel"):
                return str(session["kernel"]["id"])
        raise LookupError(f"no kernel runs for {notebook!r}")

    @contextmanager
    def kernel(self, notebook: str) -> Iterator[KernelProbe]:
        """A :class:`KernelProbe` connected to the running kernel of ``notebook``."""
        from jupyter_client import BlockingKernelClient

        self._remember_children()
        connection = self.runtime_dir / f"kernel-{self.kernel_id(notebook)}.json"
        kc = BlockingKernelClient(connection_file=str(connection))
        kc.load_connection_file()
        kc.start_channels()
        try:
            kc.wait_for_ready(timeout=30)
            yield KernelProbe(kc)
        finally:
            kc.stop_channels()

    def _remember_children(self) -> None:
        # recorded while the server runs: once it is gone its orphans can't be found by parent
        if self._process is None:
            return
        try:
            for child in psutil.Process(self._process.pid).children(recursive=True):
                self._known.setdefault(child.pid, child)
        except psutil.NoSuchProcess:
            pass

    def stop(self) -> None:
        """End the server (SIGTERM, then SIGKILL) and every process of it that outlives it."""
        if self._process is None:
            return
        self._remember_children()
        if self._process.poll() is None:
            self._process.terminate()
            try:
                self._process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait(timeout=10)
        # psutil.Process remembers each process's start time, so a pid reused since is
        # left alone: only the very processes recorded above are ended
        survivors = [p for p in self._known.values() if p.is_running()]
        for process in survivors:
            try:
                process.terminate()
            except psutil.NoSuchProcess:
                pass
        _, alive = psutil.wait_procs(survivors, timeout=5)
        for process in alive:
            try:
                process.kill()
            except psutil.NoSuchProcess:
                pass
        psutil.wait_procs(alive, timeout=5)
        self._process = None

    def __enter__(self) -> LabServer:
        try:
            self.start()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


class KernelProbe:
    """Evaluates expressions in a running kernel, silently (no history, no outputs)."""

    def __init__(self, kc: Any) -> None:
        self._kc = kc

    def eval(self, expression: str, timeout: float = 30.0) -> Any:
        """The value of a Python ``expression`` in the kernel (its repr must be a literal).

        The expression runs as a silent user expression, so the notebook's execution
        counter and outputs are untouched.
        """
        import ast

        msg_id = self._kc.execute(
            "", silent=True, store_history=False, user_expressions={"value": expression}
        )
        deadline = time.monotonic() + timeout
        while True:
            reply = self._kc.get_shell_msg(timeout=max(0.1, deadline - time.monotonic()))
            if reply["parent_header"].get("msg_id") == msg_id:
                break
        result = reply["content"]["user_expressions"]["value"]
        if result.get("status") != "ok":
            raise RuntimeError(
                f"the kernel could not evaluate {expression!r}: "
                f"{result.get('ename')}: {result.get('evalue')}"
            )
        return ast.literal_eval(result["data"]["text/plain"])
