"""Every ``mddframes`` command of README.md and of the guide (docs/guide/*.md) runs, with
its documented exit code.

Each command runs as written, through bash (redirections and ``|| [ $? -eq 2 ]`` included),
in a fresh folder with ``MDD_*`` variables pointing at the emulator. The substitutions are
what a reader supplies: ``.venv/bin/mddframes`` is the console script of this environment,
``BATCH`` a batch id that ``mddframes writes`` listed, and ``--port 8080`` a free port (a
fixed one may be taken on a shared machine). The files the commands read
(``changed.txt``, ``deployment-info.json``) and the reader's edit between ``pull`` and
``plan`` are made by the test. The Python blocks run in tests/client/test_readme.py.
"""

from __future__ import annotations

import io
import json
import os
import re
import signal
import subprocess
import sys
import zipfile
from pathlib import Path

import pandas as pd
import pytest
import requests
from doc_blocks import code_files, marked_blocks

from mddframes import Client
from mddframes.emulator.app import TOKEN_PATH

# each test runs the command line many times, a process each
pytestmark = pytest.mark.slow

REPOSITORY = Path(__file__).resolve().parents[2]
README = REPOSITORY / "README.md"
#: README.md and the user guide's pages: their commands are the same promise
DOCUMENTS = [README, *sorted((REPOSITORY / "docs" / "guide").glob("*.md"))]
SCRIPT = str(Path(sys.executable).with_name("mddframes"))

# each README command and the exit code it has in the README's scenario
PIPELINE = {
    "mddframes tree DWH --types HUB,LINK -o hubs.csv": 0,
    "mddframes table tbl-0109 --format json > countries.json": 0,
    "mddframes export sql-ddl --ids-file changed.txt --dest scripts.zip --extract scripts/": 0,
    "mddframes package-add DWH release-2024.07 --ids-file changed.txt": 0,
    "mddframes deploy deploy-2024-07-15.1 --ids-file changed.txt": 0,
    "mddframes confirm-deployed deployment-info.json": 0,
    "mddframes doctor DWH": 0,
    "mddframes lineage DWH dwh-0005.customer_no --impact --format mermaid > impact.mmd": 0,
    "mddframes search DWH customer_no": 0,
    "mddframes snapshot DWH snapshots/2024-07-15": 0,
    "mddframes snapshot DWH snapshots/2026-11-25": 0,  # docs/guide/snapshots.md
}
TABLES_AS_CODE = {
    # the one-line tour: nothing edited, so plan and apply find nothing to do
    "mddframes pull DWH tables/": 0,
    "mddframes plan tables/": 0,
    "mddframes apply tables/": 0,
}
PIPELINE_YAML = {
    # an edited file: changes pending is exit 2, which the step accepts
    "mddframes plan tables/ --format markdown --out plan.json > plan.md || [ $? -eq 2 ]": 0,
    'mddframes apply tables/ --backup-dir "$RUNNER_TEMP/mdd-backups" --format json': 0,
}
JOURNAL = {
    "mddframes writes": 2,  # after a write cut off by failed PUTs
    "mddframes resume BATCH": 0,
    "mddframes roll-back BATCH": 0,
    "mddframes writes --all": 0,  # README: `mddframes writes [--all]`
    "mddframes writes --prune 90": 0,  # docs/guide/security.md: nothing that old here
}
EMULATOR = {
    ".venv/bin/mddframes demo": 0,
    ".venv/bin/mddframes emulator --port 8080": 0,  # stopped by Ctrl-C (0, or 130)
    "mddframes emulator --dialect spring-page": 0,
    "mddframes emulator --elements 100000": 0,  # served at --elements 100 here
    "mddframes emulator --misfits": 0,  # docs/guide/reading.md: the sample with its misfit
    "mddframes --help": 0,
    "mddframes demo": 0,  # getting-started's install blocks: tests/docs/test_install.py
}
LINEAGE = {
    # docs/guide/lineage.md: the answers as frames (CSV) or the graph (DOT by the suffix)
    "mddframes lineage DWH dim_customer": 0,
    "mddframes lineage DWH dwh-0033 --downstream --depth 1": 0,
    "mddframes lineage DWH dwh-0005.customer_no --impact -o impact.dot": 0,
    "mddframes search DWH '^customer_' --regex --in names,mappings": 0,
}
RECORDING = {
    # docs/guide/offline.md, in this order (each reads what the one before wrote)
    "mddframes record tenant.har -- doctor DWH": 0,
    "mddframes record public.har --redact-values -- tree DWH": 0,
    "mddframes doctor --recording tenant.har": 0,
    "mddframes doctor --recording tenant.har --write-profile tenant.toml": 0,
}
REPLAYING = {
    "mddframes emulator --replay tenant.har": 0,
    "mddframes emulator --dialect-from tenant.har": 0,
}
SECOND_SHELL = {
    # docs/guide/getting-started.md: a standalone emulator, and a second shell using it
    "mddframes emulator --port 8080": 0,  # served at --port 0 here, stopped by Ctrl-C
    "mddframes tree DWH -o tree.csv": 0,
}
HISTORY = {
    # docs/guide/history.md: one version, so nothing changed in the last 7 days
    "mddframes snapshot LAB --history history/": 0,
    "mddframes history history/ --since 7d": 0,
}
ALL = {**PIPELINE, **TABLES_AS_CODE, **PIPELINE_YAML, **JOURNAL, **EMULATOR, **LINEAGE,
       **RECORDING, **REPLAYING, **SECOND_SHELL, **HISTORY}  # fmt: skip


def readme_commands() -> set[str]:
    """The ``mddframes`` commands of README.md and the guide: code blocks' lines and inline
    examples."""
    text = "\n".join(path.read_text("utf-8") for path in DOCUMENTS)
    found: set[str] = set()
    for block in re.findall(r"^```(?:bash|yaml)\n(.*?)^```", text, flags=re.DOTALL | re.M):
        for line in block.splitlines():
            line = re.sub(r"^\s*-\s*run:\s*", "", line)  # a pipeline step
            line = re.sub(r"\s+#.*$", "", line)  # a comment
            for part in re.split(r"\s+;\s+|\s+&&\s+", line):
                if re.match(r"(\.venv/bin/)?mddframes\s", part.strip()):
                    found.add(part.strip())
    for span in re.findall(r"`((?:\.venv/bin/)?mddframes [^`]+)`", text):
        span = " ".join(span.split())
        if span.endswith(" [--all]"):
            found.update({span[: -len(" [--all]")], span.replace("[--all]", "--all")})
        elif not re.fullmatch(r"mddframes [a-z][a-z-]*|.*<.*", span):  # a name, `resume <batch>`
            found.add(span)
    return found


def test_every_readme_command_is_run_here():
    assert readme_commands() == set(ALL)


@pytest.fixture
def sh(emu, tmp_path):
    """Run one README command as written in ``tmp_path/work``; asserts its exit code."""
    work = tmp_path / "work"
    work.mkdir()
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("MDD_")},
        "PATH": f"{Path(SCRIPT).parent}{os.pathsep}{os.environ.get('PATH', '')}",
        "HOME": str(tmp_path),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        "XDG_CACHE_HOME": str(tmp_path / "cache"),
        "XDG_DATA_HOME": str(tmp_path / "data"),
        "XDG_STATE_HOME": str(tmp_path / "state"),
        "RUNNER_TEMP": str(tmp_path / "runner"),
        "MDD_TENANT": emu.tenant,
        "MDD_BASE_URL": emu.base_url,
        "MDD_REALM": emu.realm,
        "MDD_API_PREFIX": emu.api_prefix,
        "MDD_CLIENT_ID": emu.client_id,
        "MDD_CLIENT_SECRET": emu.client_secret,
        "MDD_MAX_RETRIES": "0",
    }

    def run(
        command: str, expect: int | None = None, **substitutions: str
    ) -> subprocess.CompletedProcess[str]:
        assert command in ALL, f"not a README or guide command: {command}"
        expect = ALL[command] if expect is None else expect
        line = command.replace(".venv/bin/mddframes", SCRIPT)
        for old, new in substitutions.items():
            line = line.replace(old, new)
        done = subprocess.run(
            ["bash", "-c", line], env=env, cwd=work, capture_output=True, text=True,
            timeout=180,
        )  # fmt: skip
        assert "Traceback" not in done.stderr, done.stderr
        assert done.returncode == expect, (command, done.returncode, done.stderr)
        return done

    run.work = work  # type: ignore[attr-defined]
    run.env = env  # type: ignore[attr-defined]
    return run


def _hubs(emu) -> list[str]:
    with Client.from_emulator(emu) as client:
        return [e["id"] for e in client.api.get_tree("DWH") if e["type"] == "HUB"]


def test_pipeline_commands(sh, emu):
    hubs = _hubs(emu)[:3]
    (sh.work / "changed.txt").write_text("\n".join(hubs) + "\n", "utf-8")
    info = emu.make_deployment_info(hubs, deployment_id="deploy-2024-07-15.1")
    (sh.work / "deployment-info.json").write_text(json.dumps(info), "utf-8")
    for command in PIPELINE:
        sh(command)

    tree = (sh.work / "hubs.csv").read_text("utf-8").splitlines()
    assert tree[0].startswith("id,") and len(tree) == 1 + 18 + 14  # hubs and links
    assert len(json.loads((sh.work / "countries.json").read_text("utf-8"))) == 249
    with zipfile.ZipFile(sh.work / "scripts.zip") as archive:
        assert len(archive.namelist()) == 3
    assert len([p for p in (sh.work / "scripts").rglob("*") if p.is_file()]) == 3
    with Client.from_emulator(emu) as client:
        deployed = {i: client.api.get_structure(i)["deploymentId"] for i in hubs}
    assert set(deployed.values()) == {"deploy-2024-07-15.1"}
    impact = (sh.work / "impact.mmd").read_text("utf-8")
    assert impact.startswith("flowchart LR\n") and "stg_crm_customer.customer_no" in impact


def test_lineage_commands(sh):
    printed = {command: sh(command).stdout for command in LINEAGE}
    upstream, downstream, found = (
        pd.read_csv(io.StringIO(printed[c])) for c in LINEAGE if "-o impact.dot" not in c
    )
    assert upstream["element_name"].tolist() == [
        "sat_crm_customer", "stg_crm_customer", "crm_customer",
    ]  # fmt: skip
    assert upstream["depth"].tolist() == [1, 2, 3]
    assert sorted(downstream["element_name"]) == ["hub_customer", "sat_crm_customer"]
    assert set(downstream["depth"]) == {1}
    dot = (sh.work / "impact.dot").read_text("utf-8")
    assert dot.startswith('digraph "lineage" {\n') and "stg_crm_customer.customer_no" in dot
    assert len(found) > 0 and set(found["where"]) <= {"element", "mapping"}
    assert found["value"].str.match(r"customer_").all()


def test_history_commands(sh, emu):
    for command in HISTORY:
        sh(command)
    with Client.from_emulator(emu) as client:  # a day's edit: one cell of one LAB table
        table_id = client.read_tree("LAB")["table_id"].dropna().iloc[0]
        frame = client.read_table(table_id)
        column = next(name for name in frame.columns if str(frame[name].dtype) == "string")
        frame.at[frame.index[0], column] = "edited since the first version"
        assert (
            client.write_table(table_id, frame, backup_dir=sh.work / "backups").status == "written"
        )
    sh("mddframes snapshot LAB --history history/")
    sh("mddframes history history/ --since 7d", expect=2)  # the second version changed one


def test_deploy_exits_3_when_some_failed(sh, emu):
    # README: "exit code 3 if some failed"
    (sh.work / "changed.txt").write_text(f"{_hubs(emu)[0]}\nno-such-element\n", "utf-8")
    done = sh("mddframes deploy deploy-2024-07-15.1 --ids-file changed.txt", expect=3)
    assert "no-such-element" in done.stderr


def test_tables_as_code_commands(sh):
    for command in TABLES_AS_CODE:
        sh(command)
    currencies = sh.work / "tables/tables/tbl-0110.csv"
    assert currencies.is_file()
    # the reader's edit (README: `$EDITOR tables/tables/tbl-0110.csv`)
    text = currencies.read_text("utf-8")
    currencies.write_text(text.replace("UAE Dirham", "UAE dirham", 1), "utf-8")
    first, second = PIPELINE_YAML
    sh(first)
    assert "tbl-0110" in (sh.work / "plan.md").read_text("utf-8")
    assert json.loads((sh.work / "plan.json").read_text("utf-8"))
    applied = sh(second)
    assert "tbl-0110" in applied.stdout
    assert any((Path(sh.env["RUNNER_TEMP"]) / "mdd-backups").rglob("*.json*"))
    sh("mddframes plan tables/")  # exit 0: written, nothing left to do


def test_journal_commands(sh, emu):
    sh("mddframes pull DWH tables/")
    countries = sh.work / "tables/tables/tbl-0109.csv"
    countries.write_text(countries.read_text("utf-8").replace("Afghanistan", "Afghanistan!"))
    emu.inject_faults(error_rate=1.0, error_statuses=(500,), operations=["tableUpdate"])
    try:  # the PUT fails: `apply` leaves an unfinished batch (exit 1)
        failed = subprocess.run(
            [SCRIPT, "apply", "tables/"], env=sh.env, cwd=sh.work, capture_output=True,
            text=True, timeout=120,
        )  # fmt: skip
    finally:
        emu.clear_faults()
    assert failed.returncode == 1

    (batch,) = pd.read_csv(io.StringIO(sh("mddframes writes").stdout))["batch"]
    assert "sent" in sh("mddframes resume BATCH", BATCH=batch).stdout
    sh("mddframes roll-back BATCH", BATCH=batch)
    assert batch in sh("mddframes writes --all").stdout
    assert sh("mddframes writes --prune 90").stdout.splitlines() == ["path,kind,saved_at,action"]


def test_recording_commands(sh):
    for command in RECORDING:
        sh(command)
    for name in ("tenant.har", "public.har"):
        assert (sh.work / name).stat().st_mode & 0o077 == 0
        assert sh.env["MDD_CLIENT_SECRET"] not in (sh.work / name).read_text("utf-8")
    assert "crm_customer" not in (sh.work / "public.har").read_text("utf-8")
    profile = (sh.work / "tenant.toml").read_text("utf-8")
    assert "[profiles.recorded]" in profile and 'realm = "acme"' in profile


def test_demo_command(sh):
    done = sh(".venv/bin/mddframes demo")
    assert "written: verified=True" in done.stdout


def test_help_lists_the_exit_codes(sh):
    helped = sh("mddframes --help").stdout
    assert "exit codes:" in helped and "141" in helped


@pytest.mark.parametrize(
    ("command", "substitutions"),
    [
        (".venv/bin/mddframes emulator --port 8080", {"--port 8080": "--port 0"}),
        ("mddframes emulator --dialect spring-page", {}),
        ("mddframes emulator --elements 100000", {"--elements 100000": "--elements 100"}),
        ("mddframes emulator --misfits", {}),
        ("mddframes emulator --replay tenant.har", {}),
        ("mddframes emulator --dialect-from tenant.har", {}),
    ],
)
def test_emulator_commands_serve_until_ctrl_c(sh, command, substitutions):
    if "tenant.har" in command:
        sh("mddframes record tenant.har -- doctor DWH")  # the guide's recording
    line = command.replace(".venv/bin/mddframes", SCRIPT)
    for old, new in substitutions.items():
        line = line.replace(old, new)
    env = {**sh.env, "MDD_EMULATOR_CLIENT_SECRET": "readme-secret"}
    process = subprocess.Popen(
        ["bash", "-c", f"exec {line}"], env=env, cwd=sh.work, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        url = None
        for printed in process.stdout:  # type: ignore[union-attr]
            found = re.search(r"listening on (http://127\.0\.0\.1:\d+)", printed)
            if found:
                url = found.group(1)
                break
        assert url, "the emulator printed no address"
        form = {"grant_type": "client_credentials", "client_id": "mddframes-demo",
                "client_secret": "readme-secret"}  # fmt: skip
        token = requests.post(url + TOKEN_PATH.format(realm="acme"), data=form, timeout=10)
        tree = requests.get(
            url + "/api/mdd-backend/api/system/DWH/tree", timeout=10,
            headers={"Authorization": f"Bearer {token.json()['access_token']}"},
        ).json()  # fmt: skip
        # the dialect asked for: a Spring page around the tree, else the bare list
        assert ("content" in tree) == ("spring-page" in command)
    finally:
        process.send_signal(signal.SIGINT)
        try:
            process.wait(timeout=20)
        finally:
            if process.poll() is None:
                process.kill()
                process.wait()
            process.stdout.close()  # type: ignore[union-attr]
            process.stderr.close()  # type: ignore[union-attr]
    assert process.returncode in (ALL[command], 130)


def _stop(process: subprocess.Popen[str]) -> None:
    """Ctrl-C to the process started here (by its pid), then wait for it."""
    process.send_signal(signal.SIGINT)
    try:
        process.wait(timeout=20)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        process.stdout.close()  # type: ignore[union-attr]
        process.stderr.close()  # type: ignore[union-attr]


def test_getting_started_reaches_a_second_shell(tmp_path):
    """getting-started's two shells, as written: the emulator in one process, the command
    line and a script of the reader's in another, connected by what the first printed and
    the secret the page chose."""
    page = (REPOSITORY / "docs" / "guide" / "getting-started.md").read_text("utf-8")
    blocks, files = marked_blocks(page), code_files(page)
    work = tmp_path / "clone"
    (work / ".venv" / "bin").mkdir(parents=True)
    # the reader's venv: its activate script puts this environment's mddframes first
    activate = f'export PATH="{Path(SCRIPT).parent}{os.pathsep}$PATH"\n'
    (work / ".venv" / "bin" / "activate").write_text(activate, "utf-8")
    for name, text in files.items():
        (work / name).write_text(text, "utf-8")
    # a reader's shell: no MDD_* of the developer's, no settings, no profile
    env = {k: v for k, v in os.environ.items() if not k.startswith("MDD_")}
    env.update({v: str(tmp_path / v.lower()) for v in
                ("XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME")})  # fmt: skip
    env["HOME"] = str(tmp_path)

    first = blocks["shell-1"]
    assert "mddframes emulator --port 8080" in first
    # a free port of the machine's choosing, and exec so that Ctrl-C reaches the emulator
    script = first.replace("mddframes emulator --port 8080", "exec mddframes emulator --port 0")
    emulator = subprocess.Popen(
        ["bash", "-c", "set -euo pipefail\n" + script], env=env, cwd=work,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        banner = []
        for printed in emulator.stdout:  # type: ignore[union-attr]
            banner.append(printed.strip())
            if printed.startswith("Press Ctrl-C"):
                break
        found = re.search(r"listening on http://127\.0\.0\.1:(\d+)", "\n".join(banner))
        assert found, f"the emulator printed no address: {banner}"
        port = found.group(1)
        second = blocks["shell-2"].replace("127.0.0.1:8080", f"127.0.0.1:{port}")
        # every setting the page exports is one the emulator printed, but the secret,
        # which it printed only on a terminal, and which is the one the first shell chose
        exported = dict(re.findall(r"(MDD_\w+)=(\S+)", second))
        chosen = dict(re.findall(r"(MDD_\w+)=(\S+)", first))
        secret = exported.pop("MDD_CLIENT_SECRET")
        assert secret == chosen["MDD_EMULATOR_CLIENT_SECRET"]
        assert secret not in "\n".join(banner)
        assert any("MDD_CLIENT_SECRET: not printed" in line for line in banner)
        for name, value in exported.items():
            assert f"export {name}={value}" in banner, (name, value, banner)
        done = subprocess.run(
            ["bash", "-c", "set -euo pipefail\n" + second], env=env, cwd=work,
            capture_output=True, text=True, timeout=180,
        )  # fmt: skip
        assert done.returncode == 0, (done.stdout, done.stderr)
        assert "Traceback" not in done.stderr, done.stderr
    finally:
        _stop(emulator)
    assert emulator.returncode in (ALL["mddframes emulator --port 8080"], 130)
    tree = pd.read_csv(work / "tree.csv")
    assert len(tree) > 100 and "DWH" in set(tree["system_name"])
    # the script's line: the same tree, counted through mddframes.connect() and MDD_*
    tables = int(tree["table_id"].notna().sum())
    assert f"{len(tree)} elements, {tables} with a table" in done.stdout
