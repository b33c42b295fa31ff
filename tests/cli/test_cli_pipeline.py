"""The command line as a pipeline runs it: the real console script in a subprocess.

Tables as code (pull -> edit -> plan -> apply), the journal commands, and the manners
of a pipe (a closed stdout, no progress text off a terminal, one message per problem).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import openpyxl
import pytest

from mddframes import Client
from mddframes.tables_as_code.csvtext import format_csv, parse_csv

# each test runs the command line many times, a process each
pytestmark = pytest.mark.slow

SCRIPT = str(Path(sys.executable).with_name("mddframes"))


@pytest.fixture
def run(emu, tmp_path):
    """Run ``mddframes ARGS`` against the emulator; returns the CompletedProcess."""
    env = {
        **os.environ,
        "HOME": str(tmp_path),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        "MDD_TENANT": emu.tenant,
        "MDD_BASE_URL": emu.base_url,
        "MDD_REALM": emu.realm,
        "MDD_API_PREFIX": emu.api_prefix,
        "MDD_CLIENT_ID": emu.client_id,
        "MDD_CLIENT_SECRET": emu.client_secret,
        "MDD_MAX_RETRIES": "0",
    }

    def call(*args: str, stdin: str | None = None, **kwargs) -> subprocess.CompletedProcess:
        return subprocess.run(
            [SCRIPT, *args], env=env, cwd=tmp_path, input=stdin, capture_output=True,
            text=True, timeout=120, **kwargs,
        )  # fmt: skip

    call.env = env
    return call


def _writes(emu) -> int:
    counters = emu.counters()
    return counters.get("tableUpdate", 0) + counters.get("mappingUpdate", 0)


def _plan(run, folder, *extra) -> tuple[int, dict]:
    done = run("plan", str(folder), "--format", "json", *extra)
    assert "Traceback" not in done.stderr, done.stderr
    return done.returncode, json.loads(done.stdout)


def _changed(plan: dict) -> dict[tuple[str, str], list]:
    return {
        (o["kind"], o["id"]): [(c["row"], c["column"], c["old"], c["new"]) for c in o["changes"]]
        for o in plan["objects"]
        if o["status"] != "unchanged"
    }


def _edit_csv(path: Path, old: str, new: str) -> None:
    text = path.read_text("utf-8")
    assert text.count(old) == 1, (path, old)
    path.write_text(text.replace(old, new), "utf-8")


def _edit_xlsx(path: Path, column: str, row: int, value) -> object:
    """Set one cell of the object sheet (``row``: the pulled position); returns the old value."""
    book = openpyxl.load_workbook(path)
    sheet = book.worksheets[0]
    header = [c.value for c in sheet[1]]
    cell = sheet.cell(row=row + 2, column=header.index(column) + 1)
    assert sheet.cell(row=row + 2, column=1).value == row
    old, cell.value = cell.value, value
    book.save(path)
    return old


def test_pull_edit_plan_apply_then_nothing_left(run, emu, tmp_path):
    folder = tmp_path / "dwh"
    pulled = run("pull", "DWH", str(folder), "--format", "json")
    assert pulled.returncode == 0, pulled.stderr
    assert pulled.stderr.startswith("pull: 213 object(s)") and "%|" not in pulled.stderr
    assert len(json.loads(pulled.stdout)) == 213
    # the country table again, as a workbook this time: its CSV and sidecar go
    ids = tmp_path / "ids.txt"
    ids.write_text("tbl-0109\n", "utf-8")
    again = run("pull", "DWH", str(folder), "--ids-file", str(ids), "--file-format", "xlsx")
    assert again.returncode == 0, again.stderr
    assert sorted(p.name for p in (folder / "tables").glob("tbl-0109.*")) == ["tbl-0109.xlsx"]

    code, plan = _plan(run, folder)
    assert code == 0 and _changed(plan) == {}

    _edit_csv(folder / "mappings/map-0001.csv", "TRIM(src.first_name)", "INITCAP(src.first_name)")
    old = _edit_xlsx(folder / "tables/tbl-0109.xlsx", "name", 2, "Afghanistan (AF)")
    assert old == "Afghanistan"
    before = _writes(emu)
    code, plan = _plan(run, folder, "--out", str(tmp_path / "plan.json"))
    assert code == 2
    assert _changed(plan) == {
        ("mapping", "map-0001"): [(1, "transformation", "TRIM(src.first_name)",
                                   "INITCAP(src.first_name)")],
        ("table", "tbl-0109"): [(2, "name", "Afghanistan", "Afghanistan (AF)")],
    }  # fmt: skip
    assert _writes(emu) == before  # plan sends nothing

    applied = run("apply", str(tmp_path / "plan.json"), "--backup-dir", str(tmp_path / "bk"),
                  "--format", "json")  # fmt: skip
    assert applied.returncode == 0, applied.stderr
    result = {(r["kind"], r["id"]): r for r in json.loads(applied.stdout)}
    assert set(result) == {("mapping", "map-0001"), ("table", "tbl-0109")}
    assert all(r["status"] == "written" and r["verified"] for r in result.values())
    assert _writes(emu) == before + 2
    with Client.from_emulator(emu) as client:
        countries = client.read_table("tbl-0109")
    assert countries.loc[2, "name"] == "Afghanistan (AF)"
    assert countries.loc[2, "numeric"] == "004"

    code, plan = _plan(run, folder)
    assert code == 0 and _changed(plan) == {}


def test_text_and_markdown_plans_name_the_cell(run, tmp_path):
    folder = tmp_path / "dwh"
    assert run("pull", "DWH", str(folder)).returncode == 0
    _edit_csv(
        folder / "tables/tbl-0109.csv", "2,AF,AFG,004,Afghanistan", "2,AF,AFG,004,Afghanistan!"
    )
    text = run("plan", str(folder))
    assert text.returncode == 2
    assert "~ table 'tbl-0109' (tables/tbl-0109.csv): changes: 1 cell(s) changed" in text.stdout
    assert "row 2 name: Afghanistan -> Afghanistan!" in text.stdout
    assert text.stdout.rstrip().endswith("Plan: 1 to change, 212 unchanged, 0 refused, 0 failed.")
    markdown = run("plan", str(folder), "--format", "markdown")
    assert markdown.returncode == 2
    assert "| ~ | table | `tbl-0109` | `tables/tbl-0109.csv` | changes: 1 cell(s) changed |" in (
        markdown.stdout
    )


def test_a_change_on_the_service_between_plan_and_apply_is_refused(run, emu, tmp_path):
    folder = tmp_path / "dwh"
    assert (
        run("pull", "DWH", str(folder), "--ids-file", "-", stdin="tbl-0109\nmap-0001\n").returncode
        == 0
    )
    _edit_csv(folder / "tables/tbl-0109.csv", "Afghanistan", "Afghanistan!")
    _edit_csv(folder / "mappings/map-0001.csv", "TRIM(src.first_name)", "UPPER(src.first_name)")
    code, _ = _plan(run, folder, "--out", str(tmp_path / "plan.json"))
    assert code == 2
    emu.touch_table("tbl-0109")
    before = _writes(emu)
    applied = run("apply", str(tmp_path / "plan.json"), "--format", "json")
    assert applied.returncode == 1
    result = {r["id"]: r for r in json.loads(applied.stdout)}
    assert result["tbl-0109"]["status"] == "refused"
    assert "changed on the service since the plan" in result["tbl-0109"]["error"]
    assert result["map-0001"]["status"] == "not sent"
    assert _writes(emu) == before  # all or nothing: the mapping was not sent either


def test_a_dropped_declared_column_is_refused_and_nothing_is_sent(run, emu, tmp_path):
    folder = tmp_path / "dwh"
    assert run("pull", "DWH", str(folder), "--ids-file", "-", stdin="tbl-0109\n").returncode == 0
    path = folder / "tables/tbl-0109.csv"
    records = [fields for _, fields in parse_csv(path.read_text("utf-8"))]
    assert records[0][-1] == "name"
    path.write_text(format_csv(fields[:-1] for fields in records), "utf-8")  # 'name' dropped
    before = _writes(emu)
    code, plan = _plan(run, folder)
    assert code == 1
    (entry,) = plan["objects"]
    assert entry["status"] == "refused"
    assert any(p["column"] == "name" for p in entry["problems"])
    applied = run("apply", str(folder))
    assert applied.returncode == 1
    assert _writes(emu) == before


HARD = {"tbl/with/slash": "slash", "..": "dots", "100%": "percent", "Zürich-Ω": "umlaut"}


def test_hard_ids_survive_pull_plan_apply(run, emu, tmp_path):
    folder = tmp_path / "lab"
    assert run("pull", "LAB", str(folder)).returncode == 0
    assert not (folder / "tables" / "..").is_file()
    with Client.from_emulator(emu) as client:
        for table_id, word in HARD.items():
            label = client.read_table(table_id).loc[0, "label"]
            name = f"tables/{_stem(table_id)}.csv"
            _edit_csv(folder / name, label, f"{label} ({word})")
    code, plan = _plan(run, folder)
    assert code == 2
    assert {key[1] for key in _changed(plan)} == set(HARD)
    applied = run("apply", str(folder), "--backup-dir", str(tmp_path / "bk"))
    assert applied.returncode == 0, applied.stdout + applied.stderr
    with Client.from_emulator(emu) as client:
        for table_id, word in HARD.items():
            assert client.read_table(table_id).loc[0, "label"].endswith(f"({word})")
    code, plan = _plan(run, folder)
    assert code == 0


def _stem(object_id: str) -> str:
    from mddframes.tables_as_code.names import encode_id

    return encode_id(object_id)


# -- a command line in a pipe ----------------------------------------------------------


def test_a_closed_stdout_ends_quietly_with_141(run):
    process = subprocess.Popen(
        [SCRIPT, "table", "tbl-0109"], env=run.env, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )  # fmt: skip
    process.stdout.close()  # the reader is gone before the first byte
    stderr = process.stderr.read().decode()
    assert process.wait(timeout=60) == 141
    assert stderr == ""


def test_head_dash_one_gets_no_traceback(run):
    done = subprocess.run(
        ["bash", "-c", f"set -o pipefail; '{SCRIPT}' tree DWH | head -1"], env=run.env,
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.stdout.startswith("id,")
    assert done.stderr == ""
    assert done.returncode in (0, 141)


def test_progress_only_when_asked_off_a_terminal(run, tmp_path):
    quiet = run("pull", "DWH", str(tmp_path / "a"))
    assert quiet.returncode == 0 and "%|" not in quiet.stderr and "pull:" in quiet.stderr
    forced = run("pull", "DWH", str(tmp_path / "b"), "--progress")
    assert forced.returncode == 0 and "pull:" in forced.stderr and "%|" in forced.stderr
    silent = run("-q", "pull", "DWH", str(tmp_path / "c"))
    assert silent.returncode == 0 and silent.stderr == ""


def test_a_partial_failure_is_one_message(run):
    done = run("deploy", "dep-42", "dwh-0020", "no-such-element", "--format", "json")
    assert done.returncode == 3
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("warning: deploy: 1 of 2 failed"), lines
    assert [r["ok"] for r in json.loads(done.stdout)] == [True, False]
    assert run("-q", "deploy", "dep-43", "no-such-element").stderr == ""


def test_bad_usage_is_64_and_help_lists_the_exit_codes(run):
    assert run("plan").returncode == 64
    assert run("tree", "DWH", "--format", "yaml").returncode == 64
    helped = run("--help")
    assert helped.returncode == 0 and "exit codes:" in helped.stdout and "141" in helped.stdout
    assert "2    plan: changes pending" in run("plan", "--help").stdout


# -- the write journal -------------------------------------------------------------------


def test_writes_resume_and_roll_back(run, emu, tmp_path):
    folder, backups = tmp_path / "dwh", tmp_path / "bk"
    assert (
        run("pull", "DWH", str(folder), "--ids-file", "-", stdin="tbl-0109\ntbl-0108\n").returncode
        == 0
    )
    _edit_csv(folder / "tables/tbl-0109.csv", "Afghanistan", "Afghanistan!")
    with Client.from_emulator(emu) as client:
        original = client.api.get_table("tbl-0109")
    emu.inject_faults(error_rate=1.0, error_statuses=(500,), operations=["tableUpdate"])
    failed = run("apply", str(folder), "--backup-dir", str(backups), "--format", "json")
    emu.clear_faults()
    assert failed.returncode == 1
    (row,) = json.loads(failed.stdout)
    assert row["status"] == "failed" and row["batch"]
    batch = row["batch"]

    listed = run("writes", "--backup-dir", str(backups), "--format", "json")
    assert listed.returncode == 2
    (pending,) = json.loads(listed.stdout)
    assert pending["batch"] == batch and pending["state"] == "failed"

    resumed = run("resume", batch, "--backup-dir", str(backups), "--format", "json")
    assert resumed.returncode == 0, resumed.stderr
    assert [r["action"] for r in json.loads(resumed.stdout)] == ["sent"]
    assert run("writes", "--backup-dir", str(backups)).returncode == 0
    code, _ = _plan(run, folder)
    assert code == 0

    rolled = run("roll-back", batch, "--backup-dir", str(backups), "--format", "json")
    assert rolled.returncode == 0, rolled.stderr
    with Client.from_emulator(emu) as client:
        assert client.api.get_table("tbl-0109") == original
    missing = run("resume", "no-such-batch", "--backup-dir", str(backups))
    assert missing.returncode == 1 and missing.stderr.startswith("error:")


def test_a_paged_tree_shows_no_progress_off_a_terminal_unless_asked(run, tmp_path):
    from mddframes.emulator import serve

    # 3,000 elements in Spring pages: more than one page even at the bigger page size
    with serve(dialect="spring-page", elements=3000) as paged:
        env = {**run.env, "MDD_BASE_URL": paged.base_url, "MDD_CLIENT_SECRET": paged.client_secret}
        args = [SCRIPT, "tree", "SCALE"]

        def tree(*extra: str) -> subprocess.CompletedProcess:
            return subprocess.run(
                [*args, *extra], env=env, cwd=tmp_path, capture_output=True, text=True,
                timeout=120,
            )  # fmt: skip

        plain = tree()
        assert plain.returncode == 0, plain.stderr
        assert len(plain.stdout.splitlines()) == 3001  # header + every element
        assert "page" not in plain.stderr and "%|" not in plain.stderr
        forced = tree("--progress")
        assert forced.returncode == 0 and "page" in forced.stderr, forced.stderr


def test_writes_finds_the_tenants_batches_wherever_it_is_run(run, emu, tmp_path):
    # no backup_dir anywhere: the default is the user's data folder (HOME is tmp_path)
    env = {k: v for k, v in run.env.items() if k != "MDD_BACKUP_DIR"}
    env["XDG_DATA_HOME"] = str(tmp_path / "data")
    folder, here, there = tmp_path / "dwh", tmp_path / "here", tmp_path / "there"
    here.mkdir(), there.mkdir()

    def call(*args: str, cwd: Path, stdin: str | None = None) -> subprocess.CompletedProcess:
        return subprocess.run([SCRIPT, *args], env=env, cwd=cwd, input=stdin,
                              capture_output=True, text=True, timeout=120)  # fmt: skip

    assert call("pull", "DWH", str(folder), "--ids-file", "-", cwd=here,
                stdin="tbl-0109\n").returncode == 0  # fmt: skip
    _edit_csv(folder / "tables/tbl-0109.csv", "Afghanistan", "Afghanistan?")
    emu.inject_faults(error_rate=1.0, error_statuses=(500,), operations=["tableUpdate"])
    failed = call("apply", str(folder), "--format", "json", cwd=here)
    emu.clear_faults()
    assert failed.returncode == 1
    batch = json.loads(failed.stdout)[0]["batch"]
    assert list(here.iterdir()) == []  # no .mddframes/ left where apply ran

    listed = call("writes", "--format", "json", cwd=there)
    assert listed.returncode == 2, listed.stderr
    assert [row["batch"] for row in json.loads(listed.stdout)] == [batch]
    journal = json.loads(listed.stdout)[0]["journal"]
    assert Path(journal).is_relative_to(tmp_path / "data" / "mddframes" / "backups")

    # an older version's ./.mddframes/backups is still read where it exists, and named
    legacy = there / ".mddframes" / "backups" / emu.tenant / "journal"
    legacy.mkdir(parents=True)
    Path(journal).rename(legacy / Path(journal).name)
    moved = call("writes", "--format", "json", cwd=there)
    assert [row["batch"] for row in json.loads(moved.stdout)] == [batch]
    assert ".mddframes/backups" in moved.stderr and "older mddframes" in moved.stderr
    assert call("resume", batch, "--format", "json", cwd=there).returncode == 0
