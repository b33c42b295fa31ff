"""A newcomer's mistakes and the message each gets, on the command line and in Python.

One table: the mistake (a wrong or missing setting, a typo), what the message must say
(the setting's variable, the likeliest cause first) and what it must not (a Python
attribute on the command line, a realm the user never typed, the secret). Each row runs
against the real emulator, once through ``mddframes.cli.main`` and once through
``mddframes.connect`` (where it has a Python form).
"""

from __future__ import annotations

import socket
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

import mddframes
from mddframes.cli import EXIT_ERROR, EXIT_OK, main


def _closed_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass(frozen=True)
class Mistake:
    """One row: how to make the mistake and what its message says."""

    name: str
    #: MDD_* variables to set (a value) or unset (None) on top of the emulator's.
    env: dict[str, str | None]
    #: The command line, after ``mddframes``; ``{tmp}`` is the test's folder.
    argv: list[str]
    #: What the message says, in this order.
    says: list[str]
    #: What it never says.
    never: list[str] = field(default_factory=list)
    #: The Python form: a call on ``(tmp_path)`` after the variables are set, or None.
    python: Callable[[Path], Any] | None = None
    exit_code: int = EXIT_ERROR


def _read_object_types(tmp_path: Path) -> Any:
    with mddframes.connect() as client:
        return client.read_object_types()


def _pull_a_typo(tmp_path: Path) -> Any:
    with mddframes.connect() as client:
        return mddframes.pull_folder(
            client.api, "DWH", tmp_path / "dwh", ids=["tbl-1090"], progress=False
        )


MISTAKES = [
    Mistake(
        "a wrong tenant",
        {"MDD_TENANT": "acmee", "MDD_REALM": None},
        ["object-types"],
        ["no token for the tenant 'acmee'", "Check MDD_TENANT", "MDD_REALM", "MDD_BASE_URL"],
        never=["'tenat'", "set realm", "no token realm answered"],
        python=_read_object_types,
    ),
    Mistake(
        "no tenant",
        {"MDD_TENANT": None, "MDD_REALM": None},
        ["object-types"],
        ["missing setting tenant", "MDD_TENANT"],
        never=["missing setting realm"],
        python=_read_object_types,
    ),
    Mistake(
        "a wrong secret",
        {"MDD_CLIENT_SECRET": "not-the-secret"},
        ["object-types"],
        ["the client secret is wrong", "MDD_CLIENT_SECRET", "MDD_CLIENT_ID"],
        never=["not-the-secret"],
        python=_read_object_types,
    ),
    Mistake(
        "a wrong secret in a profile",
        {"MDD_PROFILE": "ci", "MDD_CLIENT_ID": None, "MDD_CLIENT_SECRET": None},
        ["object-types"],
        ["the client secret is wrong", "MDD_CLIENT_SECRET (from client_secret in profile 'ci'"],
        never=["not-the-secret"],
        python=_read_object_types,
    ),
    Mistake(
        "a wrong client id",
        {"MDD_CLIENT_ID": "nobody"},
        ["object-types"],
        ["MDD_CLIENT_ID ('nobody'", "MDD_CLIENT_SECRET"],
        python=_read_object_types,
    ),
    Mistake(
        "nothing listening at the base URL",
        {"MDD_BASE_URL": "http://127.0.0.1:{port}", "MDD_MAX_RETRIES": "0"},
        ["object-types"],
        ["could not connect", "Is the service running at http://127.0.0.1:", "MDD_BASE_URL"],
        python=_read_object_types,
    ),
    Mistake(
        "a typo in an id of a pull",
        {},
        ["pull", "DWH", "{tmp}/dwh", "--ids-file", "{tmp}/ids.txt"],
        ["has no table, mapping or element ['tbl-1090']", "did you mean", "'tbl-0109'"],
        python=_pull_a_typo,
    ),
    Mistake(
        "an output file in a folder that does not exist",
        {},
        ["object-types", "-o", "{tmp}/new/folder/types.csv"],
        [],
        never=["No such file or directory"],
        exit_code=EXIT_OK,
    ),
]


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
    (tmp_path / "ids.txt").write_text("tbl-1090\n", "utf-8")
    profile = tmp_path / "config" / "mddframes" / "config.toml"
    profile.parent.mkdir(parents=True)
    profile.write_text(f'[ci]\nclient_id = "{emu.client_id}"\nclient_secret = "not-the-secret"\n')
    profile.chmod(0o600)
    return emu


def _make(mistake: Mistake, monkeypatch: pytest.MonkeyPatch) -> None:
    port = str(_closed_port())
    for name, value in mistake.env.items():
        if value is None:
            monkeypatch.delenv(name, raising=False)
        else:
            monkeypatch.setenv(name, value.replace("{port}", port))


def _in_order(message: str, says: list[str]) -> None:
    at = 0
    for words in says:
        found = message.find(words, at)
        assert found >= 0, f"{words!r} missing (or out of order) in: {message}"
        at = found + len(words)


@pytest.mark.parametrize("mistake", MISTAKES, ids=lambda m: m.name)
def test_the_command_line_names_the_setting(mistake, env, monkeypatch, tmp_path, capsys):
    _make(mistake, monkeypatch)
    argv = [arg.replace("{tmp}", str(tmp_path)) for arg in mistake.argv]
    assert main(argv) == mistake.exit_code
    err = capsys.readouterr().err
    _in_order(err, mistake.says)
    for words in [*mistake.never, ".report", "connect()", env.client_secret]:
        assert words not in err
    if mistake.exit_code == EXIT_OK and "-o" in argv:
        assert Path(argv[argv.index("-o") + 1]).is_file()


@pytest.mark.parametrize(
    "mistake", [m for m in MISTAKES if m.python is not None], ids=lambda m: m.name
)
def test_python_names_the_setting(mistake, env, monkeypatch, tmp_path):
    _make(mistake, monkeypatch)
    assert mistake.python is not None
    with pytest.raises(mddframes.MddError) as caught:
        mistake.python(tmp_path)
    message = str(caught.value)
    _in_order(message, mistake.says)
    for words in [*mistake.never, env.client_secret]:
        assert words not in message


def test_a_plan_that_apply_would_refuse_speaks_of_apply_not_of_python(env, tmp_path, capsys):
    (tmp_path / "ids.txt").write_text("tbl-0109\n", "utf-8")
    folder = tmp_path / "dwh"
    assert main(["pull", "DWH", str(folder), "--ids-file", str(tmp_path / "ids.txt")]) == 0
    csv = folder / "tables" / "tbl-0109.csv"
    lines = csv.read_text("utf-8").splitlines(keepends=True)
    csv.write_text("".join(lines[:2] + lines[3:]), "utf-8")  # a row deleted
    capsys.readouterr()
    assert main(["plan", str(folder)]) == EXIT_ERROR
    out = capsys.readouterr().out
    assert "apply would refuse table 'tbl-0109'" in out and "pass --allow-deletes" in out
    assert ".report" not in out and "Nothing was sent" not in out


@pytest.mark.parametrize("argv", [["packages", "DWH"], ["search", "DWH", "a"], ["tree", "DWH"]])
def test_text_output_is_wrapped_to_the_terminal(argv, env, monkeypatch, capsys):
    monkeypatch.setenv("COLUMNS", "60")
    assert main([*argv, "--format", "text"]) == EXIT_OK
    lines = capsys.readouterr().out.splitlines()
    assert lines and max(map(len, lines)) <= 60


def test_every_help_lists_the_connection_variables(capsys):
    for argv in (["--help"], ["tree", "--help"], ["apply", "--help"]):
        with pytest.raises(SystemExit):
            main(argv)
        out = capsys.readouterr().out
        for variable in ("MDD_BASE_URL", "MDD_TENANT", "MDD_CLIENT_ID", "MDD_CLIENT_SECRET"):
            assert variable in out, (argv, variable)
