"""Shared fixtures: one real emulator per test session, reached over loopback HTTP.

Under pytest-xdist each worker is a session of its own, so each worker has its own
emulator. Tests that use it are marked ``emulator`` (added here), so the unit tests run
alone with ``-m "not emulator"``.
"""

from __future__ import annotations

import os

import pytest
from hypothesis import settings

from mddframes.emulator import serve

# the ``script`` fixture: a scripted misbehaving service for the HTTP tests
pytest_plugins = ["scripted_service"]

# CI runs the property tests with a fixed seed, so a red run means a change broke
# something, never that a new random example turned up; local runs keep exploring.
settings.register_profile("ci", derandomize=True, print_blob=True)
if os.environ.get("CI"):
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


def pytest_collection_modifyitems(items):
    for item in items:
        if _EMULATOR_FIXTURES.intersection(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.emulator)


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
