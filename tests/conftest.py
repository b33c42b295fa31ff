"""Shared fixtures: one real emulator per test session, reached over loopback HTTP.

Under pytest-xdist each worker is a session of its own, so each worker has its own
emulator. Tests that use it are marked ``emulator`` (added here), so the unit tests run
alone with ``-m "not emulator"``. A test without the marker that starts an emulator in
this process fails (:func:`_emulator_start_guard`), so the marker stays true; tests that
start one in a subprocess carry it explicitly.

The markers of ``tests/needs.py`` (``browser``, ``spark``...) require their tools before a
test's fixtures run: missing under CI, the test fails; elsewhere it skips.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import settings
from needs import require_for_markers, under_ci
from pandas_ends import pandas_calls

from mddframes.emulator import serve
from mddframes.emulator import server as emulator_server

# the ``script`` fixture: a scripted misbehaving service for the HTTP tests
pytest_plugins = ["scripted_service"]

# CI runs the property tests with a fixed seed, so a red run means a change broke
# something, never that a new random example turned up; local runs keep exploring.
settings.register_profile("ci", derandomize=True, print_blob=True)
if under_ci():
    settings.load_profile("ci")


_EMULATOR_FIXTURES = frozenset({"emulator", "emu", "client"})


@pytest.fixture(scope="session", autouse=True)
def _backups_in_a_session_folder(tmp_path_factory):
    """Writes without ``backup_dir`` back up into a session folder, never into the user's
    data folder (the default); subprocesses inherit the variable."""
    folder = tmp_path_factory.mktemp("default-backups")
    previous = os.environ.get("MDD_BACKUP_DIR")
    os.environ["MDD_BACKUP_DIR"] = str(folder)
    yield folder
    if previous is None:
        os.environ.pop("MDD_BACKUP_DIR", None)
    else:
        os.environ["MDD_BACKUP_DIR"] = previous


def _starts_an_emulator(item: pytest.Item) -> bool:
    """Whether a fixture the test uses is an emulator fixture or calls ``serve``."""
    names = set(getattr(item, "fixturenames", ()))
    if _EMULATOR_FIXTURES & names:
        return True
    info = getattr(item, "_fixtureinfo", None)
    definitions = info.name2fixturedefs.values() if info is not None else ()
    codes = [getattr(fixture.func, "__code__", None) for chain in definitions for fixture in chain]
    return any(code is not None and "serve" in code.co_names for code in codes)


#: Test folders and files (relative to tests/) that check a mechanism around the frames,
#: whose pandas code the conversion tests (codec, frames, writing, spreadsheet, snapshot,
#: tables as code, elements, widgets, the documentation's blocks and notebooks) run on both
#: pandas ends: HTTP, recordings, export archives, the doctor's checks, the command line's
#: pipelines, interruptions and messages (its output formats stay on both: test_cli.py),
#: the client's configuration, errors, layering and imports. Marked ``pandas_once`` at
#: collection, as a file's ``pytestmark`` would: CI's pass on the oldest pandas leaves them
#: out (docs/performance.md, "The fresh-clone CI run").
PANDAS_ONCE_PATHS = (
    "http/", "recording/", "exports/", "doctor/",
    "cli/test_cli_pipeline.py", "cli/test_readme_commands.py", "cli/test_interrupted.py",
    "cli/test_mistakes.py", "cli/test_cli_user_errors.py",
    "client/test_lazy_import.py", "client/test_errors.py", "client/test_layers.py",
    "client/test_config.py", "client/test_client_security.py",
    "client/test_settings_declared.py", "client/test_ids.py", "client/test_exported_members.py",
    "client/test_warnings_name_the_callers_line.py", "client/test_doc_sections.py",
    "client/test_structure.py", "client/test_progress.py", "client/test_close_matches.py",
    "client/test_error_home.py", "client/test_internals_map.py",
)  # fmt: skip
_TESTS = Path(__file__).resolve().parent


def _runs_once(item: pytest.Item) -> bool:
    where = item.path.relative_to(_TESTS).as_posix()
    return any(where == p or (p.endswith("/") and where.startswith(p)) for p in PANDAS_ONCE_PATHS)


def pytest_collection_modifyitems(items):
    for item in items:
        if _starts_an_emulator(item):
            item.add_marker(pytest.mark.emulator)
        if _runs_once(item) and item.get_closest_marker("pandas_free") is None:
            item.add_marker(pytest.mark.pandas_once)
    # the files that hold a slow or docs test first, in their order: pytest-xdist's loadfile
    # hands files to the workers in collection order (scripts/test: --no-loadscope-reorder),
    # so the long ones start at once instead of one of them running alone at the end (a
    # stable sort; every worker sorts alike)
    slow_files = {
        item.path
        for item in items
        if item.get_closest_marker("slow") or item.get_closest_marker("docs")
    }
    items.sort(key=lambda item: item.path not in slow_files)


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    require_for_markers({mark.name for mark in item.iter_markers()})


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item):
    """A ``pandas_free`` test that runs pandas' code fails (tests/pandas_ends.py)."""
    if item.get_closest_marker("pandas_free") is None:
        return (yield)
    with pandas_calls() as found:
        result = yield
    if found:
        pytest.fail(
            f"{item.nodeid} is marked pandas_free (so CI skips it on the oldest pandas) but "
            f"ran pandas' code: {', '.join(found)}; remove the mark",
            pytrace=False,
        )
    return result


#: The test running now (the emulator-start guard's question: does it carry the marker?)
_running: list[pytest.Item] = []


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    _running.append(item)
    try:
        yield
    finally:
        _running.pop()


@pytest.fixture(scope="session", autouse=True)
def _emulator_start_guard():
    """Starting an emulator (``serve`` or ``mddframes emulator`` in this process) from a
    test without the ``emulator`` marker fails it: ``-m "not emulator"`` starts none."""
    real = emulator_server._uvicorn_server

    def guarded(state):
        item = _running[-1] if _running else None
        if item is not None and item.get_closest_marker("emulator") is None:
            pytest.fail(
                f"{item.nodeid} starts an emulator but has no 'emulator' marker: add "
                "@pytest.mark.emulator (or use the emulator/emu/client fixtures)",
                pytrace=False,
            )
        return real(state)

    emulator_server._uvicorn_server = guarded
    yield
    emulator_server._uvicorn_server = real


@pytest.fixture(scope="session")
def emulator():
    """A running emulator with the deterministic sample data (shared by the session)."""
    with serve() as emu:
        yield emu


@pytest.fixture
def emu(emulator):
    """The shared emulator, reset to its sample data, with no faults and fresh counters."""
    emulator.reset()
    yield emulator
    emulator.clear_faults()


@pytest.fixture
def client(emu):
    """A Client connected to the freshly reset emulator."""
    from mddframes import Client

    c = Client.from_emulator(emu)
    yield c
    c.close()


@pytest.fixture
def changed_after_put(client, emu, monkeypatch):
    """Make the client's table PUTs followed by a real change on the service, before any
    read-back (what a colleague's write between our PUT and our verification does)."""
    real_put = client.api.put_table

    def put_then_someone_else_writes(object_id, payload, **options):
        answer = real_put(object_id, payload, **options)
        emu.touch_table(object_id)
        return answer

    monkeypatch.setattr(client.api, "put_table", put_then_someone_else_writes)
