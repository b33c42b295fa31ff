"""mddframes record, doctor --recording (--write-profile), emulator --dialect-from, and
what a user whose tenant differs in a way nothing covers is told."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mddframes import Client, run_doctor
from mddframes.cli import main
from mddframes.config import Settings, load_profile
from mddframes.emulator import serve
from mddframes.emulator.recordings import Recording, RecordingError, learn


@pytest.fixture
def env(emu, monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("MDD_TENANT", emu.tenant)
    monkeypatch.setenv("MDD_BASE_URL", emu.base_url)
    monkeypatch.setenv("MDD_REALM", emu.realm)
    monkeypatch.setenv("MDD_API_PREFIX", emu.api_prefix)
    monkeypatch.setenv("MDD_CLIENT_ID", emu.client_id)
    monkeypatch.setenv("MDD_CLIENT_SECRET", emu.client_secret)
    return emu


def test_record_runs_the_command_and_writes_a_scrubbed_recording(env, tmp_path, capsys):
    path = tmp_path / "doctor.har"
    assert main(["record", str(path), "--", "doctor", "DWH", "--format", "csv"]) == 0
    out, err = capsys.readouterr()
    assert "token realm" in out  # the command's own output
    assert "recorded 13 call(s)" in err
    text = path.read_text("utf-8")
    assert env.client_secret not in text and env.base_url.split("//")[1] not in text
    operations = [e["_operation"] for e in json.loads(text)["log"]["entries"]]
    assert operations[0] == "getToken" and "getTree" in operations


def test_record_needs_a_command(tmp_path, capsys):
    for command in ([], ["--", "emulator"]):
        with pytest.raises(SystemExit) as stopped:
            main(["record", str(tmp_path / "x.har"), *command])
        assert stopped.value.code == 64
    assert not (tmp_path / "x.har").exists()


@pytest.mark.emulator
def test_doctor_on_a_recording_offline_writes_a_profile_the_client_reads(tmp_path, capsys):
    path = tmp_path / "tenat.har"
    with serve(dialect="literal-realm") as emu, Client.from_emulator(emu) as client:
        with client.recording(path):
            run_doctor(client.api, "DWH")
    profile = tmp_path / "profile.toml"
    code = main(["doctor", "--recording", str(path), "--write-profile", str(profile),
                 "--profile-name", "tenant-a", "--format", "csv"])  # fmt: skip
    out, err = capsys.readouterr()
    assert code == 1  # the realm differs (mddframes copes)
    assert "token realm,4,differs" in out
    assert "wrote the profile 'tenant-a' (dialect literal-realm)" in err
    settings = load_profile("tenant-a", profile, required=True)
    assert settings == {"realm": "tenat", "api_prefix": "/api/mdd-backend"}
    # the learned settings, against the dialect: the realm holds at the first try
    with serve(dialect="literal-realm") as emu:
        fields = {
            "tenant": emu.tenant, "base_url": emu.base_url, "client_id": emu.client_id,
            "client_secret": emu.client_secret, **settings,
        }  # fmt: skip
        with Client(Settings(**fields)) as client:
            report = run_doctor(client.api, "DWH").set_index("check")
    assert report.loc["token realm", "result"] == "ok"


@pytest.mark.emulator
def test_emulator_dialect_from_a_recording(tmp_path):
    path = tmp_path / "snake.har"
    with serve(dialect="snake-case") as emu, Client.from_emulator(emu) as client:
        with client.recording(path):
            client.read_tree("DWH")
    with serve(dialect_from=path) as emu, Client.from_emulator(emu) as client:
        assert emu.dialect == "snake-case"
        assert len(client.read_tree("DWH")) == 155  # the sample, not the recording
        assert "snake" in str(client.api.snake_case_answers) or client.api.snake_case_answers


def _with_envelope(source: Path, target: Path) -> None:
    """The recording, its tree answers wrapped in an envelope no dialect serves."""
    document = json.loads(source.read_text("utf-8"))
    for entry in document["log"]["entries"]:
        if entry["_operation"] == "getTree":
            content = entry["response"]["content"]
            content["text"] = json.dumps({"items": json.loads(content["text"])})
    target.write_text(json.dumps(document), "utf-8")


@pytest.mark.emulator
def test_a_difference_nothing_covers_is_one_line_naming_the_row(tmp_path, capsys):
    path = tmp_path / "plain.har"
    with serve() as emu, Client.from_emulator(emu) as client:
        with client.recording(path):
            run_doctor(client.api, "DWH")
    odd = tmp_path / "odd.har"
    _with_envelope(path, odd)
    learned = learn(Recording.read(odd))
    assert learned.uncovered == [
        "getTree answered an object with the list under items (not a Spring Data page): "
        "no dialect serves that envelope (wire-format rows 11, 14, 18)"
    ]
    main(["doctor", "--recording", str(odd), "--format", "csv"])
    out, err = capsys.readouterr()
    told = [line for line in err.splitlines() if line.startswith("not covered:")]
    assert len(told) == 1, err
    assert "wire-format rows 11, 14, 18" in told[0] and "worth sending" in told[0]
    assert 'recording,"11, 14, 18",unknown' in out


def test_a_file_that_is_not_a_recording_is_named(tmp_path):
    bad = tmp_path / "notes.har"
    bad.write_text('{"log": {}}')
    with pytest.raises(RecordingError, match="notes.har is not a HAR file"):
        Recording.read(bad)
    bad.write_text("hello")
    with pytest.raises(RecordingError, match="is not JSON"):
        Recording.read(bad)


@pytest.mark.emulator
def test_a_har_from_elsewhere_replays_too(tmp_path):
    """A HAR without mddframes' own fields (a browser's, a proxy's): the operations are
    read off the paths."""
    path = tmp_path / "ours.har"
    with serve(dialect="spring-page") as emu, Client.from_emulator(emu) as client:
        with client.recording(path):
            tree = client.read_tree("DWH")
            table = client.read_table("tbl-0001")
    document = json.loads(path.read_text("utf-8"))
    for entry in document["log"]["entries"]:
        for field in ("_operation", "_parameters", "_prefix"):
            entry.pop(field)
    foreign = tmp_path / "foreign.har"
    foreign.write_text(json.dumps(document), "utf-8")
    assert learn(Recording.read(foreign)).dialect == "spring-page"
    with serve(replay=foreign) as emu, Client.from_emulator(emu) as client:
        assert len(client.read_tree("DWH")) == len(tree)
        assert client.read_table("tbl-0001").equals(table)


@pytest.mark.emulator
def test_a_recording_without_a_tree_replays_what_it_saw(tmp_path):
    path = tmp_path / "partial.har"
    with serve() as emu, Client.from_emulator(emu) as client:
        with client.recording(path):
            element = client.read_structure("dwh-0005")
            table = client.read_table("tbl-0001")
    with serve(replay=path) as emu, Client.from_emulator(emu) as client:
        assert client.read_structure("dwh-0005").equals(element)
        assert client.read_table("tbl-0001").equals(table)
        with pytest.raises(Exception, match="not in the recording partial.har"):
            client.read_tree("DWH-NEVER-READ")
