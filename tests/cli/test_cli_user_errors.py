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


def test_a_missing_secret_is_named_as_a_variable_not_a_python_call(env, monkeypatch, capsys):
    monkeypatch.delenv("MDD_CLIENT_SECRET")
    assert main(["packages", "DWH"]) == 1
    err = capsys.readouterr().err
    assert "set the environment variable MDD_CLIENT_SECRET" in err
    assert "connect()" not in err and "client_secret=" not in err


def test_an_unknown_batch_speaks_in_commands(env, tmp_path, capsys):
    assert main(["resume", "no-such-batch", "--backup-dir", str(tmp_path / "bk")]) == 1
    err = capsys.readouterr().err
    assert "see 'mddframes writes'; pass the same --backup-dir as the write" in err
    assert "pending_writes()" not in err and "backup_dir " not in err


def test_a_failed_apply_names_the_resume_command(env, tmp_path, capsys):
    folder, backups = tmp_path / "dwh", tmp_path / "bk"
    ids = tmp_path / "ids.txt"
    ids.write_text("tbl-0109\n", "utf-8")
    assert main(["pull", "DWH", str(folder), "--ids-file", str(ids)]) == 0
    csv = folder / "tables" / "tbl-0109.csv"
    csv.write_text(csv.read_text("utf-8").replace("Afghanistan", "Afghanistan!", 1), "utf-8")
    capsys.readouterr()
    env.inject_faults(error_rate=1.0, error_statuses=(500,), operations=["tableUpdate"])
    try:
        code = main(["apply", str(folder), "--backup-dir", str(backups), "--format", "json"])
    finally:
        env.clear_faults()
    assert code == 1
    captured = capsys.readouterr()
    (row,) = json.loads(captured.out)
    batch = row["batch"]
    assert f"run 'mddframes resume {batch} --backup-dir {backups}' to finish it" in captured.err
    assert f"'mddframes roll-back {batch} --backup-dir {backups}'" in captured.err
    assert "resume(" not in captured.err and "roll_back(" not in captured.err


def test_an_unknown_object_type_names_the_object_types_command(env, tmp_path, capsys):
    code = main(["export", "sql-dd", "dwh-0002", "--dest", str(tmp_path / "s.zip")])
    assert code == 1
    err = capsys.readouterr().err
    assert err.startswith("error: object type 'sql-dd' is not one of the service's object types")
    assert "'mddframes object-types' lists them" in err
    assert "no batch export" not in err


def test_an_interrupted_export_prints_its_task_and_the_command_to_reattach(env, tmp_path):
    import os
    import signal
    import subprocess
    import sys
    import time

    from mddframes import Client

    with Client.from_emulator(env) as client:
        hub = client.read_tree("DWH", types="HUB")["id"].iloc[0]
    env.hold_next_task(seconds=4)
    dest = tmp_path / "scripts.zip"
    process = subprocess.Popen(
        [sys.executable, "-m", "mddframes", "export", "sql-ddl", hub, "--dest", str(dest)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=dict(os.environ),
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 30
        while env.counters().get("structureMassExportAsyncStatus", 0) == 0:
            assert time.monotonic() < deadline and process.poll() is None
            time.sleep(0.05)
        process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert process.returncode == 130
    assert not dest.exists()
    line = next(x for x in err.splitlines() if x.startswith("export interrupted: task "))
    task_id = line.split("task ", 1)[1].split(" ", 1)[0]
    assert f"mddframes export sql-ddl --task {task_id} --dest {dest}" in line
    assert main(["export", "sql-ddl", "--task", task_id, "--dest", str(dest)]) == 0
    assert dest.is_file()
