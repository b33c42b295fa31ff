"""Which tests CI runs on both pandas ends, and the check that keeps the split honest.

CI runs the whole suite once on the newest pandas (on the newest Python) and again, on the
oldest pandas supported (on Python 3.11), only the tests whose outcome can depend on
pandas' version. A test (or a whole file, through ``pytestmark``) marked ``pandas_free``
or ``pandas_once`` runs on the newest end only: ``pandas_once`` marks mechanisms (faults,
crashes, concurrency, pacing, recording) whose pandas code the conversion tests run on
both ends; it is a judgement, not checked, and ``pandas_free`` is checked (below). The mark is a claim, checked at run time instead of trusted:
on Python 3.12+ (``sys.monitoring``), while a ``pandas_free`` test's body runs, the first
call of every Python function is watched, and a test that runs code of pandas fails,
naming the function. (numpy is not watched: ``pytest.approx`` calls it in tests that use no
pandas at all.) So a mark that
stops being true -- the code under test starts using pandas -- turns CI red instead of
silently dropping a check from the oldest end. Code run in another process (a kernel, a
subprocess) is out of sight, which is why the mark goes only on tests that run in-process.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from types import CodeType

import pandas

#: folders whose code a pandas-free test must not run
WATCHED = tuple(os.path.dirname(module.__file__ or "") + os.sep for module in (pandas,))
#: a tool id sys.monitoring leaves to tools other than debuggers, coverage and profilers
TOOL_ID = 4


@contextmanager
def pandas_calls() -> Iterator[list[str]]:
    """Collect the pandas functions first called inside the block.

    Yields a list that fills as the block runs (``file:function`` entries); it stays empty
    on Python < 3.12, which has no ``sys.monitoring`` (CI's pandas-free tests run on 3.13).
    """
    found: list[str] = []
    monitoring = getattr(sys, "monitoring", None)
    if monitoring is None or monitoring.get_tool(TOOL_ID) is not None:
        yield found
        return

    def on_start(code: CodeType, offset: int) -> object:
        if code.co_filename.startswith(WATCHED) and len(found) < 5:
            found.append(f"{code.co_filename}:{code.co_qualname}")
        # each function is looked at once per block: later calls cost nothing
        return monitoring.DISABLE

    monitoring.use_tool_id(TOOL_ID, "mddframes pandas-free check")
    try:
        monitoring.register_callback(TOOL_ID, monitoring.events.PY_START, on_start)
        # functions disabled during an earlier block are looked at again in this one
        monitoring.restart_events()
        monitoring.set_events(TOOL_ID, monitoring.events.PY_START)
        yield found
    finally:
        monitoring.set_events(TOOL_ID, 0)
        monitoring.register_callback(TOOL_ID, monitoring.events.PY_START, None)
        monitoring.free_tool_id(TOOL_ID)
