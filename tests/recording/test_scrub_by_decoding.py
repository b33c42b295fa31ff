"""What a recording may hold, stated without the scrubber: nothing that decodes to a
secret under any chain of up to three standard web decodings.

The encoders and decoders are the tests' own (``web_spellings``), not the scrubber's:
any secret of the characters client secrets and tokens are made of, spelled by any
chain of up to three standard encodings, anywhere in a body cut into any chunks; no
chain of up to three decodings of what is written yields it. And the five spellings
a service was seen echoing (issue 43) through a real recording.
"""

from __future__ import annotations

import json
import string
from functools import partial
from pathlib import Path

import pytest
from hypothesis import assume, event, given, settings
from hypothesis import strategies as st
from scripted_service import API, Script, make_client
from scrub_feeding import fed_into
from web_spellings import (
    Encoder,
    base64_text,
    holds,
    html_decimal,
    html_hex,
    json_escaped,
    percent,
)

from mddframes.recording.scrub import Scrubber

# runs once, on the newest pandas: checks the service's wire, not pandas (tests/pandas_ends.py)
pytestmark = pytest.mark.pandas_free

# what client secrets and tokens are made of (Keycloak's, JWTs, opaque tokens)
SECRET_ALPHABET = string.ascii_letters + string.digits + "-._~+/=!*@$"
MASKS = st.one_of(st.just(-1), st.just(0x5555_5555), st.integers(min_value=0, max_value=2**40))
ENCODINGS: st.SearchStrategy[Encoder] = st.one_of(
    st.builds(
        lambda mask, lower, plus: partial(percent, mask=mask, lower=lower, plus=plus),
        MASKS,
        st.booleans(),
        st.booleans(),
    ),
    st.builds(
        lambda mask, zeros, semicolon: partial(
            html_decimal, mask=mask, zeros=zeros, semicolon=semicolon
        ),
        MASKS,
        st.integers(min_value=0, max_value=3),
        st.booleans(),
    ),
    st.builds(
        lambda mask, upper, zeros: partial(html_hex, mask=mask, upper=upper, zeros=zeros),
        MASKS,
        st.booleans(),
        st.integers(min_value=0, max_value=3),
    ),
    st.builds(
        lambda mask, upper: partial(json_escaped, mask=mask, upper=upper),
        MASKS,
        st.booleans(),
    ),
    st.builds(
        lambda urlsafe, padded, before: partial(
            base64_text, urlsafe=urlsafe, padded=padded, before=before
        ),
        st.booleans(),
        st.booleans(),
        st.binary(max_size=2),
    ),
)
# what surrounds it: words, JSON punctuation, and the characters escapes are made of
CONTEXT = st.text(
    alphabet=st.sampled_from(list(string.ascii_letters + string.digits + ' "{}:,=&%#;\\+/-\n')),
    max_size=120,
)
PLACEHOLDERS = "SCRUBBED-CLIENT-SECRET SCRUBBED-TOKEN SCRUBBED-COOKIE tenant.invalid"


def spelled(secret: str, chain: list[Encoder]) -> str:
    for encode in chain:
        secret = encode(secret)
    return secret


@settings(max_examples=300, deadline=None)
@given(
    secret=st.text(alphabet=SECRET_ALPHABET, min_size=8, max_size=48),
    kind=st.sampled_from(["client secret", "token"]),
    chain=st.lists(ENCODINGS, max_size=3),
    before=CONTEXT,
    after=CONTEXT,
    cuts=st.lists(st.integers(min_value=1, max_value=300), max_size=10),
)
def test_no_decoding_of_what_is_written_yields_the_secret(
    secret: str, kind: str, chain: list[Encoder], before: str, after: str, cuts: list[int]
) -> None:
    assume(secret not in PLACEHOLDERS)
    event(" then ".join(e.func.__name__ for e in chain if isinstance(e, partial)) or "as is")
    echoed = spelled(secret, chain)
    # the tests' decoders undo the tests' encoders (else the property says nothing)
    assert holds(echoed, secret) is not None
    body = before + echoed + after
    assume(holds(body, secret) is not None)  # (the context may spoil an escape)
    if kind == "client secret":
        scrubber = Scrubber(secret, "client-id", "tenant.example:443")
    else:
        scrubber = Scrubber("an0ther-Client-Secret", "client-id", "tenant.example:443")
        scrubber.add("token", secret)

    written = fed_into(scrubber, body.encode(), cuts).decode("utf-8", "replace")

    assert holds(written, secret) is None, (holds(written, secret), written)
    # as a HAR file holds it: inside a JSON string
    assert holds(json.dumps(written), secret) is None


# -- the five spellings of issue 43, through a real recording ---------------------------

SECRET = "Sz3cr3t-Value_9xyz"
FIVE = {
    "percent-encoded, lower-case hex": percent(SECRET, lower=True),
    "percent-encoded twice": percent(percent(SECRET)),
    "HTML decimal references": html_decimal(SECRET),
    "HTML hex references": html_hex(SECRET),
    "JSON, every second character \\u-escaped": json_escaped(SECRET, 0x5555_5555),
}


@pytest.mark.parametrize("name", sorted(FIVE))
@pytest.mark.parametrize("padding", [0, 3 << 20], ids=["small", "past the spool's memory"])
def test_the_five_spellings_echoed_by_a_service_never_reach_the_recording(
    script: tuple[Script, str], tmp_path: Path, name: str, padding: int
) -> None:
    plan, base_url = script
    echoed = FIVE[name]
    assert "%7a" in FIVE["percent-encoded, lower-case hex"]  # (as the issue saw it)
    # the JSON text written by hand: the escapes are the service's own
    body = (
        '{"id": "t1", "pad": "' + "x " * (padding // 2) + '", "echo": "' + echoed + '"}'
    ).encode()
    plan.routes[f"{API}/table/t1"] = lambda handler: (
        200,
        {"Content-Type": "application/json", "X-Echo": echoed},
        body,
    )
    path = tmp_path / "echo.har"
    with make_client(base_url, client_secret=SECRET) as client, client.recording(path):
        with client.http.call("getTable", {"tableId": "t1"}) as answer:
            received = answer.content
    # the service did echo it, and the client read it as served
    assert echoed.encode() in received
    assert holds(echoed, SECRET) is not None

    text = path.read_text("utf-8")
    assert echoed not in text
    entries = json.loads(text)["log"]["entries"]
    answer_entry = next(e for e in entries if e["_operation"] == "getTable")
    content = answer_entry["response"]["content"]["text"]
    assert echoed not in content and "SCRUBBED-CLIENT-SECRET" in content
    assert content.startswith('{"id": "t1"')  # the rest of the answer is kept
    headers = {h["name"]: h["value"] for h in answer_entry["response"]["headers"]}
    assert headers["X-Echo"] == "SCRUBBED-CLIENT-SECRET"
    # no chain of decodings of the file yields it (the padding is plain: one pass)
    assert holds(text, SECRET, depth=3 if not padding else 2) is None
