"""The command line in the user's language: per-row exit code 3, commands not Python calls."""

from __future__ import annotations

import io
import json

import pandas as pd
import pytest

from mddframes.cli import EXIT_PARTIAL_FAILURE, main


@pytest.fixture
def env(emu, monkeypatch, tmp_path):
    """MDD_* variables for the emulator, and no profile file of the developer's."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setenv("HOME", str(tmp_path))
    for name, value in {
        "MDD_TENANT": emu.tenant, "MDD_BASE_URL": emu.base_url, "MDD_REALM": emu.realm,
        "MDD_API_PREFIX": emu.api_prefix, "MDD_CLIENT_ID": emu.client_id,
        "MDD_CLIENT_SECRET": emu.client_secret,
    }.items():  # fmt: skip
        monkeypatch.setenv(name, value)
    return emu


def _csv(text: str) -> pd.DataFrame:
    return pd.read_csv(io.StringIO(text), dtype=str, keep_default_na=False)


def test_package_add_with_an_unknown_id_prints_each_row_and_exits_3(env, capsys):
    code = main(["package-add", "DWH", "release-2024.07", "dwh-0010", "no-such-element"])
    assert code == EXIT_PARTIAL_FAILURE
    result = _csv(capsys.readouterr().out)
    assert result.set_index("id")["ok"].to_dict() == {
        "dwh-0010": "True",
        "no-such-element": "False",
    }


def test_confirm_deployed_with_an_unknown_id_prints_each_row_and_exits_3(env, tmp_path, capsys):
    info = env.make_deployment_info(["dwh-0010"], deployment_id="d-3")
    info["structures"].append({"id": "no-such-element", "version": 1})
    path = tmp_path / "deployment-info.json"
    path.write_text(json.dumps(info), "utf-8")
    assert main(["confirm-deployed", str(path)]) == EXIT_PARTIAL_FAILURE
    result = _csv(capsys.readouterr().out)
    assert result.set_index("id")["ok"].to_dict() == {
        "dwh-0010": "True",
        "no-such-element": "False",
    }
