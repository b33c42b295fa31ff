"""The command line, driven in-process with MDD_* settings pointing at the emulator."""

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
    monkeypatch.setenv("MDD_TENANT", emu.tenant)
    monkeypatch.setenv("MDD_BASE_URL", emu.base_url)
    monkeypatch.setenv("MDD_REALM", emu.realm)
    monkeypatch.setenv("MDD_API_PREFIX", emu.api_prefix)
    monkeypatch.setenv("MDD_CLIENT_ID", emu.client_id)
    monkeypatch.setenv("MDD_CLIENT_SECRET", emu.client_secret)
    return emu


def _csv(text: str) -> pd.DataFrame:
    return pd.read_csv(io.StringIO(text), dtype=str, keep_default_na=False)


def test_tree_prints_the_system_as_csv(env, capsys):
    assert main(["tree", "DWH"]) == 0
    frame = _csv(capsys.readouterr().out)
    assert list(frame["id"]) == _tree_ids(env)
    assert {"id", "name", "type", "parent_id", "depth", "path"} <= set(frame.columns)


def _tree_ids(emu):
    from mddframes import Client

    with Client.from_emulator(emu) as client:
        return [entry["id"] for entry in client.api.get_tree("DWH")]


def test_tree_types_filter_and_json_output(env, tmp_path):
    out = tmp_path / "hubs.json"
    assert main(["tree", "DWH", "--types", "HUB,LINK", "-o", str(out)]) == 0
    records = json.loads(out.read_text("utf-8"))
    assert records and {r["type"] for r in records} == {"HUB", "LINK"}


def test_table_keeps_leading_zeros(env, tmp_path):
    out = tmp_path / "countries.csv"
    assert main(["table", "tbl-0109", "-o", str(out)]) == 0
    frame = pd.read_csv(out, dtype=str)
    assert len(frame) == 249
    assert frame.loc[frame["alpha2"] == "AF", "numeric"].item() == "004"


def test_unknown_system_is_an_error_in_words(env, capsys):
    assert main(["tree", "NO-SUCH-SYSTEM"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error:") and "NO-SUCH-SYSTEM" in err
    assert env.client_secret not in err


def test_missing_settings_name_the_variable(env, monkeypatch, capsys):
    monkeypatch.delenv("MDD_CLIENT_SECRET")
    assert main(["packages", "DWH"]) == 1
    assert "MDD_CLIENT_SECRET" in capsys.readouterr().err


def test_package_add_reads_ids_from_a_file(env, tmp_path, capsys):
    ids_file = tmp_path / "ids.txt"
    ids_file.write_text("dwh-0010\ndwh-0011\n\ndwh-0010\n", "utf-8")
    before = env.counters().get("addToDeploymentPackage", 0)
    assert main(["package-add", "DWH", "release-2024.07", "--ids-file", str(ids_file)]) == 0
    assert env.counters().get("addToDeploymentPackage", 0) == before + 1
    result = _csv(capsys.readouterr().out)
    assert sorted(result["id"]) == ["dwh-0010", "dwh-0011"]
    from mddframes import Client

    with Client.from_emulator(env) as client:
        packages = {p["name"]: p for p in client.api.list_deployment_packages("DWH")}
    assert {"dwh-0010", "dwh-0011"} <= set(packages["release-2024.07"]["structureIds"])


def test_package_add_to_a_closed_package_fails_clearly(env, capsys):
    assert main(["package-add", "DWH", "release-2024.04", "dwh-0010"]) == 1
    err = capsys.readouterr().err
    assert "release-2024.04" in err and "DWH" in err


def test_export_writes_a_zip_with_one_file_per_element(env, tmp_path):
    dest = tmp_path / "scripts.zip"
    extracted = tmp_path / "scripts"
    ids = _ids_of_type(env, "HUB")[:3]
    assert main(["export", "sql-ddl", *ids, "--dest", str(dest), "--extract", str(extracted)]) == 0
    import zipfile

    with zipfile.ZipFile(dest) as archive:
        assert len(archive.namelist()) == 3
    assert len([p for p in extracted.rglob("*") if p.is_file()]) == 3


def _ids_of_type(emu, element_type):
    from mddframes import Client

    with Client.from_emulator(emu) as client:
        return [e["id"] for e in client.api.get_tree("DWH") if e["type"] == element_type]


def test_deploy_reports_partial_failure_with_exit_code_3(env, capsys):
    # one message for the problem: a warning line on stderr, not also a log line
    code = main(["deploy", "dep-42", "dwh-0020", "no-such-element"])
    captured = capsys.readouterr()
    err = captured.err.splitlines()
    assert len(err) == 1 and "no-such-element (deployment dep-42)" in err[0]
    assert code == EXIT_PARTIAL_FAILURE
    result = _csv(captured.out)
    assert dict(zip(result["id"], result["ok"], strict=True)) == {
        "dwh-0020": "True",
        "no-such-element": "False",
    }
    from mddframes import Client

    with Client.from_emulator(env) as client:
        element = client.api.get_structure("dwh-0020")
    assert element["deployed"] is True and element["deploymentId"] == "dep-42"
