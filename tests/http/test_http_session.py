"""HttpSession against answers the emulator never gives: broken bodies, redirects, time-outs.

A small scripted HTTP server on 127.0.0.1 (real sockets, real requests/urllib3 stack)
plays the misbehaving service; it is stopped, and its threads joined, after each test.
"""

from __future__ import annotations

import socket
import time
from http.server import BaseHTTPRequestHandler

import pytest
from scripted_service import API, TOKEN_PATH, Answer, json_answer, make_client

from mddframes.errors import (
    AnswerLostError,
    AuthError,
    MddError,
    ResponseFormatError,
    TransportError,
)

# runs once, on the newest pandas: checks the service's wire, not pandas (tests/pandas_ends.py)
pytestmark = pytest.mark.pandas_free


def test_truncated_json_is_a_response_format_error(script):
    plan, url = script
    plan.routes[f"{API}/table/t"] = lambda h: (
        200,
        {"Content-Type": "application/json"},
        b'{"id": "t", "data": [1, 2',
    )
    with make_client(url) as client, pytest.raises(ResponseFormatError) as caught:
        client.api.get_table("t")
    assert "truncated" in str(caught.value) and caught.value.operation == "getTable"


def test_an_html_page_is_a_response_format_error_naming_the_content_type(script):
    plan, url = script
    plan.routes[f"{API}/object-type"] = lambda h: (
        200,
        {"Content-Type": "text/html"},
        b"<html><body>Please log in</body></html>",
    )
    with make_client(url) as client, pytest.raises(ResponseFormatError, match="text/html"):
        client.api.get_object_types()


def test_a_body_shorter_than_content_length_is_cut_off(script):
    plan, url = script

    def short(handler: BaseHTTPRequestHandler) -> None:
        handler.send_response(200)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Content-Length", "1000")
        handler.end_headers()
        handler.wfile.write(b'{"id": "t"')
        handler.wfile.flush()
        handler.close_connection = True

    plan.routes[f"{API}/table/t"] = short
    with make_client(url) as client, pytest.raises(ResponseFormatError, match="cut off"):
        client.api.get_table("t")


def test_a_cut_off_download_leaves_the_target_untouched(script, tmp_path):
    plan, url = script

    def short_zip(handler: BaseHTTPRequestHandler) -> None:
        handler.send_response(200)
        handler.send_header("Content-Type", "application/zip")
        handler.send_header("Content-Length", str(200_000))
        handler.end_headers()
        handler.wfile.write(b"PK" + b"x" * 100_000)
        handler.wfile.flush()
        handler.close_connection = True

    plan.routes[f"{API}/structure/export/task-1/result"] = short_zip
    target = tmp_path / "result.zip"
    target.write_bytes(b"previous content")
    with make_client(url) as client, pytest.raises(ResponseFormatError, match="cut off"):
        client.api.structure_mass_export_async_result("task-1", target)
    assert target.read_bytes() == b"previous content"
    assert [p.name for p in tmp_path.iterdir()] == ["result.zip"]


def test_a_complete_download_replaces_the_target(script, tmp_path):
    plan, url = script
    payload = bytes(range(256)) * 1000
    plan.routes[f"{API}/structure/export/task-1/result"] = lambda h: (
        200,
        {"Content-Type": "application/zip"},
        payload,
    )
    target = tmp_path / "result.zip"
    with make_client(url) as client:
        assert client.api.structure_mass_export_async_result("task-1", target) == target
    assert target.read_bytes() == payload


def test_a_redirect_is_not_followed_and_is_explained(script):
    plan, url = script
    plan.routes[f"{API}/object-type"] = lambda h: (302, {"Location": f"{url}/login"}, b"")
    with make_client(url) as client, pytest.raises(MddError, match="unexpected redirect"):
        client.api.get_object_types()
    assert plan.hits["/login"] == 0


def test_token_answer_that_is_not_json_shows_no_excerpt(script):
    plan, url = script
    plan.routes[TOKEN_PATH] = lambda h: (
        200,
        {"Content-Type": "text/plain"},
        b"access_token=leak-me",
    )
    with make_client(url) as client, pytest.raises(ResponseFormatError) as caught:
        client.api.get_object_types()
    assert caught.value.operation == "getToken" and "leak-me" not in str(caught.value)


def test_token_answer_without_access_token_names_what_it_has(script):
    plan, url = script
    plan.routes[TOKEN_PATH] = json_answer({"token_type": "Bearer", "expires_in": 300})
    with make_client(url) as client, pytest.raises(ResponseFormatError, match="expires_in"):
        client.api.get_object_types()


def test_an_api_that_keeps_refusing_the_token_is_asked_twice_then_auth_error(script):
    plan, url = script
    challenge = 'Bearer error="invalid_token", error_description="Token is not active"'
    plan.routes[f"{API}/object-type"] = lambda h: (401, {"WWW-Authenticate": challenge}, b"")
    with make_client(url) as client, pytest.raises(AuthError) as caught:
        client.api.get_object_types()
    error = caught.value
    assert (error.error, error.error_description) == ("invalid_token", "Token is not active")
    assert plan.hits[f"{API}/object-type"] == 2 and plan.hits[TOKEN_PATH] == 2


def test_spring_default_error_body_is_shown_and_a_post_is_not_repeated(script):
    plan, url = script
    plan.routes[f"{API}/structure/e1/deploy/d1"] = json_answer(
        {
            "timestamp": "2024-01-01T00:00:00Z",
            "status": 503,
            "error": "Service Unavailable",
            "path": "/api/structure/e1/deploy/d1",
        },
        status=503,
    )
    # a 5xx does not say whether the deploy acted: the raw call is not repeated and says
    # so (its callers ask the element's deployed state, elements/settling.py)
    with make_client(url, max_retries=3) as client, pytest.raises(AnswerLostError) as caught:
        client.api.deploy_structure("e1", "d1")
    assert caught.value.server_message == "Service Unavailable"
    assert caught.value.status == 503
    assert "may have done it" in str(caught.value)
    assert plan.hits[f"{API}/structure/e1/deploy/d1"] == 1


def test_read_time_out_is_a_transport_error_after_the_retries(script):
    plan, url = script

    def slow(handler: BaseHTTPRequestHandler) -> Answer:
        time.sleep(0.6)
        return 200, {"Content-Type": "application/json"}, b"{}"

    plan.routes[f"{API}/table/slow"] = slow
    with make_client(url, timeout=(2.0, 0.2), max_retries=1) as client:
        with pytest.raises(TransportError, match="timed out") as caught:
            client.api.get_table("slow")
    assert caught.value.operation == "getTable"
    assert plan.hits[f"{API}/table/slow"] == 2  # the GET was retried once


def test_connection_refused_is_a_transport_error():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with make_client(f"http://127.0.0.1:{port}", max_retries=0) as client:
        with pytest.raises(TransportError, match="could not connect") as caught:
            client.api.get_object_types()
    assert caught.value.operation == "getToken"
    assert "sec-xyz" not in str(caught.value)


@pytest.mark.parametrize(
    ("disposition", "expected"),
    [
        ("attachment; filename=\"Z_rich.md\"; filename*=UTF-8''Z%C3%BCrich.md", "Zürich.md"),
        ('attachment; filename="plain.sql"', "plain.sql"),
        ('attachment; filename="../../etc/passwd"', "passwd"),
        ("attachment; filename*=UTF-8''a%2Fb%2F..%2Fx.sql", "x.sql"),
        ("attachment", "e1.txt"),
    ],
)
def test_export_file_name_prefers_filename_star_and_keeps_only_a_base_name(
    script, disposition, expected
):
    plan, url = script
    plan.routes[f"{API}/structure/e1/export/ddl"] = lambda h: (
        200,
        {"Content-Type": "text/plain; charset=utf-8", "Content-Disposition": disposition},
        "CREATE TABLE zoë;".encode(),
    )
    with make_client(url) as client:
        assert client.api.external_export_structure("e1", "ddl") == (expected, "CREATE TABLE zoë;")


def test_a_list_where_an_object_is_expected_names_the_url(script):
    plan, url = script
    plan.routes[f"{API}/table/t"] = json_answer([{"id": "t"}])
    with make_client(url) as client, pytest.raises(ResponseFormatError) as caught:
        client.api.get_table("t")
    assert "expected a JSON object, got list" in str(caught.value)
    assert caught.value.url == f"{url}{API}/table/t"


def test_an_export_start_without_task_id_is_a_response_format_error(script):
    plan, url = script
    plan.routes[f"{API}/structure/export"] = json_answer({"id": "task-1"}, status=202)
    with make_client(url) as client, pytest.raises(ResponseFormatError, match="no taskId"):
        client.api.structure_mass_export_async(["e1"], "ddl")
    assert plan.hits[f"{API}/structure/export"] == 1


def test_a_cookie_the_service_sets_is_sent_back_with_the_token_and_user_agent(script):
    """Sticky load balancers pin a client by cookie: the session must keep sending it,
    along with the bearer token and its own headers."""
    plan, base = script
    seen: list[dict[str, str]] = []

    def remember(handler):
        seen.append({k.lower(): v for k, v in handler.headers.items()})
        cookie = {"Set-Cookie": "lb=node-2; Path=/"} if len(seen) == 1 else {}
        return 200, {"Content-Type": "application/json", **cookie}, b"[]"

    plan.routes[f"{API}/object-type"] = remember
    with make_client(base) as client:
        client.api.get_object_types()
        client.api.get_object_types()
    assert "cookie" not in seen[0]
    assert seen[1]["cookie"] == "lb=node-2"
    assert seen[1]["authorization"] == "Bearer tok-abc"
    assert seen[1]["user-agent"].startswith("mddframes/")
