"""The chaos suite's credential search finds what it must (else "no secret on disk" would
pass for nothing): every spelling issue 43 saw reach a recording, any chain of up to
three standard encodings, anywhere in a file, and not a near miss."""

from __future__ import annotations

import base64
import html
import json
from pathlib import Path
from urllib.parse import quote

import pytest
from chaos_world import SECRET, spellings
from hypothesis import given, settings
from hypothesis import strategies as st
from secret_search import CredentialSearch

pytestmark = [pytest.mark.chaos]

TOKEN = "k3Jx_9-QzLmWv0aBcDeFgHiJkLmNoPqRsTuVwXyZ012"

ENCODINGS = {
    "percent": lambda s: quote(s, safe=""),
    "percent-all-lower": lambda s: "".join(f"%{b:02x}" for b in s.encode()),
    "html": lambda s: "".join(f"&#{ord(c)};" for c in s),
    "html-hex": lambda s: "".join(f"&#x{ord(c):X};" for c in s),
    "html-escape": html.escape,
    "json": lambda s: json.dumps(s)[1:-1],
    "json-u": lambda s: "".join(f"\\u{ord(c):04x}" for c in s),
    "base64": lambda s: base64.b64encode(s.encode()).decode(),
    "base64url": lambda s: base64.urlsafe_b64encode(s.encode()).decode().rstrip("="),
}


def _search() -> CredentialSearch:
    return CredentialSearch({"secret": SECRET, "token": TOKEN})


@pytest.mark.parametrize("how", sorted(spellings(SECRET)))
def test_each_spelling_of_issue_43_is_found_in_a_json_answer(how: str) -> None:
    spelled = spellings(SECRET)[how]
    document = json.dumps({"name": f"chaos {spelled}", "rows": [1, 2]}).encode()
    hit = _search().search(document)
    assert hit is not None and hit[0] == "secret", how


@settings(max_examples=150, deadline=None)
@given(
    chain=st.lists(st.sampled_from(sorted(ENCODINGS)), min_size=0, max_size=3),
    which=st.sampled_from([SECRET, TOKEN]),
    before=st.text(alphabet=' ,:"{}[]<>abc=&%', max_size=20),
    after=st.text(alphabet=' ,:"{}[]<>abc=&%', max_size=20),
)
def test_any_chain_of_three_encodings_anywhere_is_found(
    chain: list[str], which: str, before: str, after: str
) -> None:
    spelled = which
    for name in chain:
        spelled = ENCODINGS[name](spelled)
    hit = _search().search(f"{before}{spelled}{after}".encode())
    assert hit is not None and hit[0] == ("secret" if which == SECRET else "token"), chain


def test_near_misses_are_not_found(tmp_path: Path) -> None:
    near = [SECRET[:-1], SECRET[1:], SECRET.lower(), TOKEN[:-1], quote(SECRET[:-2], safe="")]
    path = tmp_path / "near.json"
    path.write_text(json.dumps(near))
    assert _search().search_files([path], tmp_path) == []
