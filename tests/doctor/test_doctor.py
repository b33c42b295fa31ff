"""mddframes doctor: read-only, never shows a credential, exit codes 0/1/2.

Each dialect's own differences are checked in tests/doctor/test_dialects.py; here the doctor
against the default emulator and against settings that break: a wrong secret, a prefix
that is nowhere, no system, and the comparison of an OpenAPI document with the endpoints
table. The command line runs through the installed console script.
"""

from __future__ import annotations

import io
import logging
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from dialect_expectations import DIFFERENCES
from needs import require
from scripted_service import API, make_client

from mddframes import Client, doctor_exit_code
from mddframes.doctor import COLUMNS, Finding
from mddframes.doctor.etags import check_etags
from mddframes.doctor.findings import report_frame
from mddframes.doctor.openapi import check_endpoints, documented_operations
from mddframes.emulator import serve
from mddframes.http.endpoints import ENDPOINTS

READ_ONLY = {"getToken", "getTree", "getStructure", "getRawData", "getObjectTypes", "getTable",
             "getMapping", "listDeploymentPackages"}  # fmt: skip
SCRIPT = Path(sys.executable).with_name("mddframes")


def test_the_report_has_one_row_per_check_and_the_documented_columns(client):
    report = client.doctor("DWH")
    assert tuple(report.columns) == COLUMNS
    assert list(report["check"]) == [
        "token realm", "API prefix", "OpenAPI document", "endpoints", "object types",
        "tree", "element", "raw data", "table", "mapping", "packages", "ETag",
    ]  # fmt: skip
    assert (report["result"] == "ok").all(), report.to_string()
    assert doctor_exit_code(report) == 0


def test_doctor_only_reads(client, emu):
    emu.reset_counters()
    client.doctor("DWH")
    called = {op for op, n in emu.counters().items() if n}
    assert called <= READ_ONLY and {"getTree", "getTable", "getMapping"} <= called


def test_neither_the_secret_nor_the_token_appears_in_the_report_or_the_log(emu, caplog):
    caplog.set_level(logging.DEBUG, logger="mddframes")
    with Client.from_emulator(emu) as c:
        report = c.doctor("DWH")
        token = c.http.tokens.token().reveal()
    shown = report.to_csv() + caplog.text
    assert emu.client_secret not in shown and token not in shown


def test_a_wrong_secret_breaks_and_is_not_shown(emu):
    wrong = "not-the-secret-" + "x" * 24
    with Client.from_emulator(emu, client_secret=wrong) as c:
        report = c.doctor("DWH")
    token = report.set_index("check").loc["token realm"]
    assert token["result"] == "breaks" and token["row"] == "4"
    assert "unauthorized_client" in token["evidence"]
    assert set(report["result"].iloc[1:]) == {"unknown"}  # nothing checked without a token
    assert doctor_exit_code(report) == 2
    assert wrong not in report.to_csv() and emu.client_secret not in report.to_csv()


def test_a_prefix_that_answers_nowhere_breaks_naming_row_2(emu):
    with Client.from_emulator(emu, api_prefix="/nowhere") as c:
        report = c.doctor("DWH").set_index("check")
    assert report.loc["API prefix", ["row", "result"]].tolist() == ["2", "breaks"]
    assert "'/nowhere' and ''" in report.loc["API prefix", "evidence"]
    assert doctor_exit_code(report.reset_index()) == 2


def test_without_a_system_the_reads_are_unknown_and_the_exit_code_1(client):
    report = client.doctor().set_index("check")
    assert report.loc["object types", "result"] == "ok"
    for check in ("tree", "element", "raw data", "table", "mapping", "packages", "ETag"):
        assert report.loc[check, "result"] == "unknown"
        assert "no system given" in report.loc[check, "evidence"]
    assert doctor_exit_code(report.reset_index()) == 1


def test_an_unknown_system_breaks_the_tree_check(client):
    report = client.doctor("NO-SUCH-SYSTEM").set_index("check")
    assert report.loc["tree", "result"] == "breaks"
    assert report.loc["element", "result"] == "unknown"


def test_masking_catches_a_credential_a_server_might_echo():
    finding = Finding("token realm", "4", "breaks", "server said: bad secret s3cr3t-value")
    assert "s3cr3t-value" not in report_frame([finding], ["s3cr3t-value"]).to_csv()


def test_exit_codes_and_results_are_checked():
    def frame(*results: str) -> pd.DataFrame:
        return pd.DataFrame({"result": list(results)})

    assert doctor_exit_code(frame("ok", "ok")) == 0
    assert doctor_exit_code(frame("ok", "unknown")) == 1
    assert doctor_exit_code(frame("differs", "ok")) == 1
    assert doctor_exit_code(frame("differs", "breaks", "ok")) == 2
    with pytest.raises(ValueError, match="unknown doctor results"):
        doctor_exit_code(frame("fine"))
    with pytest.raises(ValueError, match="result must be one of"):
        Finding("x", "1", "fine", "")


# -- the OpenAPI comparison on documents a real service might publish ----------------


def _document(skip=(), rename=None, servers="/api/mdd-backend", prefixed_paths=False):
    """An OpenAPI document of the endpoints table, parameters renamed, some ops changed."""
    paths: dict[str, dict] = {}
    for entry in ENDPOINTS.values():
        if entry.operation == "getToken" or entry.operation in skip:
            continue
        path = entry.path.replace("{id}", "{structureId}")  # the service's own names
        path = ("/api/mdd-backend" + path) if prefixed_paths else path
        op_id = (rename or {}).get(entry.operation, entry.operation)
        paths.setdefault(path, {})[entry.method.lower()] = {"operationId": op_id}
    paths["/api/health"] = {"get": {"operationId": "health"}}
    return {"openapi": "3.0.1", "servers": [{"url": f"https://acme.example.com{servers}"}],
            "paths": paths}  # fmt: skip


def test_a_document_listing_every_path_under_its_prefix_matches(client):
    for document in (_document(), _document(servers="", prefixed_paths=True)):
        assert len(documented_operations(document, ["/api/mdd-backend"])) == 18
        finding = check_endpoints(client.api, document)
        assert finding.result == "ok", finding
        assert "17 match" in finding.evidence and "1 other" in finding.evidence


def test_renamed_operations_differ_and_missing_ones_break(client):
    renamed = check_endpoints(client.api, _document(rename={"getMapping": "getMappingById"}))
    assert renamed.result == "differs" and "getMapping is 'getMappingById'" in renamed.evidence
    assert "calls paths, not ids" in renamed.action
    legacy = check_endpoints(client.api, _document(skip={"structureMassExportAsync"}))
    assert legacy.result == "differs" and "falls back to single exports" in legacy.action
    missing = check_endpoints(client.api, _document(skip={"deployStructure"}))
    assert missing.result == "breaks" and "deployStructure (POST /api/structure/{}/deploy/{})" in (
        missing.evidence
    )


# -- the command line, through the installed console script ---------------------------


def _doctor_command(dialect: str, fmt: str):
    """Run ``mddframes doctor DWH --format FMT`` against an emulator of ``dialect``."""
    with serve(dialect=dialect) as emu:
        env = {k: v for k, v in os.environ.items() if not k.startswith("MDD_")}
        env.update(MDD_TENANT=emu.tenant, MDD_BASE_URL=emu.base_url,
                   MDD_CLIENT_ID=emu.client_id, MDD_CLIENT_SECRET=emu.client_secret,
                   MDD_API_PREFIX=emu.api_prefix)  # fmt: skip
        command = [str(SCRIPT), "doctor", "DWH", "--format", fmt]
        done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=120)
    return emu, done


@pytest.mark.emulator
@pytest.mark.parametrize(
    ("dialect", "expected"),
    [("default", 0), ("spring-page", 1), ("literal-realm", 1), ("unprefixed", 1)],
)
def test_the_command_line_reports_and_exits_as_specified(dialect, expected):
    require("mddframes-script")
    emu, done = _doctor_command(dialect, "csv")
    assert done.returncode == expected, done.stdout + done.stderr
    report = pd.read_csv(io.StringIO(done.stdout), dtype=str, keep_default_na=False)
    assert list(report.columns[-5:]) == list(COLUMNS)
    differs = dict(report.loc[report["result"] != "ok", ["check", "result"]].values)
    assert differs == DIFFERENCES[dialect]
    assert emu.client_secret not in done.stdout + done.stderr  # the token: library tests


def test_the_text_report_puts_the_worst_first_and_counts_the_results():
    from mddframes.doctor import doctor_text
    from mddframes.doctor.findings import report_frame

    findings = [
        Finding("tree", "11", "ok", "155 entries as assumed"),
        Finding("API prefix", "2", "differs", "answers under ''", "mddframes repeats " * 12),
        Finding("token realm", "4", "breaks", "no realm answered", "set realm"),
        Finding("mapping", "17", "unknown", "no system given"),
    ]
    text = doctor_text(report_frame(findings, []))
    lines = text.splitlines()
    heads = [line for line in lines if not line.startswith(" ")]
    assert heads[:4] == [
        "breaks   token realm (wire-format row 4)",
        "differs  API prefix (wire-format row 2)",
        "unknown  mapping (wire-format row 17)",
        "ok       tree (wire-format row 11)",
    ]
    assert lines[-1] == "1 breaks, 1 differs, 1 unknown, 1 ok"
    assert all(len(line) <= 96 for line in lines)  # long actions wrap
    assert "      -> set realm" in lines  # the action aligned with the evidence


@pytest.mark.emulator
def test_the_command_line_prints_the_text_report_with_format_text():
    require("mddframes-script")
    emu, done = _doctor_command("literal-realm", "text")
    assert done.returncode == 1, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "differs  token realm (wire-format row 4)"
    assert lines[-1] == "1 differs, 11 ok"
    assert emu.client_secret not in done.stdout + done.stderr


# -- ETags of tables and mappings (row 29) ----------------------------------------------


def test_without_etags_doctor_says_writes_rely_on_the_lock_window(client):
    etag = client.doctor("DWH").set_index("check").loc["ETag"]
    assert (etag["row"], etag["result"]) == ("29", "ok")
    assert "no ETag on getTable" in etag["evidence"] and "getMapping" in etag["evidence"]
    assert "only by the lock window" in etag["action"]


@pytest.mark.emulator
def test_with_the_etag_dialect_doctor_finds_strong_stable_etags_and_writes_nothing():
    with serve(dialect="etag") as emu, Client.from_emulator(emu) as c:
        report = c.doctor("DWH")
        called = {op for op, n in emu.counters().items() if n}
    etag = report.set_index("check").loc["ETag"]
    assert (etag["row"], etag["result"]) == ("29", "ok"), etag.to_dict()
    assert "answer a strong ETag" in etag["evidence"] and "If-Match" in etag["action"]
    assert called <= READ_ONLY  # never a PUT to find out
    assert doctor_exit_code(report) == 0


def _etag_server(plan, headers_of_reads):
    """getTable and getMapping answering a small document with the given ETags, in turn."""
    for path in (f"{API}/table/t", f"{API}/mapping/m"):
        answers = iter(headers_of_reads)
        plan.routes[path] = lambda h, answers=answers: (
            200, {"Content-Type": "application/json", **next(answers)}, b"{}"
        )  # fmt: skip


@pytest.mark.parametrize(
    ("etags", "result", "words"),
    [
        (['"v1"', '"v1"'], "ok", "answer a strong ETag"),
        (['W/"v1"', 'W/"v1"'], "differs", "cannot use"),
        (['"v1"', '"v2"'], "breaks", "changes between two reads"),
    ],
)
def test_weak_and_unstable_etags_are_reported(script, etags, result, words):  # noqa: F811
    plan, url = script
    _etag_server(plan, [{"ETag": tag} for tag in etags])
    with make_client(url) as c:
        finding = check_etags(c.api, {"table": "t", "mapping": "m"})
    assert (finding.row, finding.result) == ("29", result), finding
    assert words in finding.evidence, finding
