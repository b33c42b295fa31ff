"""package-add and confirm-deployed: an unknown id is a failed row, the others go through.

The service takes both calls all or none (one unknown id: 404, nothing done); the
library finds the unknown ids and sends the rest, as deploy_many reports each id.
"""

from __future__ import annotations


def _open_package(client):
    return next(p for p in client.api.list_deployment_packages("DWH") if p["status"] == "OPEN")


def test_an_unknown_id_fails_its_row_and_the_others_are_added(client):
    package = _open_package(client)["name"]
    result = client.add_to_package("DWH", package, ["dwh-0010", "no-such-element", "dwh-0011"])
    assert result["id"].tolist() == ["dwh-0010", "no-such-element", "dwh-0011"]
    assert result["ok"].tolist() == [True, False, True]
    assert result["error"].iloc[1] == "not an element of system 'DWH'"
    assert result["error"].isna().tolist() == [True, False, True]
    after = next(p for p in client.api.list_deployment_packages("DWH") if p["name"] == package)
    assert {"dwh-0010", "dwh-0011"} <= set(after["structureIds"])
    assert "no-such-element" not in after["structureIds"]


def test_only_unknown_ids_add_nothing_and_fail_every_row(client, emu):
    package = _open_package(client)["name"]
    before = emu.counters().get("addToDeploymentPackage", 0)
    result = client.add_to_package("DWH", package, ["nope-1", "nope-2"])
    assert not result["ok"].any()
    assert emu.counters().get("addToDeploymentPackage", 0) == before + 1  # no second call


def test_a_deployment_file_with_an_unknown_element_confirms_the_rest(client, emu):
    info = emu.make_deployment_info(["dwh-0010", "dwh-0011"], deployment_id="d-1")
    info["structures"].insert(1, {"id": "no-such-element", "version": 1})
    result = client.confirm_deployed(info)
    assert result["id"].tolist() == ["dwh-0010", "no-such-element", "dwh-0011"]
    assert result["ok"].tolist() == [True, False, True]
    assert "not found on the service" in result["error"].iloc[1]
    assert client.api.get_structure("dwh-0011")["deploymentId"] == "d-1"
