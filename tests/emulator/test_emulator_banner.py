"""The emulator's banner tells a user how to connect: the exact ``export MDD_...=`` lines."""

from __future__ import annotations

import subprocess
import sys

from mddframes.emulator.server import banner_lines
from mddframes.emulator.state import EmulatorConfig


def _exports(lines):
    return dict(
        line.strip().removeprefix("export ").split("=", 1)
        for line in lines
        if line.strip().startswith("export ")
    )


def test_on_a_terminal_the_banner_gives_every_setting_connect_needs():
    config = EmulatorConfig(tenant="acme", client_secret="throwaway-1")
    lines = banner_lines(config, "http://127.0.0.1:8080", show_secret=True)
    assert _exports(lines) == {
        "MDD_BASE_URL": "http://127.0.0.1:8080",  # the root, not the api address
        "MDD_TENANT": "acme",
        "MDD_CLIENT_ID": config.client_id,
        "MDD_CLIENT_SECRET": "throwaway-1",
    }
    assert any(
        line.startswith("  api (not the base URL): http://127.0.0.1:8080/api/") for line in lines
    )


def test_off_a_terminal_the_secret_is_left_out():
    config = EmulatorConfig(client_secret="throwaway-2")
    lines = banner_lines(config, "http://127.0.0.1:8080", show_secret=False)
    assert "throwaway-2" not in "\n".join(lines)
    assert "MDD_CLIENT_SECRET" not in _exports(lines)
    assert any("MDD_EMULATOR_CLIENT_SECRET" in line for line in lines)


def test_the_exports_connect_a_client(emu, monkeypatch):
    from mddframes import connect

    config = EmulatorConfig(tenant=emu.tenant, client_id=emu.client_id)
    config.client_secret = emu.client_secret
    for name, value in _exports(
        banner_lines(config, emu.base_url.rstrip("/"), show_secret=True)
    ).items():
        monkeypatch.setenv(name, value)
    with connect() as client:
        assert len(client.read_object_types()) > 0


def test_help_names_the_secret_option_and_variable():
    shown = subprocess.run(
        [sys.executable, "-m", "mddframes", "emulator", "--help"],
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    assert "--client-secret" in shown and "MDD_EMULATOR_CLIENT_SECRET" in shown
