"""PackagePanel, DeployPanel and WriteReview against the emulator; no secret in any panel."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pandas as pd
import pytest
from widget_helpers import displayed, everything_shown, output_text, stderr_text

from mddframes.errors import InvalidArgumentError, PackageClosedError
from mddframes.widgets import DeployPanel, PackagePanel, WriteReview

THREE = ["dwh-0006", "dwh-0007", "dwh-0005"]  # dwh-0005 is already in release-2024.07


def package_ids(client, name: str) -> set[str]:
    packages = client.read_packages("DWH").set_index("name")
    return set(packages.loc[name, "structure_ids"])


# -- PackagePanel --


def test_package_panel_lists_open_packages_with_their_counts(client, emu):
    emu.close_package("DWH", "hotfix-2024.07.1")
    panel = PackagePanel(client, "DWH")
    assert panel.package.options == ("release-2024.07",)
    assert panel.package.value == "release-2024.07"
    assert panel.count.value == "10 element(s) in it"


def test_add_through_run_reports_and_highlights_what_was_in_already(client):
    panel = PackagePanel(client, "DWH")
    panel.picker.select(THREE)
    result = panel.run()
    assert result["id"].tolist() == THREE and result["ok"].all()
    assert result["already_in_package"].tolist() == [False, False, True]
    assert set(THREE) <= package_ids(client, "release-2024.07")
    text = output_text(panel.output)
    assert (
        "2 element(s) added" in text and "Already in the package (highlighted): 'dwh-0005'" in text
    )
    html = displayed(panel.output)[-1].get("text/html", "")
    css = html.split("</style>")[0]  # the Styler paints cells by id: only the third row
    assert "#fff3cd" in css and "_row2_col0" in css and "_row0_" not in css and "_row1_" not in css
    assert panel.count.value == "12 element(s) in it"


def test_add_button_adds_to_the_other_package(client):
    panel = PackagePanel(client, "DWH")
    panel.package.value = "hotfix-2024.07.1"
    assert panel.count.value == "0 element(s) in it"
    panel.picker.select(THREE)
    panel.button.click()
    result = panel.wait(30)
    assert result is not None and result["ok"].all()
    assert package_ids(client, "hotfix-2024.07.1") == set(THREE)
    assert not panel.button.disabled


def test_a_package_closed_in_between_is_an_error_in_words(client, emu):
    panel = PackagePanel(client, "DWH")
    panel.picker.select(THREE)
    emu.close_package("DWH", "release-2024.07")
    panel.button.click()
    assert panel.wait(30) is None
    assert isinstance(panel.last_error, PackageClosedError)
    message = stderr_text(panel.output)
    assert "'release-2024.07'" in message and "What to do: Refresh" in message
    assert "Traceback" not in message
    assert panel.package.options == ("hotfix-2024.07.1",)  # refreshed: the closed one left


def test_package_panel_refuses_an_empty_selection(client):
    panel = PackagePanel(client, "DWH")
    assert panel.button.disabled
    with pytest.raises(InvalidArgumentError, match="no elements are selected"):
        panel.run()


def test_refresh_button_picks_up_a_package_closed_elsewhere(client, emu):
    panel = PackagePanel(client, "DWH")
    emu.close_package("DWH", "release-2024.07")
    panel.refresh_button.click()  # runs in the kernel's thread: it is quick
    assert panel.package.options == ("hotfix-2024.07.1",)
    assert panel.package.value == "hotfix-2024.07.1"


# -- DeployPanel --


def test_deploy_run_and_button_mark_elements_deployed(client):
    panel = DeployPanel(client, "DWH")
    assert panel.button.disabled
    panel.picker.select(["dwh-0005", "dwh-0010"])
    panel.deployment_id.value = "deploy-2024-07-15.1"
    assert not panel.button.disabled
    result = panel.run()
    assert result["ok"].all() and result["deployment_id"].unique().tolist() == [
        "deploy-2024-07-15.1"
    ]
    element = client.read_structure("dwh-0010")
    assert bool(element["deployed"]) and element["deployment_id"] == "deploy-2024-07-15.1"
    assert "2 of 2 element(s) deployed." in output_text(panel.output)
    panel.picker.select(["dwh-0015"])
    panel.button.click()
    assert panel.wait(30)["ok"].all()
    assert panel.progress.value == panel.progress.max == 1


def test_deploy_reports_a_failed_element_without_raising(client, emu):
    panel = DeployPanel(client, "DWH")
    panel.picker.select(["dwh-0005"])
    panel.deployment_id.value = "d-1"
    emu.inject_faults(error_rate=1.0, error_statuses=(500,), operations=["deployStructure"])
    result = panel.run()
    assert result["ok"].tolist() == [False]
    assert "Failed (highlighted, see 'error'): 'dwh-0005'" in stderr_text(panel.output)


def test_confirm_an_uploaded_deployment_info_file(client, emu):
    info = emu.make_deployment_info(["dwh-0020", "dwh-0025"], deployment_id="dep-9")
    panel = DeployPanel(client, "DWH")
    assert panel.confirm_button.disabled
    content = json.dumps(info).encode()
    panel.upload.value = ({"name": "deployment-info.json", "type": "application/json",
                           "size": len(content), "content": memoryview(content),
                           "last_modified": datetime.now(UTC)},)  # fmt: skip
    assert not panel.confirm_button.disabled
    panel.confirm_button.click()
    result = panel.wait(30)
    assert result["id"].tolist() == ["dwh-0020", "dwh-0025"] and result["ok"].all()
    assert client.read_structure("dwh-0025")["deployment_id"] == "dep-9"


def test_confirm_without_a_file_is_refused(client):
    panel = DeployPanel(client, "DWH")
    with pytest.raises(InvalidArgumentError, match="no deployment info file"):
        panel.confirm()


# -- WriteReview --


@pytest.fixture
def countries(client):
    return client.read_table("tbl-0109")


def test_review_shows_the_diff_and_writes_only_once_confirmed(client, countries, tmp_path):
    first = countries.index[0]
    countries.loc[first, "name"] = "Renamed"
    review = WriteReview(client, "tbl-0109", countries, backup_dir=tmp_path)
    assert review.kind == "table" and review.writable
    assert "1 cell(s) changed" in review.summary.value
    assert "Renamed" in json.dumps(review.diff_output.outputs)
    assert review.button.disabled  # not yet confirmed
    with pytest.raises(InvalidArgumentError, match="tick"):
        review.run()
    review.confirm.value = True
    assert not review.button.disabled
    review.button.click()
    result = review.wait(30)
    assert result.status == "written" and result.verified is True
    assert result.backup is not None and result.backup.is_relative_to(tmp_path)
    assert client.read_table("tbl-0109").loc[first, "name"] == "Renamed"
    assert f"verified=True; backup: {result.backup}" in output_text(review.output)
    assert f"client.restore({str(result.backup)!r})" in output_text(review.output)
    assert "client.pending_writes()" in output_text(review.output)


def test_review_names_an_unfinished_bulk_write_of_the_same_table(client, emu, tmp_path):
    long = client.read_tables(["tbl-0109", "tbl-0110"], progress=False)
    first = long["row"][(long["table_id"] == "tbl-0109").to_numpy()].iloc[0]
    long.loc[
        (long["table_id"] == "tbl-0109").to_numpy() & (long["row"] == first).to_numpy(), "name"
    ] = "Bulk"
    written = client.write_tables(long, backup_dir=tmp_path, progress=False)
    batch = written.attrs["batch"]
    # a crash after the plan, before any PUT: the journal holds its plan line only
    journal = written.attrs["journal"]
    with open(journal, "rb") as handle:
        plan = handle.readline()
    with open(journal, "wb") as handle:
        handle.write(plan)
    emu.reset()

    frame = client.read_table("tbl-0109")
    frame.loc[first, "name"] = "Single"
    review = WriteReview(client, "tbl-0109", frame, backup_dir=tmp_path)
    assert review.unfinished == [batch] and review.writable
    assert "Unfinished bulk write" in review.summary.value
    assert f"client.resume(&#x27;{batch}&#x27;)" in review.summary.value
    assert f"client.roll_back(&#x27;{batch}&#x27;)" in review.summary.value

    other = client.read_table("tbl-0111")
    elsewhere = WriteReview(client, "tbl-0111", other, backup_dir=tmp_path)
    assert elsewhere.unfinished == [] and "Unfinished" not in elsewhere.summary.value


def test_review_of_an_incomplete_payload_shows_the_report_and_cannot_write(client, emu, countries):
    broken = countries.drop(columns=[countries.columns[0]])
    review = WriteReview(client, "tbl-0109", broken)
    assert review.dry_run is None and review.refusal is not None
    assert "the check found errors" in review.summary.value
    assert displayed(review.report_output)  # the report is shown
    review.confirm.value = True
    assert review.button.disabled
    puts = emu.counters().get("putTable", 0)
    with pytest.raises(InvalidArgumentError, match="refused"):
        review.run()
    assert emu.counters().get("putTable", 0) == puts


def test_review_of_no_change_cannot_write(client, countries):
    review = WriteReview(client, "tbl-0109", countries)
    assert not review.writable and "no change" in review.summary.value
    review.confirm.value = True
    assert review.button.disabled


def test_review_notices_a_concurrent_change(client, emu, countries):
    countries.loc[countries.index[0], "name"] = "Mine"
    emu.touch_table("tbl-0109")
    review = WriteReview(client, "tbl-0109", countries)
    assert review.refusal is not None and "refused" in review.summary.value
    assert "What to do: Someone changed it" in stderr_text(review.report_output)


def test_review_of_a_mapping_and_of_an_unknown_kind(client):
    mapping_id = client.read_tree("DWH").dropna(subset=["mapping_id"])["mapping_id"].iloc[0]
    frame = client.read_mapping(mapping_id)
    assert WriteReview(client, mapping_id, frame).kind == "mapping"
    with pytest.raises(InvalidArgumentError, match="kind='table' or kind='mapping'"):
        WriteReview(client, "tbl-0109", pd.DataFrame({"a": [1]}))


# -- secrets --


def test_no_panel_state_or_output_holds_the_secret(client, emu, countries, tmp_path):
    secret = emu.client_secret
    assert len(secret) >= 16
    packages = PackagePanel(client, "DWH")
    packages.picker.select(THREE)
    packages.run()
    deploy = DeployPanel(client, "DWH")
    deploy.picker.select(THREE)
    deploy.deployment_id.value = "d"
    deploy.run()
    emu.close_package("DWH", "release-2024.07")
    with pytest.raises(PackageClosedError):
        packages.run()
    countries.loc[countries.index[0], "name"] = "X"
    review = WriteReview(client, "tbl-0109", countries, backup_dir=tmp_path)
    for panel in (packages, deploy, review, client.export_panel("DWH", dest=tmp_path)):
        shown = everything_shown(panel)
        assert secret not in shown
        assert "client_secret" not in shown.lower().replace(" ", "")
