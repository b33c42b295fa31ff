"""Tokens that expire or are revoked under a call, against the real emulator (issue 49).

The token goes on a request when it leaves, after the pace's wait; a 401 is repeated
with a renewed token for as long as the token keeps changing under the call; a token
the client had just fetched, refused twice in a row, is the real refusal; and many
threads refused at once cause one token request. The revocations here are timed by the
emulator's own request counter (a request is counted when it arrives, before the
injected latency and the token check), so each lands between a request's arrival and
its check whatever the machine's load.
"""

from __future__ import annotations

import threading
import time
import warnings
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager

import pytest

from mddframes import Client
from mddframes.errors import AuthError

# a mechanism, checked once, on the newest pandas (tests/pandas_ends.py)
pytestmark = pytest.mark.pandas_once

SYSTEM = "DWH"


@pytest.fixture
def element_id(client):
    return str(client.api.get_tree(SYSTEM)[0]["id"])


@contextmanager
def revoke_on_arrival(emu, operation: str, times: int | None) -> Iterator[list[int]]:
    """Revoke every token as each of the first ``times`` requests of ``operation``
    arrives (None: every one), while it sleeps in the injected latency."""
    stop = threading.Event()
    revoked: list[int] = []

    def watch() -> None:
        seen = 0
        while not stop.is_set() and (times is None or len(revoked) < times):
            arrived = emu.counters().get(operation, 0)
            if arrived > seen:
                seen = arrived
                emu.revoke_tokens()
                revoked.append(arrived)
            stop.wait(0.01)

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    try:
        yield revoked
    finally:
        stop.set()
        watcher.join()


@pytest.mark.slow
def test_a_token_that_expires_during_the_pace_wait_is_not_sent(emu, element_id):
    # One slot every 3 s, tokens living 2 s (renewed after 1 s): the second call waits
    # about 3 s for its slot, by when the token held at its start has expired.
    emu.set_token_ttl(2)
    with Client.from_emulator(emu, max_rate=1 / 3) as client:
        client.api.get_structure(element_id)  # takes the first slot and a token
        emu.reset_counters()
        started = time.monotonic()
        assert client.api.get_structure(element_id)["id"] == element_id
        waited = time.monotonic() - started
        counts = emu.counters()
        repeats = client.http.unauthorized_repeats
    assert waited > 2.0  # the pace did hold the call past the token's life
    # renewed when the request left: no stale token went out, so nothing was refused
    assert repeats == 0
    assert counts.get("getStructure") == 1
    assert counts.get("getToken") == 1


@pytest.mark.slow
def test_repeated_401s_with_a_changing_token_are_ridden_through(emu, element_id):
    with Client.from_emulator(emu) as client:
        client.api.get_object_types()  # holds a token the API accepted
        emu.inject_faults(latency=0.4, operations=["getStructure"])
        emu.reset_counters()
        # the first three attempts each find their token revoked when checked
        with revoke_on_arrival(emu, "getStructure", times=3) as revoked:
            assert client.api.get_structure(element_id)["id"] == element_id
        counts = emu.counters()
        repeats = client.http.unauthorized_repeats
    assert revoked == [1, 2, 3]
    assert repeats == 3
    assert counts.get("getStructure") == 4
    assert counts.get("getToken") == 3  # one new token per refusal


def test_a_fresh_token_refused_twice_is_the_real_refusal(emu, element_id):
    # Tokens that are dead before any request can reach the API: every token the
    # client gets is refused (as tokens for another audience would be).
    emu.set_token_ttl(0.05)
    emu.inject_faults(latency=0.2, operations=["getStructure"])
    with Client.from_emulator(emu) as client:
        emu.reset_counters()
        with pytest.raises(AuthError, match="just fetched, twice in a row") as caught:
            client.api.get_structure(element_id)
        counts = emu.counters()
        token_seen = client.http.tokens.token().reveal()
        repeats = client.http.unauthorized_repeats
    error = caught.value
    assert error.status == 401 and error.operation == "getStructure"
    assert error.server_message == "Token is expired"
    assert counts.get("getStructure") == 2 and counts.get("getToken") == 2
    assert repeats == 1
    for text in (token_seen, emu.client_secret):
        assert text not in str(error) and text not in repr(error)


@pytest.mark.slow
def test_credentials_that_stop_working_mid_run_fail_after_a_bound(emu, element_id):
    # A client whose tokens the API accepted a moment ago rides through refusals of
    # fresh tokens (revocations) for ten seconds, pausing between renewals, then stops.
    with Client.from_emulator(emu) as client:
        client.api.get_object_types()
        emu.inject_faults(latency=0.2, operations=["getStructure"])
        emu.reset_counters()
        began = time.monotonic()
        with revoke_on_arrival(emu, "getStructure", times=None):
            with pytest.raises(AuthError, match=r"just fetched, \d+ times in a row over 1\d s"):
                client.api.get_structure(element_id)
        took = time.monotonic() - began
        counts = emu.counters()
    assert 10 <= took < 20
    # one request per renewal, and few of them: the pauses grow to a second
    assert counts.get("getStructure") == counts.get("getToken", 0) + 1
    assert 8 <= counts["getToken"] <= 20


def test_threads_refused_at_once_make_one_token_request(emu, element_id):
    with Client.from_emulator(emu, max_workers=8) as client:
        client.api.get_object_types()  # every thread shares this token
        emu.inject_faults(latency=0.3, operations=["getStructure"])
        emu.reset_counters()
        barrier = threading.Barrier(8)

        def read(_: int) -> str:
            barrier.wait()
            return str(client.api.get_structure(element_id)["id"])

        # the token dies while all eight requests sleep in the latency
        with revoke_on_arrival(emu, "getStructure", times=1), ThreadPoolExecutor(8) as pool:
            ids = list(pool.map(read, range(8)))
        counts = emu.counters()
        repeats = client.http.unauthorized_repeats
    assert ids == [element_id] * 8
    assert counts.get("getToken") == 1
    assert 1 <= repeats <= 8


@pytest.mark.slow
def test_a_bulk_read_rides_through_token_churn_without_a_failure(emu, client):
    tree = client.api.get_tree(SYSTEM)
    table_ids = [str(e["tableId"]) for e in tree if "tableId" in e]
    calm = client.read_tables(table_ids, progress=False)  # what a read without churn gives
    emu.set_token_ttl(1)
    emu.inject_faults(latency=0.1)
    stop = threading.Event()

    def revoke() -> None:
        while not stop.wait(0.3):
            emu.revoke_tokens()

    revoker = threading.Thread(target=revoke, daemon=True)
    with Client.from_emulator(emu, max_workers=8) as fresh, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        revoker.start()
        try:
            frames = [fresh.read_tables(table_ids, progress=False, errors="skip") for _ in range(3)]
        finally:
            stop.set()
            revoker.join()
        repeats = fresh.http.unauthorized_repeats
    assert repeats > 0  # the churn did reach the calls
    for frame in frames:
        assert not frame.attrs.get("failures"), frame.attrs.get("failures")
        assert frame.shape == calm.shape
        assert set(frame["table_id"].astype(str)) == set(calm["table_id"].astype(str))


@pytest.mark.emulator
def test_churn_tokens_revokes_every_token_while_its_block_runs(emu):
    import requests

    def status(token: str) -> int:
        answer = requests.get(f"{emu.api_url}/api/system/{SYSTEM}/tree",
                              headers={"Authorization": f"Bearer {token}"}, timeout=10)  # fmt: skip
        return answer.status_code

    before = emu.token()
    assert status(before) == 200
    with emu.churn_tokens(0.05, ttl=30) as revocations:
        time.sleep(0.5)
        assert status(before) == 401  # revoked under the block
    done = len(revocations)
    assert done >= 3 and revocations[0] >= 1  # the first found the token fetched before
    time.sleep(0.2)
    assert len(revocations) == done  # the thread stops with the block
    assert status(emu.token()) == 200  # a token fetched after lives on
