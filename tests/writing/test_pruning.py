"""Old backups and finished journals removed, unfinished batches refused (issue 35):
:func:`mddframes.writing.prune_backups` and ``mddframes writes --prune DAYS``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from mddframes import Client
from mddframes.errors import InvalidArgumentError
from mddframes.writing import pending_writes, prune_backups


def _write(client: Client, table_id: str, label: str, backups: Path) -> None:
    frame = client.read_table(table_id)
    frame.loc[frame.index[0], "label"] = label
    client.write_table(table_id, frame, backup_dir=backups)


def _failed_batch(client: Client, emu, backups: Path) -> str:
    stacked = client.read_tables(["lab-source"], progress=False)
    stacked.loc[stacked.index[0], "label"] = "never arrives"
    emu.inject_faults(error_rate=1.0, error_statuses=(500,), operations=["tableUpdate"])
    try:
        result = client.write_tables(stacked, backup_dir=backups, progress=False)
    finally:
        emu.clear_faults()
    assert result["status"].tolist() == ["failed"]
    return str(result.attrs["batch"])


def _files(backups: Path) -> set[str]:
    return {str(p.relative_to(backups)) for p in backups.rglob("*") if p.is_file()}


def test_prune_removes_what_is_old_and_refuses_unfinished_batches(emu, tmp_path):
    backups = tmp_path / "bk"
    with Client.from_emulator(emu, max_retries=0) as client:
        _write(client, "lab-source", "one", backups)
        _write(client, "lab-source", "two", backups)
        finished = client.write_tables(
            client.read_tables(["lab-source"], progress=False).assign(label="three"),
            backup_dir=backups,
            progress=False,
        )
        assert finished["status"].tolist() == ["written"]
        batch = _failed_batch(client, emu, backups)
        unfinished = pending_writes(client.api, backup_dir=backups)
        assert unfinished["batch"].tolist() == [batch]
        (kept_journal,) = unfinished["journal"].tolist()
        kept_backup = json.loads(Path(kept_journal).read_text().splitlines()[0])["objects"][0][
            "backup"
        ]
        before = _files(backups)
        assert len(before) == 6  # 4 backups, 2 journals

        assert prune_backups(client.api, 1, backup_dir=backups).empty  # all younger than a day
        preview = prune_backups(client.api, 0, backup_dir=backups, dry_run=True)
        assert _files(backups) == before
        assert (
            sorted(preview["action"])
            == ["kept: unfinished batch " + batch] * 2 + ["would remove"] * 4
        )

        pruned = prune_backups(client.api, 0, backup_dir=backups)
        assert pruned.attrs["refused"] == 2
        assert sorted(pruned["kind"]) == ["backup"] * 4 + ["journal"] * 2
        left = {str(backups / name) for name in _files(backups)}
        assert left == {kept_journal, kept_backup}
        # the batch can still be rolled back: its journal and backup are there
        rolled = client.roll_back(batch, backup_dir=backups, progress=False)
        assert rolled.attrs["finished"]
        again = prune_backups(client.api, 0, backup_dir=backups)
        assert again.attrs["refused"] == 0 and _files(backups) == set()


@pytest.mark.parametrize("days", [-1, "7", float("nan"), True])
def test_prune_refuses_a_bad_number_of_days(client, days):
    with pytest.raises(InvalidArgumentError, match="days must be a number"):
        prune_backups(client.api, days)


def test_the_command_line_prunes_and_exits_2_when_a_batch_was_refused(emu, tmp_path):
    backups = tmp_path / "bk"
    with Client.from_emulator(emu, max_retries=0) as client:
        _write(client, "lab-source", "one", backups)
        _failed_batch(client, emu, backups)
    env = {
        **os.environ,
        "MDD_TENANT": emu.tenant,
        "MDD_BASE_URL": emu.base_url,
        "MDD_REALM": emu.realm,
        "MDD_API_PREFIX": emu.api_prefix,
        "MDD_CLIENT_ID": emu.client_id,
        "MDD_CLIENT_SECRET": emu.client_secret,
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
    }
    done = subprocess.run(
        [sys.executable, "-m", "mddframes", "writes", "--prune", "0", "--backup-dir",
         str(backups), "--format", "json"],
        capture_output=True, text=True, env=env, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    actions = sorted(row["action"].split(" batch")[0] for row in json.loads(done.stdout))
    assert actions == ["kept: unfinished"] * 2 + ["removed"]
