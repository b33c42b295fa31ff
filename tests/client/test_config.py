"""Settings resolution: argument > MDD_* variable > profile file > default, and its errors."""

from __future__ import annotations

import dataclasses
import pickle
from pathlib import Path
from typing import get_type_hints

import pytest

import mddframes
from mddframes.config import (
    DEFAULT_API_PREFIX,
    SETTINGS,
    Secret,
    SettingArguments,
    Settings,
    config_file_path,
    is_loopback_host,
    resolve_settings,
    settings_markdown,
)
from mddframes.errors import ConfigurationError

SECRET = "s3cr3t-Value-never-shown"

FULL = {
    "tenant": "acme",
    "base_url": "https://{tenant}.example.com",
    "client_id": "ci-bot",
    "client_secret": SECRET,
}


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch, tmp_path):
    """No MDD_* variable and no real profile file leaks into these tests."""
    import os

    for name in list(os.environ):
        if name.startswith("MDD_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))


def write_profile(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "xdg" / "mddframes" / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    path.chmod(0o600)
    return path


def test_arguments_alone_make_settings_with_defaults():
    settings = resolve_settings(**FULL)
    assert settings.base_url == "https://acme.example.com"
    assert settings.realm == "acme"
    assert settings.api_prefix == DEFAULT_API_PREFIX
    assert settings.api_url == "https://acme.example.com/api/mdd-backend"
    assert settings.timeout == (5.0, 60.0)
    assert settings.max_retries == 8
    assert settings.max_workers == 8
    assert settings.verify is True
    assert settings.client_secret.reveal() == SECRET


def test_environment_fills_what_arguments_leave_out(monkeypatch):
    monkeypatch.setenv("MDD_TENANT", "envco")
    monkeypatch.setenv("MDD_BASE_URL", "https://{tenant}.env.example")
    monkeypatch.setenv("MDD_CLIENT_ID", "env-id")
    monkeypatch.setenv("MDD_CLIENT_SECRET", SECRET)
    monkeypatch.setenv("MDD_REALM", "tenat")
    monkeypatch.setenv("MDD_API_PREFIX", "")
    monkeypatch.setenv("MDD_TIMEOUT", "2,30")
    monkeypatch.setenv("MDD_MAX_RETRIES", "0")
    monkeypatch.setenv("MDD_MAX_WORKERS", "3")
    monkeypatch.setenv("MDD_VERIFY", "false")
    settings = resolve_settings()
    assert settings.base_url == "https://envco.env.example"
    assert (settings.client_id, settings.realm, settings.api_prefix) == ("env-id", "tenat", "")
    assert settings.timeout == (2.0, 30.0)
    assert (settings.max_retries, settings.max_workers, settings.verify) == (0, 3, False)


def test_argument_beats_environment_beats_profile(monkeypatch, tmp_path):
    write_profile(
        tmp_path,
        """
        [default]
        tenant = "filetenant"
        base_url = "https://{tenant}.file.example"
        client_id = "file-id"
        client_secret = "file-secret"
        realm = "filerealm"
        """,
    )
    monkeypatch.setenv("MDD_CLIENT_ID", "env-id")
    monkeypatch.setenv("MDD_REALM", "envrealm")
    settings = resolve_settings(realm="argrealm")
    assert settings.realm == "argrealm"  # argument
    assert settings.client_id == "env-id"  # environment
    assert settings.base_url == "https://filetenant.file.example"  # profile
    assert settings.client_secret.reveal() == "file-secret"


def test_named_profile_from_argument_or_environment(monkeypatch, tmp_path):
    write_profile(
        tmp_path,
        """
        [default]
        tenant = "prod"
        base_url = "https://{tenant}.example.com"
        client_id = "id"
        client_secret = "x"

        [profiles.staging]
        tenant = "stage"
        base_url = "https://{tenant}.example.com"
        client_id = "id"
        client_secret = "x"

        [legacy]
        tenant = "old"
        base_url = "https://{tenant}.example.com"
        client_id = "id"
        client_secret = "x"
        """,
    )
    assert resolve_settings().tenant == "prod"
    assert resolve_settings(profile="staging").tenant == "stage"
    assert resolve_settings(profile="legacy").tenant == "old"
    monkeypatch.setenv("MDD_PROFILE", "staging")
    assert resolve_settings().tenant == "stage"


def test_missing_named_profile_lists_the_available_ones(tmp_path):
    path = write_profile(tmp_path, '[default]\ntenant = "a"\n[profiles.ci]\ntenant = "b"\n')
    with pytest.raises(ConfigurationError) as caught:
        resolve_settings(profile="nope")
    text = str(caught.value)
    assert "'nope'" in text and str(path) in text and "ci" in text and "default" in text


def test_named_profile_without_a_file_is_an_error(tmp_path):
    with pytest.raises(ConfigurationError, match="does not exist"):
        resolve_settings(profile="staging", **FULL)


def test_unknown_profile_key_is_named(tmp_path):
    write_profile(tmp_path, '[default]\ntenant = "a"\nclient_sceret = "typo"\n')
    with pytest.raises(ConfigurationError, match="client_sceret"):
        resolve_settings()


def test_broken_profile_file_names_the_file(tmp_path):
    path = write_profile(tmp_path, "[default\n")
    with pytest.raises(ConfigurationError, match="cannot read the configuration file") as caught:
        resolve_settings()
    assert str(path) in str(caught.value)


def test_config_file_respects_xdg_config_home(tmp_path):
    assert config_file_path({"XDG_CONFIG_HOME": str(tmp_path)}) == (
        tmp_path / "mddframes" / "config.toml"
    )
    assert config_file_path({}).parts[-3:] == (".config", "mddframes", "config.toml")


@pytest.mark.parametrize(
    ("missing", "variable"),
    [
        ("base_url", "MDD_BASE_URL"),
        ("client_id", "MDD_CLIENT_ID"),
        ("client_secret", "MDD_CLIENT_SECRET"),
    ],
)
def test_missing_setting_names_argument_variable_and_profile(missing, variable):
    given = {k: v for k, v in FULL.items() if k != missing}
    with pytest.raises(ConfigurationError) as caught:
        resolve_settings(**given)
    text = str(caught.value)
    assert f"missing setting {missing}" in text
    assert f"{missing}=" in text
    assert variable in text
    assert "config.toml" in text


def test_tenant_placeholder_without_tenant_names_tenant():
    given = {k: v for k, v in FULL.items() if k != "tenant"}
    with pytest.raises(ConfigurationError) as caught:
        resolve_settings(**given)
    assert "{tenant}" in str(caught.value) and "MDD_TENANT" in str(caught.value)


def test_no_tenant_needed_when_url_and_realm_are_complete():
    settings = resolve_settings(
        base_url="https://svc.example.com", client_id="i", client_secret="s", realm="r"
    )
    assert settings.tenant is None and settings.realm == "r"


def test_realm_without_tenant_is_named():
    with pytest.raises(ConfigurationError, match="realm"):
        resolve_settings(base_url="https://svc.example.com", client_id="i", client_secret="s")


@pytest.mark.parametrize(
    ("overrides", "fragment"),
    [
        ({"base_url": "ftp://x.example.com"}, "http:// or https://"),
        ({"base_url": "https://"}, "host name"),
        ({"base_url": "https://{tenant}.{region}.example.com"}, "placeholder"),
        ({"base_url": "https://user:pw@x.example.com"}, "user name or password"),
        ({"api_prefix": "api"}, "start with '/'"),
        ({"timeout": 0}, "timeout"),
        ({"timeout": (1, 2, 3)}, "timeout"),
        ({"max_retries": -1}, "max_retries"),
        ({"max_workers": 0}, "max_workers"),
        ({"verify": "/no/such/bundle.pem"}, "CA bundle"),
        ({"client_id": "   "}, "client_id"),
    ],
)
def test_invalid_values_are_refused_with_their_name(overrides, fragment):
    with pytest.raises(ConfigurationError, match=fragment.replace("(", r"\(")):
        resolve_settings(**{**FULL, **overrides})


def test_invalid_environment_value_names_the_variable(monkeypatch):
    monkeypatch.setenv("MDD_MAX_RETRIES", "many")
    with pytest.raises(ConfigurationError, match="MDD_MAX_RETRIES"):
        resolve_settings(**FULL)


def test_api_prefix_is_normalised_and_may_be_empty():
    assert resolve_settings(**FULL, api_prefix="/x/").api_prefix == "/x"
    assert resolve_settings(**FULL, api_prefix="").api_url == "https://acme.example.com"


@pytest.mark.parametrize("host", ["127.0.0.1", "127.8.9.10", "localhost", "[::1]"])
def test_plain_http_to_loopback_is_allowed(host):
    settings = resolve_settings(**{**FULL, "base_url": f"http://{host}:8080"})
    assert settings.base_url.startswith("http://")


@pytest.mark.parametrize(
    "host", ["acme.example.com", "10.0.0.5", "128.0.0.1", "localhost.evil.com"]
)
def test_plain_http_elsewhere_is_refused_unless_allowed(host):
    with pytest.raises(ConfigurationError, match="allow_insecure_http"):
        resolve_settings(**{**FULL, "base_url": f"http://{host}"})
    allowed = resolve_settings(**{**FULL, "base_url": f"http://{host}"}, allow_insecure_http=True)
    assert allowed.allow_insecure_http is True


def test_insecure_http_cannot_be_switched_on_from_the_environment(monkeypatch):
    monkeypatch.setenv("MDD_ALLOW_INSECURE_HTTP", "1")
    with pytest.raises(ConfigurationError, match="allow_insecure_http"):
        resolve_settings(**{**FULL, "base_url": "http://acme.example.com"})


def test_settings_built_directly_are_checked_too():
    with pytest.raises(ConfigurationError, match="plain http"):
        Settings(
            tenant="a",
            base_url="http://a.example.com",
            client_id="i",
            client_secret=SECRET,
            realm="a",
        )


def test_is_loopback_host():
    assert is_loopback_host("127.0.0.1") and is_loopback_host("::1")
    assert not is_loopback_host("127.0.0.1.nip.io") and not is_loopback_host("")


def test_secret_never_shows_itself():
    secret = Secret(SECRET)
    assert SECRET not in repr(secret) and SECRET not in str(secret) and SECRET not in f"{secret}"
    assert secret.reveal() == SECRET
    assert secret == Secret(SECRET) and secret != Secret("other")
    with pytest.raises(TypeError):
        pickle.dumps(secret)


def test_secret_absent_from_settings_and_client_reprs():
    settings = resolve_settings(**FULL)
    client = mddframes.connect(**FULL)
    try:
        for text in (repr(settings), str(settings), repr(client), str(client), repr(client.http)):
            assert SECRET not in text
        assert "acme" in repr(client) and "https://acme.example.com" in repr(client)
    finally:
        client.close()


def test_bad_string_value_is_not_echoed():
    # A secret pasted into the wrong setting must not be printed back.
    with pytest.raises(ConfigurationError) as caught:
        resolve_settings(**{**FULL, "client_id": 12345})
    assert "12345" not in str(caught.value)


def test_connect_resolves_from_the_environment(monkeypatch):
    monkeypatch.setenv("MDD_TENANT", "envco")
    monkeypatch.setenv("MDD_BASE_URL", "https://{tenant}.example.com")
    monkeypatch.setenv("MDD_CLIENT_ID", "id")
    monkeypatch.setenv("MDD_CLIENT_SECRET", SECRET)
    with mddframes.connect(max_workers=4) as client:
        assert client.tenant == "envco"
        assert client.base_url == "https://envco.example.com"
        assert client.max_workers == 4


def test_docs_hold_exactly_the_generated_table_of_settings():
    # every table line of docs/settings.md, in order, is the generated table: no drift
    document = (Path(__file__).parents[2] / "docs" / "settings.md").read_text("utf-8")
    table = "".join(line + "\n" for line in document.splitlines() if line.startswith("|"))
    assert table == settings_markdown()
    assert len(table.splitlines()) == len(SETTINGS) + 2


def test_every_field_of_settings_is_a_keyword_of_connect():
    # the two places a setting is written: its field of Settings (the declaration) and
    # its argument type in SettingArguments (for the type checker); tenant is positional
    fields = {field.name for field in dataclasses.fields(Settings)} - {"sources"}
    assert fields == {"tenant", *get_type_hints(SettingArguments)}
    assert [s.name for s in SETTINGS] == [f.name for f in dataclasses.fields(Settings)][:-1]


#: A text no variable of the setting accepts (settings absent: any non-empty text is valid).
BAD_TEXT = {
    "base_url": "ftp://x.example.com",
    "api_prefix": "api",
    "timeout": "soon",
    "max_retries": "-1",
    "max_workers": "0",
    "verify": "/no/such/bundle.pem",
}


@pytest.mark.parametrize("setting", SETTINGS, ids=lambda setting: setting.name)
def test_a_bad_value_names_the_argument_variable_or_profile_key_that_gave_it(
    setting, monkeypatch, tmp_path
):
    others = {k: v for k, v in FULL.items() if k != setting.name}
    with pytest.raises(ConfigurationError) as caught:
        resolve_settings(**others, **{setting.name: ["not", "a", "value"]})
    assert f"argument {setting.name}=" in str(caught.value)
    if setting.name in BAD_TEXT:
        assert setting.variable is not None
        monkeypatch.setenv(setting.variable, BAD_TEXT[setting.name])
        with pytest.raises(ConfigurationError) as caught:
            resolve_settings(**others)
        assert f"environment variable {setting.variable}" in str(caught.value)
        monkeypatch.delenv(setting.variable)
    path = write_profile(tmp_path, f"[default]\n{setting.profile_key} = [1, 2, 3]\n")
    with pytest.raises(ConfigurationError) as caught:
        resolve_settings(**others)
    assert f"{setting.profile_key} in profile 'default' of {path}" in str(caught.value)


def test_backup_dir_from_argument_variable_or_profile(monkeypatch, tmp_path):
    assert resolve_settings(**FULL).backup_dir is None  # the user's data folder, at write time
    write_profile(tmp_path, '[default]\nbackup_dir = "/srv/from-profile"\n')
    assert resolve_settings(**FULL).backup_dir == "/srv/from-profile"
    monkeypatch.setenv("MDD_BACKUP_DIR", "/srv/from-variable")
    assert resolve_settings(**FULL).backup_dir == "/srv/from-variable"
    assert resolve_settings(**FULL, backup_dir=tmp_path / "arg").backup_dir == str(tmp_path / "arg")
    with mddframes.connect(**FULL, backup_dir=tmp_path / "connect") as client:
        assert client.settings.backup_dir == str(tmp_path / "connect")
    monkeypatch.setenv("MDD_BACKUP_DIR", "")
    assert resolve_settings(**FULL).backup_dir == "/srv/from-profile"  # empty counts as unset
