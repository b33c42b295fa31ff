"""An emulator's writes keep their backups, journals and locks apart from every tenant's:
the embedded emulator's clients and a replay (which serves a real tenant's name) never
write into ``<backup root>/<tenant>`` (issue 44)."""

from __future__ import annotations

from pathlib import Path

import pytest

import mddframes
from mddframes import Client
from mddframes.emulator import serve
from mddframes.testing import replayed

pytestmark = pytest.mark.emulator

TABLE = "tbl-0109"


@pytest.fixture
def home(tmp_path, monkeypatch) -> Path:
    """The user's home, data and cache folders in tmp_path; no MDD_BACKUP_DIR."""
    for variable, folder in [("HOME", "home"), ("XDG_DATA_HOME", "data"),
                             ("XDG_CACHE_HOME", "cache")]:  # fmt: skip
        (tmp_path / folder).mkdir()
        monkeypatch.setenv(variable, str(tmp_path / folder))
    monkeypatch.delenv("MDD_BACKUP_DIR", raising=False)
    monkeypatch.chdir(tmp_path / "home")
    return tmp_path


def _write_one_and_a_batch(client: Client, label: str = "kept apart") -> tuple[Path, Path]:
    frame = client.read_table(TABLE)
    frame.loc[frame.index[0], "name"] = label
    single = client.write_table(TABLE, frame)
    long = client.read_tables(["tbl-0110"], progress=False)
    long.loc[0, "name"] = f"{label} too"
    batch = client.write_tables(long, progress=False)
    return Path(single.backup), Path(batch.attrs["journal"])


def _files_under(folder: Path) -> list[Path]:
    return [p for p in folder.rglob("*") if p.is_file()] if folder.exists() else []


def test_the_embedded_emulators_writes_stay_out_of_the_tenants_folder(home):
    backups = home / "data" / "mddframes" / "backups"
    with serve() as emu, Client.from_emulator(emu) as client:
        backup, journal = _write_one_and_a_batch(client)
        tenant = emu.tenant
    assert backup.is_relative_to(backups / ".emulator" / tenant / "table")
    assert journal.parent == backups / ".emulator" / tenant / "journal"
    assert _files_under(backups / tenant) == []  # the real tenant of that name: untouched
    locks = home / "cache" / "mddframes" / "locks"
    assert _files_under(locks) and all(
        p.is_relative_to(locks / ".emulator") for p in _files_under(locks)
    )


def test_a_replay_serving_a_real_tenants_name_never_writes_into_its_folder(home):
    recording = home / "realco.har"
    with (
        serve(tenant="realco") as emu,
        Client.from_emulator(emu, backup_dir=str(home / "rec")) as c,
    ):
        with c.recording(recording):
            c.read_table(TABLE)
            c.read_tables(["tbl-0110"], progress=False)
    backups = home / "data" / "mddframes" / "backups"
    with replayed(recording) as client:
        assert client.tenant == "realco"
        backup, journal = _write_one_and_a_batch(client)
    assert backup.is_relative_to(backups / ".emulator" / "realco")
    assert journal.is_relative_to(backups / ".emulator" / "realco")
    assert not (backups / "realco").exists()


def test_an_explicit_folder_still_wins_and_a_tenants_client_keeps_its_folder(home):
    with serve() as emu:
        with Client.from_emulator(emu, backup_dir=str(home / "mine")) as client:
            backup, _ = _write_one_and_a_batch(client)
        assert backup.is_relative_to(home / "mine" / emu.tenant)
        # a client made as for a tenant (connect) backs up in the tenant's folder: only
        # clients that know they talk to an emulator use ``.emulator``
        tenant_client = mddframes.connect(
            emu.tenant, base_url=emu.base_url, client_id=emu.client_id,
            client_secret=emu.client_secret, api_prefix=emu.api_prefix,
        )  # fmt: skip
        with tenant_client:
            backup, _ = _write_one_and_a_batch(tenant_client, "as a tenant")
    assert backup.is_relative_to(home / "data" / "mddframes" / "backups" / emu.tenant)
