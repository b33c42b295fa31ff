"""Each setting written once: its field of Settings drives connect(), its docs, the
environment, the command line and the settings page."""

from __future__ import annotations

import json
import os
from typing import get_type_hints

import pytest
from numpydoc.docscrape import FunctionDoc

import mddframes
from mddframes.cli import main
from mddframes.config import SettingArguments, resolve_settings
from mddframes.errors import ConfigurationError

SECRET = "s3cr3t-Value-never-shown"
FULL = {"base_url": "https://acme.example.com", "client_id": "ci", "client_secret": SECRET}
#: written here by hand: the settings the environment may not set
NO_VARIABLE = {"allow_insecure_http"}


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch, tmp_path):
    for name in list(os.environ):
        if name.startswith("MDD_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("HOME", str(tmp_path))


@pytest.mark.parametrize("function", [mddframes.connect, resolve_settings])
def test_the_docstring_describes_every_keyword_with_its_variable(function):
    parameters = {p.name: p.desc for p in FunctionDoc(function)["Parameters"]}
    assert {"tenant", "profile", "**settings"} <= set(parameters)
    # under **settings, a definition list: "name : type, optional" and its description
    described: dict[str, str] = {}
    for line in parameters["**settings"]:
        if " : " in line and not line.startswith(" "):
            name = line.split(" : ")[0]
            described[name] = ""
        elif described:
            described[name] += line
    assert set(described) == set(get_type_hints(SettingArguments))
    for name, text in described.items():
        variable = f"MDD_{name.upper()}"
        assert (variable in text) is (name not in NO_VARIABLE), name


def test_an_unknown_keyword_is_a_type_error_naming_it():
    with pytest.raises(TypeError, match="max_worker"):
        mddframes.connect("acme", **FULL, max_worker=3)  # type: ignore[call-arg]


def test_every_keyword_reaches_its_field_by_its_name():
    given = {
        "realm": "r", "api_prefix": "/p", "timeout": 7, "max_retries": 2, "verify": False,
        "max_workers": 3, "allow_insecure_http": True, "lock_dir": "/l", "lock_timeout": 9,
        "backup_dir": "/b", "request_deadline": 11, "max_response_bytes": 12,
        "max_rate": "60/min", "retry_budget": 4, "retry_after_max": 5,
    }  # fmt: skip
    settings = resolve_settings("acme", **FULL, **given)
    assert settings.timeout == (7.0, 7.0) and settings.max_rate == 1.0
    for name, value in given.items():
        if name not in {"timeout", "max_rate"}:
            assert getattr(settings, name) == value, name


def test_an_option_value_that_is_bad_is_named_by_its_option(monkeypatch, capsys):
    monkeypatch.setenv("MDD_CLIENT_SECRET", SECRET)
    code = main(["tree", "DWH", "--tenant", "acme", "--base-url", "https://x.example.com",
                 "--client-id", "c", "--max-rate", "soon"])  # fmt: skip
    assert code == 1
    err = capsys.readouterr().err
    assert "option --max-rate" in err and "argument max_rate=" not in err
    assert SECRET not in err


def test_a_missing_setting_names_its_option_on_the_command_line(monkeypatch, capsys):
    monkeypatch.setenv("MDD_CLIENT_SECRET", SECRET)
    assert main(["tree", "DWH", "--tenant", "a", "--base-url", "https://x.example.com"]) == 1
    assert "pass --client-id" in capsys.readouterr().err


def test_the_command_line_has_no_option_for_the_secret(capsys):
    with pytest.raises(SystemExit):
        main(["tree", "DWH", "--client-secret", SECRET])
    assert "unrecognized arguments: --client-secret" in capsys.readouterr().err


@pytest.mark.emulator
def test_connection_options_reach_the_emulator(emu, monkeypatch, capsys):
    # every connection setting from an option (the secret from its variable)
    monkeypatch.setenv("MDD_CLIENT_SECRET", emu.client_secret)
    options = ["--tenant", emu.tenant, "--base-url", emu.base_url, "--realm", emu.realm,
               "--client-id", emu.client_id, "--api-prefix", emu.api_prefix,
               "--request-deadline", "30", "--max-rate", "1000"]  # fmt: skip
    assert main(["tree", "DWH", "--format", "csv", *options]) == 0
    assert capsys.readouterr().out.startswith("id,")
    monkeypatch.setenv("MDD_API_PREFIX", "/wrong")
    assert main(["tree", "DWH", *options]) == 0  # the option beats the variable


def test_a_bad_variable_is_named_by_the_variable(monkeypatch):
    monkeypatch.setenv("MDD_REQUEST_DEADLINE", "-3")
    with pytest.raises(ConfigurationError, match="environment variable MDD_REQUEST_DEADLINE"):
        resolve_settings("acme", **FULL)


@pytest.mark.emulator
def test_user_agent_words_are_sent_after_mddframes_own(emu, tmp_path, monkeypatch):
    from mddframes import Client

    monkeypatch.setenv("MDD_USER_AGENT", "nightly-export (team data)")
    settings = resolve_settings(emu.tenant, base_url=emu.base_url, realm=emu.realm,
                                api_prefix=emu.api_prefix, client_id=emu.client_id,
                                client_secret=emu.client_secret)  # fmt: skip
    path = tmp_path / "ua.har"
    with Client(settings) as client, client.recording(path):
        client.read_tree("DWH")
    entries = json.loads(path.read_text("utf-8"))["log"]["entries"]
    agents = {
        h["value"] for e in entries for h in e["request"]["headers"] if h["name"] == "User-Agent"
    }
    assert agents == {"mddframes/0.1 nightly-export (team data)"}


@pytest.mark.parametrize("bad", ["two\r\nlines", "tab\there", "é", "x" * 201, "  "])
def test_user_agent_words_that_could_break_the_header_are_refused(bad):
    with pytest.raises(ConfigurationError, match="user_agent from argument user_agent="):
        resolve_settings("acme", **FULL, user_agent=bad)
