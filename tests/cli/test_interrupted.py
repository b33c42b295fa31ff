"""Ctrl-C on a long command: exit 130, and stderr says what is left and how to go on.

The interruption is raised where the command's work happens (the layer function the
command calls), after the command has connected to the real emulator, before anything
is written: the message says so. Ctrl-C in the middle of the work, a real SIGINT to a
subprocess, is tests/cli/test_ctrl_c_midway.py.
"""

from __future__ import annotations

import pytest

from mddframes.cli import EXIT_INTERRUPTED, main


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
    (tmp_path / "ids.txt").write_text("dwh-0010\n", "utf-8")
    return emu


def _ctrl_c(*args: object, **kwargs: object) -> None:
    raise KeyboardInterrupt


#: command line -> (the function interrupted, what stderr says, in order)
LONG_COMMANDS = {
    "snapshot": (
        ["snapshot", "DWH", "{tmp}/snap"],
        "mddframes.client.Client.snapshot",
        ["snapshot of 'DWH' stopped before anything was written", "{tmp}/snap was not created",
         "mddframes snapshot DWH {tmp}/snap"],
    ),
    "pull": (
        ["pull", "DWH", "{tmp}/dwh"],
        "mddframes.tables_as_code.pull_folder",
        ["nothing was pulled", "{tmp}/dwh was not created", "mddframes pull DWH {tmp}/dwh"],
    ),
    "search": (
        ["search", "DWH", "Afghanistan"],
        "mddframes.client.Client.search",
        ["search stopped", "nothing is left behind"],
    ),
    "lineage": (
        ["lineage", "DWH", "dwh-0010"],
        "mddframes.client.Client.read_lineage",
        ["lineage stopped", "nothing is left behind"],
    ),
    "apply": (
        ["apply", "{tmp}/dwh", "--backup-dir", "{tmp}/bk"],
        "mddframes.tables_as_code.apply_plan",
        ["no write was begun", "the service holds what it held"],
    ),
    "export": (
        ["export", "DDL", "--ids-file", "{tmp}/ids.txt", "--dest", "{tmp}/out.zip"],
        "mddframes.client.Client.export_batch",
        ["no zip was written to {tmp}/out.zip", "again"],
    ),
}  # fmt: skip


@pytest.mark.parametrize("command", sorted(LONG_COMMANDS))
def test_ctrl_c_says_what_is_left_and_exits_130(command, env, monkeypatch, tmp_path, capsys):
    argv, where, says = LONG_COMMANDS[command]
    if command == "apply":  # a folder to apply
        assert main(["pull", "DWH", str(tmp_path / "dwh"), "--ids-file",
                     str(tmp_path / "ids.txt")]) == 0  # fmt: skip
        capsys.readouterr()
    monkeypatch.setattr(where, _ctrl_c)
    assert main([a.replace("{tmp}", str(tmp_path)) for a in argv]) == EXIT_INTERRUPTED
    err = capsys.readouterr().err
    assert err.startswith("interrupted: "), err
    at = 0
    for words in says:
        words = words.replace("{tmp}", str(tmp_path))
        found = err.find(words, at)
        assert found >= 0, f"{words!r} missing (or out of order) in: {err}"
        at = found + len(words)
    assert ".partial" not in err  # (no partial folder was begun: none is named)
