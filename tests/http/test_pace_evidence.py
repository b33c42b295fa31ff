"""Whether the rate explains the push-backs (mddframes.http.pace_evidence), by model."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from mddframes.http.pace_evidence import RateEvidence, measure_allowance


def _feed(evidence: RateEvidence, rate: float, answers: int, pushed: int, start: float) -> float:
    """``answers`` answers sent at ``rate``, ``pushed`` of them spread among them."""
    every = answers / pushed if pushed else answers + 1
    for i in range(answers):
        at = start + i / rate
        evidence.sent(at, rate)
        evidence.answered(at, pushed > 0 and int(i % every) == 0 and i // every < pushed)
    return start + answers / rate


@settings(max_examples=100, deadline=None)
@given(share=st.floats(0.05, 0.3), low=st.floats(2.0, 200.0), factor=st.floats(1.6, 8.0))
def test_the_same_share_at_a_low_and_a_high_rate_is_noise(share, low, factor):
    # a flaky service: sporadic 429s at a share that does not depend on the rate
    evidence = RateEvidence()
    at = _feed(evidence, low, 60, round(share * 60), 0.0)
    _feed(evidence, low * factor, 60, round(share * 60), at)
    assert evidence.verdict() == "noise"


@settings(max_examples=100, deadline=None)
@given(limit=st.floats(2.0, 200.0), below=st.floats(0.3, 0.95), over=st.floats(1.6, 6.0))
def test_a_token_bucket_shows_a_limit(limit, below, over):
    # below the bucket's rate nothing is pushed back; above it, 1 - limit/rate
    evidence = RateEvidence()
    at = _feed(evidence, below * limit, 60, 0, 0.0)
    high = over * limit
    _feed(evidence, high, 60, round((1 - limit / high) * 60), at)
    assert evidence.verdict() == "limit"


def test_rates_too_close_or_too_few_answers_tell_nothing():
    evidence = RateEvidence()
    at = _feed(evidence, 10.0, 60, 6, 0.0)
    _feed(evidence, 12.0, 60, 6, at)  # less than SPREAD apart
    assert evidence.verdict() is None
    few = RateEvidence()
    _feed(few, 10.0, 4, 1, 0.0)
    assert few.verdict() is None


def test_an_unanswered_request_is_forgotten():
    evidence = RateEvidence()
    evidence.sent(1.0, 10.0)
    evidence.forget(1.0)
    evidence.answered(1.0, True)  # a late answer to a forgotten send counts for nothing
    assert evidence.fastest() is None


def test_the_allowance_is_what_passed_between_two_limits():
    mark = (100.0, 50, 60, 20.0)  # at t=100: 50 passed, 60 sent, the rate set to 20
    # one second later 20 more passed of 20 sent: 19.75 a second (a quarter request off)
    assert measure_allowance(mark, 101.0, 70, 80, None) == 19.75
    # too soon, or the pace not what held the requests back: nothing measured
    assert measure_allowance(mark, 100.1, 52, 62, None) is None
    assert measure_allowance(mark, 101.0, 60, 65, None) is None
    # a little under the allowance known: kept; clearly under: lowered; over: raised
    assert measure_allowance(mark, 101.0, 70, 80, 20.0) == 20.0
    assert measure_allowance(mark, 101.0, 60, 80, 20.0) == 9.75
    assert measure_allowance(mark, 101.0, 75, 80, 20.0) == 24.75
