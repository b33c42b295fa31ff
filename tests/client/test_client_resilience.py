"""Tokens that expire or are revoked, injected faults, and POSTs that are never repeated."""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from mddframes import Client
from mddframes.errors import (
    AnswerLostError,
    MddError,
    RateLimitError,
    ServerError,
)

# a mechanism, checked once, on the newest pandas (tests/pandas_ends.py)
pytestmark = pytest.mark.pandas_once

SYSTEM = "DWH"

POST_OPERATIONS = (
    "createChildStructure",
    "addToDeploymentPackage",
    "externalExportStructure",
    "structureMassExportAsync",
    "deployStructure",
    "confirmStructureDeployment",
)


@pytest.fixture
def sample_ids(client):
    tree = client.api.get_tree(SYSTEM)
    return {
        "elements": [e["id"] for e in tree][:20],
        "tables": [e["tableId"] for e in tree if "tableId" in e][:10],
        "folder": next(e["id"] for e in tree if e["type"] == "FOLDER"),
    }


@pytest.mark.slow
def test_two_second_tokens_over_ten_seconds_without_an_auth_failure(emu, sample_ids):
    emu.set_token_ttl(2)
    with Client.from_emulator(emu) as client:
        emu.reset_counters()
        deadline = time.monotonic() + 10.5
        calls = 0
        stop = threading.Event()

        def reader(worker: int) -> int:
            done = 0
            ids = sample_ids["elements"]
            while time.monotonic() < deadline and not stop.is_set():
                client.api.get_structure(ids[(worker + done) % len(ids)])
                done += 1
                time.sleep(0.05)
            return done

        with ThreadPoolExecutor(4) as pool:
            try:
                calls = sum(pool.map(reader, range(4)))
            finally:
                stop.set()
        fetches = emu.counters()["getToken"]
    assert client.http.unauthorized_repeats == 0  # renewed ahead of expiry, never refused
    # About one fetch a second (renewed 1 s before the 2 s expiry), not one per call.
    assert 6 <= fetches <= 20
    assert calls > 5 * fetches


def test_all_tokens_revoked_mid_run_recovers_with_one_new_token(emu, sample_ids):
    with Client.from_emulator(emu) as client:
        client.api.get_object_types()  # holds a token now
        emu.reset_counters()
        revoked = threading.Event()
        barrier = threading.Barrier(8)

        def reader(worker: int) -> int:
            barrier.wait()
            for step in range(30):
                if worker == 0 and step == 5:
                    emu.revoke_tokens()
                    revoked.set()
                client.api.get_structure(sample_ids["elements"][step % 20])
            return 30

        with ThreadPoolExecutor(8) as pool:
            assert sum(pool.map(reader, range(8))) == 240
        assert revoked.is_set()
        assert client.http.unauthorized_repeats >= 1
        # Every thread that saw the 401 reported the same old token: one new fetch.
        assert emu.counters()["getToken"] == 1


def test_injected_503s_and_429s_do_not_fail_reads_or_puts(emu, sample_ids):
    with Client.from_emulator(emu, max_retries=10) as client:
        tables = {tid: client.api.get_table(tid) for tid in sample_ids["tables"][:5]}
        emu.inject_faults(
            error_rate=0.2, error_statuses=(503,), rate_limit_rate=0.05, retry_after=1, seed=11
        )
        emu.reset_counters()
        for element_id in sample_ids["elements"]:
            assert client.api.get_structure(element_id)["id"] == element_id
        for table_id, table in tables.items():
            table["metadata"]["description"] = f"written through faults: {table_id}"
            client.api.put_table(table_id, table)
            assert client.api.get_table(table_id)["metadata"]["description"].endswith(table_id)
        assert client.api.get_tree(SYSTEM)
        faulted = emu.fault_counters()
        emu.clear_faults()
    assert sum(faulted.values()) >= 5, faulted  # the faults really happened
    assert client.http.unauthorized_repeats == 0


def test_dropped_connections_and_500s_are_retried_for_gets(emu, sample_ids):
    with Client.from_emulator(emu, max_retries=10) as client:
        emu.inject_faults(
            error_rate=0.15,
            error_statuses=(500, 502, 504),
            drop_rate=0.15,
            seed=2,
            operations=["getTable", "getToken"],
        )
        for table_id in sample_ids["tables"]:
            assert client.api.get_table(table_id)["id"] == table_id
        faulted = emu.fault_counters()
    assert faulted.get("getTable", 0) >= 3


def test_a_get_that_keeps_failing_is_tried_one_plus_max_retries_times(emu, sample_ids):
    with Client.from_emulator(emu, max_retries=2) as client:
        client.api.get_object_types()
        emu.inject_faults(error_rate=1.0, error_statuses=(503,), operations=["getTable"])
        emu.reset_counters()
        with pytest.raises(ServerError) as caught:
            client.api.get_table(sample_ids["tables"][0])
    assert caught.value.status == 503 and caught.value.operation == "getTable"
    assert emu.counters()["getTable"] == 3


def test_a_get_that_stays_rate_limited_is_a_rate_limit_error(emu, sample_ids):
    with Client.from_emulator(emu, max_retries=1) as client:
        client.api.get_object_types()
        emu.inject_faults(rate_limit_rate=1.0, retry_after=0, operations=["getStructure"])
        with pytest.raises(RateLimitError) as caught:
            client.api.get_structure(sample_ids["elements"][0])
    assert caught.value.status == 429


def test_a_failing_post_is_sent_exactly_once(emu, sample_ids):
    with Client.from_emulator(emu, max_retries=5) as client:
        client.api.get_object_types()
        emu.inject_faults(error_rate=1.0, error_statuses=(503,), operations=POST_OPERATIONS)
        emu.reset_counters()
        # a 5xx does not say whether a POST that acts acted: the raw call says so and
        # does not repeat it (the element functions then ask the service)
        with pytest.raises(AnswerLostError, match="may have done it"):
            client.api.create_child_structure(sample_ids["folder"], "VIEW", {"name": "once"})
        with pytest.raises(AnswerLostError, match="may have done it"):
            client.api.deploy_structure(sample_ids["elements"][1], "d-1")
    counters = emu.counters()
    assert counters["createChildStructure"] == 1 and counters["deployStructure"] == 1


def test_no_post_is_sent_twice_under_errors_rate_limits_and_drops(emu, sample_ids):
    attempts = 24
    with Client.from_emulator(emu, max_retries=5) as client:
        before = len(client.api.get_tree(SYSTEM))
        emu.inject_faults(
            error_rate=0.25,
            rate_limit_rate=0.15,
            retry_after=0,
            drop_rate=0.15,
            seed=3,
            operations=POST_OPERATIONS,
        )
        emu.reset_counters()
        succeeded = 0
        failures: list[type[MddError]] = []
        for number in range(attempts):
            try:
                client.api.create_child_structure(
                    sample_ids["folder"], "VIEW", {"name": f"child_{number}"}
                )
                succeeded += 1
            except MddError as exc:
                failures.append(type(exc))
        counters = emu.counters()
        faulted = emu.fault_counters()
        emu.clear_faults()
        after = client.api.get_tree(SYSTEM)
    # a 429 was not processed: it is sent again (within retry_budget); nothing else is
    assert counters["createChildStructure"] > attempts
    assert faulted["createChildStructure"] > len(failures) > 0
    assert RateLimitError not in failures  # every 429 was repeated until it passed
    # a dropped connection and a 5xx alike may have come after the service acted
    assert set(failures) == {AnswerLostError}
    assert len(after) == before + succeeded  # nothing created twice


def test_urllib3_repeats_only_a_failure_to_connect_the_paced_loop_the_rest(client):
    url = client.http.settings.api_url + "/api/table/x"
    retry = client.http._session.get_adapter(url).max_retries
    # statuses and lost answers are http/attempts.py's, through the shared pace
    assert retry.respect_retry_after_header is False and not retry.status_forcelist
    assert retry.read is False and retry.connect == client.http.settings.max_retries
    assert retry.raise_on_status is False
    assert client.http._session.get_adapter(url)._pool_maxsize == client.max_workers
