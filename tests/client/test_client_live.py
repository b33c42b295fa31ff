"""Read-only client tests, run against the emulator and, when asked, a real service.

The ``live`` variants run only with ``MDD_LIVE=1`` and complete ``MDD_*`` credentials
(``MDD_TENANT``, ``MDD_BASE_URL``, ``MDD_CLIENT_ID``, ``MDD_CLIENT_SECRET``, optionally
``MDD_REALM``, ``MDD_API_PREFIX``); set ``MDD_LIVE_SYSTEM`` to a system name for the
tree tests. They never write. Otherwise they are skipped with the reason.
"""

from __future__ import annotations

import os
import uuid

import pytest

from mddframes import Client, connect
from mddframes.errors import ConfigurationError, NotFoundError

EMULATOR_SYSTEM = "DWH"


@pytest.fixture
def live_client():
    """A client of the real service from MDD_* settings; skips unless MDD_LIVE=1."""
    if os.environ.get("MDD_LIVE") != "1":
        pytest.skip("live tests run with MDD_LIVE=1 and MDD_* credentials")
    try:
        client = connect()
    except ConfigurationError as exc:
        pytest.skip(f"MDD_LIVE=1 but the live settings are incomplete: {exc}")
    with client:
        yield client


@pytest.fixture(
    params=[
        pytest.param("emulator", marks=pytest.mark.emulator),  # emu: asked for by name below
        pytest.param("live", marks=pytest.mark.live),
    ]
)
def any_client(request):
    """The same test against the emulator, then (marked ``live``) the real service."""
    if request.param == "live":
        yield request.getfixturevalue("live_client"), os.environ.get("MDD_LIVE_SYSTEM")
    else:
        with Client.from_emulator(request.getfixturevalue("emu")) as client:
            yield client, EMULATOR_SYSTEM


def test_token_and_object_types(any_client):
    client, _ = any_client
    object_types = client.api.get_object_types()
    assert isinstance(object_types, list | dict)
    assert client.http.tokens.fetches == 1


def test_tree_and_its_elements(any_client):
    client, system = any_client
    if not system:
        pytest.skip("set MDD_LIVE_SYSTEM to a system name for the live tree tests")
    tree = client.api.get_tree(system)
    entries = tree if isinstance(tree, list) else next(iter(tree.values()))
    assert entries, f"system {system!r} has no elements"
    first = entries[0]
    assert client.api.get_structure(first["id"])["id"] == first["id"]
    owner = next((e for e in entries if e.get("tableId")), None)
    if owner is not None:
        assert client.api.get_table(owner["tableId"])


def test_unknown_ids_are_not_found(any_client):
    client, _ = any_client
    with pytest.raises(NotFoundError) as caught:
        client.api.get_table(f"mddframes-missing-{uuid.uuid4()}")
    assert caught.value.status == 404 and caught.value.operation == "getTable"


def test_doctor_then_the_read_only_loaders(any_client):
    """What the README says to run first against a tenant, then every read-only loader."""
    client, system = any_client
    report = client.doctor(system)
    assert not (report["result"] == "breaks").any(), report.to_string()
    secret = client.api.settings.client_secret.reveal()
    assert secret not in report.to_csv()
    assert client.read_object_types()["id"].notna().all()
    if not system:
        pytest.skip("set MDD_LIVE_SYSTEM to a system name for the live loaders")
    tree = client.read_tree(system)
    assert len(tree) and tree["id"].is_unique
    client.read_packages(system)
    element = tree["id"].iloc[0]
    assert client.read_structure(element)["id"] == element
    client.read_raw_data(element, flatten=True)
    for column, read in (("table_id", client.read_table), ("mapping_id", client.read_mapping)):
        owned = tree[column].dropna() if column in tree.columns else []
        if len(owned):
            read(owned.iloc[0])
    if "table_id" in tree.columns and tree["table_id"].notna().any():
        client.read_table_columns(tree["table_id"].dropna().iloc[0])
