"""Where backups and journals go when no backup_dir is given: never the current folder."""

from __future__ import annotations

import warnings
from pathlib import Path

import platformdirs
import pytest

from mddframes import Client
from mddframes.errors import MddWarning
from mddframes.writing import backup_root, default_backup_root

TABLE = "tbl-0109"


def _edited(client, table_id=TABLE):
    frame = client.read_table(table_id)
    frame.loc[frame.index[0], "name"] = "moved backups"
    return frame


def _interrupted_batch(client, backup_dir) -> str:
    """A batch whose journal holds its plan line only: a crash before any PUT."""
    long = client.read_tables([TABLE, "tbl-0110"], progress=False)
    long.loc[(long["table_id"] == TABLE).to_numpy() & (long["row"] == 0).to_numpy(), "name"] = "x"
    written = client.write_tables(long, backup_dir=backup_dir, progress=False)
    journal = Path(written.attrs["journal"])
    journal.write_bytes(journal.read_bytes().splitlines(keepends=True)[0])
    return str(written.attrs["batch"])


@pytest.fixture
def elsewhere(tmp_path, monkeypatch):
    """A fresh current folder, no MDD_BACKUP_DIR, and the user's data folder in tmp_path."""
    here = tmp_path / "cwd"
    here.mkdir()
    monkeypatch.chdir(here)
    monkeypatch.delenv("MDD_BACKUP_DIR", raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    return here


def test_the_default_is_the_users_data_folder():
    expected = Path(platformdirs.user_data_dir("mddframes", appauthor=False)) / "backups"
    assert default_backup_root() == expected and expected.is_absolute()


@pytest.fixture
def tenant_client(emu, elsewhere):
    """A client made as for a tenant (``connect``), after ``elsewhere`` moved the folders."""
    import mddframes

    with mddframes.connect(
        emu.tenant, base_url=emu.base_url, client_id=emu.client_id,
        client_secret=emu.client_secret, api_prefix=emu.api_prefix,
    ) as client:  # fmt: skip
        yield client


def test_a_write_without_backup_dir_leaves_nothing_in_the_current_folder(
    tenant_client, emu, elsewhere, tmp_path
):
    client = tenant_client
    result = client.write_table(TABLE, _edited(client))
    bulk = client.read_tables(["tbl-0110"], progress=False)
    bulk.loc[0, "name"] = "bulk, no backup_dir"
    written = client.write_tables(bulk, progress=False)

    assert list(elsewhere.iterdir()) == []  # no .mddframes/ where the process stands
    data = tmp_path / "data" / "mddframes" / "backups"
    assert result.backup.is_relative_to(data / emu.tenant / "table")
    assert Path(written.attrs["journal"]).parent == data / emu.tenant / "journal"


def test_the_setting_wins_over_the_variable_and_the_argument_over_both(emu, tmp_path, monkeypatch):
    monkeypatch.setenv("MDD_BACKUP_DIR", str(tmp_path / "variable"))
    with Client.from_emulator(emu) as plain:  # an emulator's client: under .emulator
        assert backup_root(plain.api) == tmp_path / "variable" / ".emulator"
    with Client.from_emulator(emu, backup_dir=str(tmp_path / "setting")) as client:
        assert backup_root(client.api) == tmp_path / "setting"
        assert backup_root(client.api, tmp_path / "argument") == tmp_path / "argument"
        result = client.write_table(TABLE, _edited(client))
        assert result.backup.is_relative_to(tmp_path / "setting")


def test_an_older_folder_in_the_current_folder_is_still_read_and_named_once(
    tenant_client, elsewhere, tmp_path
):
    client = tenant_client
    batch = _interrupted_batch(client, Path(".mddframes") / "backups")
    legacy = elsewhere / ".mddframes" / "backups"

    with pytest.warns(MddWarning, match=r"older mddframes.*\.mddframes/backups") as noticed:
        pending = client.pending_writes()
    assert str(legacy) in str(noticed[0].message)
    assert batch in pending["batch"].tolist()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # once per process: no second notice
        assert batch in client.pending_writes()["batch"].tolist()
        done = client.resume(batch, progress=False)
    assert done["action"].notna().all()
    assert batch not in client.pending_writes()["batch"].tolist()
    # new backups still go to the data folder
    assert client.write_table(TABLE, _edited(client)).backup.is_relative_to(tmp_path / "data")
