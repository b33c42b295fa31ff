"""An object type that is not one string, or not the service's: refused in words (issue 24)."""

from __future__ import annotations

import warnings

import pytest

from mddframes import InvalidArgumentError, LegacyExportWarning


def test_a_list_of_object_types_is_refused_before_sending(client, emu, tmp_path):
    before = emu.counters().get("structureMassExportAsync", 0)
    with pytest.raises(InvalidArgumentError) as caught:
        client.export_batch(["dwh-0002"], ["sql-ddl", "sql-load"], tmp_path / "s.zip")
    assert "object_type_id must be one object type id" in str(caught.value)
    assert "['sql-ddl', 'sql-load']" in str(caught.value)
    assert emu.counters().get("structureMassExportAsync", 0) == before  # nothing sent
    with pytest.raises(InvalidArgumentError, match="export_script: object_type_id"):
        client.export_script("dwh-0002", ["sql-ddl"])


def test_a_mistyped_object_type_is_an_error_about_it_not_a_fallback(client, tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("error", LegacyExportWarning)  # no "no batch export" warning
        with pytest.raises(InvalidArgumentError) as caught:
            client.export_batch(["dwh-0002"], "sql-dd", tmp_path / "s.zip", progress=False)
    message = str(caught.value)
    assert message.startswith("object type 'sql-dd' is not one of the service's object types")
    assert "'sql-ddl'" in message
    assert not (tmp_path / "s.zip").exists()


@pytest.mark.emulator
def test_a_service_without_batch_export_still_falls_back(tmp_path):
    from mddframes import Client
    from mddframes.emulator import serve

    with serve(legacy=True) as emu, Client.from_emulator(emu) as client:
        hub = client.read_tree("DWH", types="HUB")["id"].iloc[0]
        with pytest.warns(LegacyExportWarning, match="no batch export"):
            archive = client.export_batch([hub], "sql-ddl", tmp_path / "s.zip", progress=False)
    assert archive.path.exists()
