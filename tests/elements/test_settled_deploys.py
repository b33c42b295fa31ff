"""Deploys and confirmations whose answers are lost are settled by reading the elements.

The emulator's faults lose answers after the service acted (a dropped connection, or
a gateway's 502) or before it did (a dropped connection, a 502 in front of it). Each
is settled by what ``getStructure`` shows: deployed under the deployment, the request
acted and is not sent again; not deployed, it did not act and is sent again; only a
service that does not show it ends in "check before repeating".
"""

from __future__ import annotations

import warnings

import pytest

from mddframes.emulator import serve
from mddframes.emulator.state import sample_dataset
from mddframes.errors import AnswerLostError

IDS = [e["id"] for e in sample_dataset().elements][:20]


@pytest.fixture(scope="module")
def snake_emulator():
    with serve(dialect="snake-case") as emu:
        yield emu


def _deployment(client, ids):
    """element id -> (deployed, deployment id), as the service shows it (either spelling)."""
    shown = {}
    for sid in ids:
        element = client.api.get_structure(sid)
        deployment = element.get("deploymentId", element.get("deployment_id"))
        shown[sid] = (element.get("deployed"), deployment)
    return shown


def _deploy_all(client, deployment):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a PartialFailureWarning would be a false failure
        return client.deploy_many(IDS, deployment, progress=False, max_workers=4)


@pytest.mark.parametrize("lost_as", [None, 502], ids=["dropped", "502"])
def test_answers_lost_after_acting_are_settled_and_nothing_is_sent_twice(client, emu, lost_as):
    emu.inject_faults(lose_answer_rate=0.3, lose_answer_status=lost_as, seed=5,
                      operations=["deployStructure"])  # fmt: skip
    emu.reset_counters()
    result = _deploy_all(client, "dep-after")
    lost = emu.fault_counters()["deployStructure"]
    sent = emu.counters()["deployStructure"]
    emu.clear_faults()
    assert lost >= 3  # answers were lost
    assert result["ok"].all() and result["error"].isna().all(), result
    assert sent == len(IDS)  # each acted once: read back, never sent again
    assert set(_deployment(client, IDS).values()) == {(True, "dep-after")}


@pytest.mark.parametrize("fault", ["drop", "502"])
def test_failures_before_acting_are_read_then_sent_again(client, emu, fault):
    # a dropped connection or a 502 to a POST may have come after the service acted:
    # the element shows it did not, so the deploy is sent again (and lands once)
    if fault == "drop":
        emu.inject_faults(drop_rate=0.3, seed=2, operations=["deployStructure"])
    else:
        emu.inject_faults(error_rate=0.3, error_statuses=(502,), seed=2,
                          operations=["deployStructure"])  # fmt: skip
    emu.reset_counters()
    result = _deploy_all(client, "dep-before")
    faulted = emu.fault_counters()["deployStructure"]
    sent = emu.counters()["deployStructure"]
    emu.clear_faults()
    assert faulted >= 3
    assert result["ok"].all(), result
    assert sent == len(IDS) + faulted
    assert set(_deployment(client, IDS).values()) == {(True, "dep-before")}


def test_a_lost_deploy_is_settled_in_the_snake_case_dialect(snake_emulator):
    from mddframes import Client

    snake_emulator.reset()
    snake_emulator.inject_faults(lose_answer_rate=1.0, operations=["deployStructure"])
    try:
        with Client.from_emulator(snake_emulator) as client:
            element = client.deploy(IDS[0], "dep-snake")
            assert element["deploymentId"] == "dep-snake"  # (the client reads either)
            assert snake_emulator.counters()["deployStructure"] == 1
    finally:
        snake_emulator.clear_faults()


def test_a_deploy_that_never_acts_says_nothing_was_done(client, emu):
    emu.inject_faults(error_rate=1.0, error_statuses=(502,), operations=["deployStructure"])
    emu.reset_counters()
    with pytest.raises(AnswerLostError) as caught:
        client.deploy(IDS[0], "dep-never")
    sent = emu.counters()["deployStructure"]
    emu.clear_faults()
    message = str(caught.value)
    assert "had not acted" in message and "nothing was done" in message, message
    assert "Check on the service" not in message.split("(last failure")[0]
    assert sent == 9  # as often as a call safe to repeat: the first send and 8 retries
    assert _deployment(client, [IDS[0]])[IDS[0]][1] != "dep-never"


def test_only_a_service_that_cannot_say_ends_in_check_before_repeating(client, emu, monkeypatch):
    real = client.api.get_structure

    def without_deployment(sid):  # a service whose elements do not show their deployment
        element = real(sid)
        return {k: v for k, v in element.items() if k not in ("deployed", "deploymentId")}

    monkeypatch.setattr(client.api, "get_structure", without_deployment)
    emu.inject_faults(lose_answer_rate=1.0, operations=["deployStructure"])
    emu.reset_counters()
    with pytest.raises(AnswerLostError) as caught:
        client.deploy(IDS[0], "dep-unknown")
    message = str(caught.value)
    assert "cannot be told" in message and "before repeating it" in message, message
    assert emu.counters()["deployStructure"] == 1


def test_a_confirmation_whose_answer_is_lost_is_read_and_not_sent_again(client, emu):
    info = emu.make_deployment_info(IDS[:5], deployment_id="dep-confirm")
    emu.inject_faults(lose_answer_rate=1.0, operations=["confirmStructureDeployment"])
    emu.reset_counters()
    result = client.confirm_deployed(info)
    sent = emu.counters()["confirmStructureDeployment"]
    emu.clear_faults()
    assert result["ok"].all() and result["error"].isna().all(), result
    assert sent == 1
    assert set(_deployment(client, IDS[:5]).values()) == {(True, "dep-confirm")}


def test_a_confirmation_refused_by_a_gateway_is_sent_again(client, emu):
    info = emu.make_deployment_info(IDS[:5], deployment_id="dep-502")
    # seed 1: the first attempt is answered 502 before the service acts, a later one lands
    emu.inject_faults(error_rate=0.5, error_statuses=(502,), seed=1,
                      operations=["confirmStructureDeployment"])  # fmt: skip
    emu.reset_counters()
    result = client.confirm_deployed(info)
    sent = emu.counters()["confirmStructureDeployment"]
    faulted = emu.fault_counters()["confirmStructureDeployment"]
    emu.clear_faults()
    assert faulted >= 1 and sent == faulted + 1
    assert result["ok"].all(), result
    assert set(_deployment(client, IDS[:5]).values()) == {(True, "dep-502")}
