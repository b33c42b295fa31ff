"""Batch export tasks: rendered in background threads, polled, and served as a zip.

A task renders its elements one by one, waiting ``seconds_per_element`` after each,
so its duration grows with its size. Admin controls can hold a task RUNNING for a
number of status polls or seconds (even when its work is done), or make it fail.

Zip entry names: ``<safe element id>__<file name from render_script>``. The safe id
keeps ASCII letters, digits, ``.``, ``-`` and ``_``, replaces every other character
and every leading dot by ``_``; when that changed the id, the first 8
hex digits of the SHA-1 of the id are appended (``tbl_with_slash-1a2b3c4d``), so
entries stay unique and never contain a path separator.
"""

from __future__ import annotations

import hashlib
import io
import itertools
import logging
import re
import threading
import time
import zipfile
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypedDict

logger = logging.getLogger(__name__)

Renderer = Callable[[str, str], tuple[str, str]]
"""``render(structure_id, object_type_id) -> (file name, text)``."""

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]")


class TaskStatus(TypedDict):
    """The ``getExportTaskStatus`` answer."""

    taskId: str
    status: str
    total: int
    done: int
    message: str | None


def safe_id(structure_id: str) -> str:
    """The file-name-safe form of an element id (see the module docstring)."""
    safe = _UNSAFE.sub("_", structure_id)
    stripped = safe.lstrip(".")
    safe = "_" * (len(safe) - len(stripped)) + stripped  # no hidden or dot-only names
    if safe != structure_id or not safe:
        safe = f"{safe}-{hashlib.sha1(structure_id.encode('utf-8')).hexdigest()[:8]}"
    return safe


def zip_entry_name(structure_id: str, file_name: str) -> str:
    """The name of an element's script inside the batch export zip."""
    if "/" in file_name or "\\" in file_name or file_name in ("", ".", ".."):
        file_name = _UNSAFE.sub("_", file_name) or "script"
    return f"{safe_id(structure_id)}__{file_name}"


@dataclass
class ExportTask:
    """One batch export and its progress."""

    task_id: str
    structure_ids: list[str]
    object_type_id: str
    status: str = "RUNNING"  # the work's own state: RUNNING, FINISHED or FAILED
    done: int = 0
    message: str | None = None
    result: bytes | None = None
    hold_polls: int = 0
    hold_until: float = 0.0
    fail_at: int | None = None
    fail_message: str | None = None
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @property
    def total(self) -> int:
        return len(self.structure_ids)

    def _held(self) -> bool:
        return self.status != "FAILED" and (
            self.hold_polls > 0 or time.monotonic() < self.hold_until
        )

    def visible_status(self) -> str:
        """The status a client sees now (a held task shows RUNNING)."""
        with self.lock:
            return "RUNNING" if self._held() else self.status

    def poll(self) -> TaskStatus:
        """The status record of one status call; a poll uses up one held poll."""
        with self.lock:
            status = "RUNNING" if self._held() else self.status
            if self.hold_polls > 0:
                self.hold_polls -= 1
            return {
                "taskId": self.task_id,
                "status": status,
                "total": self.total,
                "done": self.done,
                "message": self.message,
            }


@dataclass
class _Pending:
    polls: int = 0
    seconds: float = 0.0
    fail_message: str | None = None


class TaskManager:
    """Starts, tracks and stops export tasks.

    Parameters
    ----------
    render : Renderer
        Renders one element with one object type.
    seconds_per_element : float
        Time each element takes (the task's duration grows with its size).
    """

    def __init__(self, render: Renderer, seconds_per_element: float = 0.002) -> None:
        self._render = render
        self.seconds_per_element = seconds_per_element
        self._tasks: dict[str, ExportTask] = {}
        self._threads: list[threading.Thread] = []
        self._numbers = itertools.count(1)
        self._pending = _Pending()
        self._lock = threading.Lock()
        self._stop = threading.Event()

    def start(self, structure_ids: list[str], object_type_id: str) -> ExportTask:
        """Create a task and start rendering it in a background thread."""
        with self._lock:
            task = ExportTask(
                f"task-{next(self._numbers):06d}", list(structure_ids), object_type_id
            )
            pending, self._pending = self._pending, _Pending()
            task.hold_polls = pending.polls
            if pending.seconds:
                task.hold_until = time.monotonic() + pending.seconds
            if pending.fail_message is not None:
                task.fail_at = task.total // 2
                task.fail_message = pending.fail_message
            self._tasks[task.task_id] = task
            self._threads = [t for t in self._threads if t.is_alive()]
            thread = threading.Thread(
                target=self._run, args=(task,), name=f"emulator-{task.task_id}", daemon=True
            )
            self._threads.append(thread)
        thread.start()
        return task

    def get(self, task_id: str) -> ExportTask | None:
        """The task of that id, if any."""
        with self._lock:
            return self._tasks.get(task_id)

    def hold_next(self, polls: int = 0, seconds: float = 0.0) -> None:
        """The next task started stays RUNNING for ``polls`` status polls and ``seconds``."""
        with self._lock:
            self._pending.polls, self._pending.seconds = polls, seconds

    def fail_next(self, message: str) -> None:
        """The next task started fails half-way with ``message``."""
        with self._lock:
            self._pending.fail_message = message

    def clear(self) -> None:
        """Forget all tasks and pending controls (running threads stop soon)."""
        with self._lock:
            for task in self._tasks.values():
                with task.lock:
                    if task.status == "RUNNING":
                        task.status, task.message = "FAILED", "the emulator was reset"
            self._tasks.clear()
            self._pending = _Pending()

    def shutdown(self, timeout: float = 5.0) -> None:
        """Stop every task thread and wait for them."""
        self._stop.set()
        with self._lock:
            threads = list(self._threads)
        for thread in threads:
            thread.join(timeout)

    @staticmethod
    def hold(task: ExportTask, polls: int = 0, seconds: float = 0.0) -> None:
        """Keep ``task`` RUNNING for ``polls`` more status polls and ``seconds`` from now."""
        with task.lock:
            task.hold_polls = polls
            task.hold_until = time.monotonic() + seconds if seconds else 0.0

    @staticmethod
    def fail(task: ExportTask, message: str) -> None:
        """End ``task`` as FAILED with ``message`` now."""
        with task.lock:
            task.status, task.message, task.result = "FAILED", message, None
            task.hold_polls, task.hold_until = 0, 0.0

    def _run(self, task: ExportTask) -> None:
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
            for position, structure_id in enumerate(task.structure_ids):
                with task.lock:
                    if task.status != "RUNNING":
                        return
                    if task.fail_at is not None and position >= task.fail_at:
                        task.status, task.message = "FAILED", task.fail_message
                        return
                try:
                    file_name, text = self._render(structure_id, task.object_type_id)
                except Exception as exc:  # a template error fails the task, as a server would
                    logger.warning(
                        "export %s: element %r failed: %s", task.task_id, structure_id, exc
                    )
                    with task.lock:
                        task.status = "FAILED"
                        task.message = f"element {structure_id!r} could not be exported: {exc}"
                    return
                archive.writestr(zip_entry_name(structure_id, file_name), text)
                with task.lock:
                    task.done = position + 1
                if self.seconds_per_element and self._stop.wait(self.seconds_per_element):
                    return
        with task.lock:
            if task.status == "RUNNING":
                task.result = buffer.getvalue()
                task.status = "FINISHED"
                task.message = f"exported {task.total} element(s)"
