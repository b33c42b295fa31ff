"""Injected faults: latency, seeded 5xx, 429 with Retry-After, dropped connections,
restriction to operations, admin routes untouched, and counters."""

from __future__ import annotations

import time

import pytest
import requests

from mddframes.emulator import serve
from mddframes.emulator._fallback import tiny_dataset
from mddframes.emulator.server import AdminCallError

# runs once, on the newest pandas: checks the service's wire, not pandas (tests/pandas_ends.py)
pytestmark = pytest.mark.pandas_free


@pytest.fixture(scope="module")
def server():
    with serve(dataset=tiny_dataset) as emu:
        yield emu


@pytest.fixture
def emu(server):
    server.reset()
    yield server
    server.clear_faults()


@pytest.fixture
def headers(emu):
    return {"Authorization": f"Bearer {emu.token()}"}


def get_table(emu, headers) -> requests.Response:
    return requests.get(emu.api_url + "/api/table/tbl-0001", headers=headers, timeout=10)


def test_latency_delays_each_request(emu, headers):
    emu.inject_faults(latency=0.3)
    began = time.monotonic()
    response = get_table(emu, headers)
    assert response.status_code == 200
    assert time.monotonic() - began >= 0.3


def test_error_rate_is_reproducible_with_a_seed(emu, headers):
    def statuses() -> list[int]:
        emu.inject_faults(error_rate=0.5, seed=7)
        return [get_table(emu, headers).status_code for _ in range(30)]

    first, second = statuses(), statuses()
    assert first == second
    assert 200 in first
    faults = [s for s in first if s != 200]
    assert faults and set(faults) <= {500, 502, 503}
    emu.inject_faults(error_rate=0.5, seed=8)
    assert [get_table(emu, headers).status_code for _ in range(30)] != first


def test_error_statuses_are_configurable_and_answer_spring_bodies(emu, headers):
    emu.inject_faults(error_rate=1.0, error_statuses=[503])
    response = get_table(emu, headers)
    assert response.status_code == 503
    assert response.json()["message"] == "injected fault"


def test_rate_limit_answers_429_with_retry_after(emu, headers):
    emu.inject_faults(rate_limit_rate=1.0, retry_after=7)
    response = get_table(emu, headers)
    assert response.status_code == 429
    assert response.headers["retry-after"] == "7"


def test_dropped_connection_raises_a_connection_error(emu, headers):
    emu.inject_faults(drop_rate=1.0)
    with pytest.raises(requests.ConnectionError):
        get_table(emu, headers)
    with pytest.raises(requests.ConnectionError):
        requests.put(
            emu.api_url + "/api/table/tbl-0001",
            json={"metadata": {}, "data": []},
            headers=headers,
            timeout=10,
        )
    emu.clear_faults()
    table = get_table(emu, headers).json()
    assert table["data"], "the dropped PUT must not have been applied"


def test_faults_can_be_restricted_to_operations(emu, headers):
    emu.inject_faults(error_rate=1.0, operations=["getTable"])
    assert get_table(emu, headers).status_code >= 500
    tree = requests.get(emu.api_url + "/api/system/DWH/tree", headers=headers, timeout=10)
    assert tree.status_code == 200


def test_token_endpoint_is_subject_to_faults(emu):
    emu.inject_faults(error_rate=1.0, error_statuses=[502], operations=["getToken"])
    form = {
        "grant_type": "client_credentials",
        "client_id": emu.client_id,
        "client_secret": emu.client_secret,
    }
    assert requests.post(emu.token_url, data=form, timeout=10).status_code == 502


def test_admin_routes_are_never_faulted(emu):
    emu.inject_faults(error_rate=1.0, drop_rate=0.0)
    assert emu.counters() == {}
    emu.reset()  # reset clears faults through the admin route itself
    emu.inject_faults(drop_rate=1.0)
    assert emu.info()["faults"]["drop_rate"] == 1.0


def test_counters_include_faulted_requests(emu, headers):
    emu.reset_counters()
    emu.inject_faults(error_rate=1.0, operations=["tableUpdate"])
    response = requests.put(
        emu.api_url + "/api/table/tbl-0001",
        json={"metadata": {}, "data": []},
        headers=headers,
        timeout=10,
    )
    assert response.status_code >= 500
    get_table(emu, headers)
    assert emu.counters() == {"tableUpdate": 1, "getTable": 1}
    assert emu.fault_counters() == {"tableUpdate": 1}


@pytest.mark.parametrize(
    "settings",
    [
        {"error_rate": 1.5},
        {"error_rate": 0.6, "drop_rate": 0.6},
        {"latency": -1},
        {"error_statuses": [404]},
        {"lose_answer_rate": 1.0, "lose_answer_status": 404},
    ],
)
def test_invalid_fault_settings_are_refused(emu, settings):
    with pytest.raises(AdminCallError, match="400"):
        emu.inject_faults(**settings)


def test_unknown_fault_setting_is_named(emu):
    response = requests.put(emu.base_url + "/_emulator/faults", json={"jitter": 1}, timeout=10)
    assert response.status_code == 400
    assert "jitter" in response.json()["message"]


def test_a_lost_answer_can_be_a_502_after_the_write_landed(emu, headers):
    emu.inject_faults(lose_answer_rate=1.0, lose_answer_status=502, operations=["tableUpdate"])
    table = get_table(emu, headers).json()
    table["metadata"]["landed"] = "behind a 502"
    url = emu.api_url + "/api/table/tbl-0001"
    response = requests.put(url, json=table, headers=headers, timeout=10)
    assert response.status_code == 502
    emu.clear_faults()
    assert get_table(emu, headers).json()["metadata"]["landed"] == "behind a 502"
