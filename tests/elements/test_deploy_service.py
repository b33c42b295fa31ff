"""Deployment packages and deployment against the emulator."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from mddframes import Client
from mddframes.api import Api
from mddframes.emulator.state import sample_dataset
from mddframes.errors import DataShapeError, PackageClosedError


@pytest.fixture(scope="module")
def setting():
    """An open package, its system and a few elements of that system (from the sample)."""
    data = sample_dataset()
    package = next(p for p in data.packages if p["status"] == "OPEN")
    system = package["systemName"]
    ids = [e["id"] for e in data.elements if e["systemName"] == system][:4]
    return system, package["name"], ids, list(package["structureIds"])


def package_ids(client, system, name):
    return next(p for p in client.api.list_deployment_packages(system) if p["name"] == name)[
        "structureIds"
    ]


def test_add_to_package_dedupes_and_reports_each_id(client, emu, setting):
    system, package, ids, already = setting
    emu.reset_counters()
    result = client.add_to_package(system, package, pd.Series([ids[0], ids[1], ids[0]]))
    assert result["id"].tolist() == [ids[0], ids[1]]
    assert result["ok"].all() and result["error"].isna().all()
    assert result["already_in_package"].tolist() == [i in already for i in ids[:2]]
    assert set(ids[:2]) <= set(package_ids(client, system, package))
    assert emu.counters()["addToDeploymentPackage"] == 1
    again = client.add_to_package(system, package, pd.DataFrame({"id": ids[:3]}))
    assert again["already_in_package"].tolist() == [True, True, ids[2] in already]


def test_a_closed_package_is_refused_before_the_post(client, emu, setting):
    system, package, ids, _ = setting
    emu.close_package(system, package)
    emu.reset_counters()
    with pytest.raises(PackageClosedError, match="closed or does not exist") as info:
        client.add_to_package(system, package, ids[:1])
    assert repr(package) in str(info.value) and repr(system) in str(info.value)
    assert emu.counters().get("addToDeploymentPackage", 0) == 0
    with pytest.raises(PackageClosedError, match="'no-such-package'"):
        client.add_to_package(system, "no-such-package", ids[:1])


def test_a_package_closed_after_the_check_is_translated(emu, setting):
    """Somebody closes the package between the check and the POST: the 409 is named."""
    system, package, ids, _ = setting

    class ClosedMeanwhile(Api):
        def list_deployment_packages(self, system_name):
            listed = super().list_deployment_packages(system_name)
            emu.close_package(system, package)
            return listed

    with Client.from_emulator(emu) as racing:
        racing.api.close()
        racing.api = ClosedMeanwhile(racing.settings)
        with pytest.raises(PackageClosedError, match=repr(package)) as info:
            racing.add_to_package(system, package, ids[:1])
    assert info.value.status == 409


def test_deploy_marks_the_element(client, setting):
    _, _, ids, _ = setting
    element = client.deploy(ids[0], "deploy-77")
    assert element["deployed"] is True or element["deployed"] == True  # noqa: E712
    assert element["deploymentId"] == "deploy-77"
    assert client.api.get_structure(ids[0])["deploymentId"] == "deploy-77"


def test_deploy_many_reports_the_bad_id_and_deploys_the_rest(client, setting):
    _, _, ids, _ = setting
    frame = pd.DataFrame({"id": [ids[0], "no-such-element", ids[1]], "deployment_id": "d-1"})
    with pytest.warns(UserWarning, match="no-such-element"):
        result = client.deploy_many(frame, progress=False)
    assert result["ok"].tolist() == [True, False, True]
    assert "404" in result.loc[1, "error"]
    assert result["deployment_id"].tolist() == ["d-1"] * 3
    for sid in (ids[0], ids[1]):
        assert client.api.get_structure(sid)["deployed"] is True
    listed = client.deploy_many(ids[2:4], "d-2", progress=False)
    assert listed["ok"].all() and listed["id"].tolist() == ids[2:4]


def test_confirm_deployed_from_a_dict_and_from_a_file(client, emu, setting, tmp_path):
    _, _, ids, _ = setting
    info = emu.make_deployment_info(ids[:2])
    result = client.confirm_deployed(info)
    assert result["id"].tolist() == ids[:2] and result["ok"].all()
    assert (result["deployment_id"] == info["deploymentId"]).all()
    assert client.api.get_structure(ids[0])["deploymentId"] == info["deploymentId"]

    other = emu.make_deployment_info(ids[2:4], deployment_id="from-file")
    path = tmp_path / "deployment-info.json"
    path.write_text(json.dumps(other), encoding="utf-8")
    from_file = client.confirm_deployed(path)
    assert from_file["ok"].all() and from_file["version"].notna().all()
    assert client.api.get_structure(ids[3])["deploymentId"] == "from-file"


def test_confirm_deployed_refuses_a_file_that_is_not_deployment_info(client, emu, tmp_path):
    path = tmp_path / "wrong.json"
    path.write_text(json.dumps({"deploymentId": "x"}), encoding="utf-8")
    emu.reset_counters()
    with pytest.raises(DataShapeError, match="wrong.json.*'structures'"):
        client.confirm_deployed(path)
    path.write_text("not json", encoding="utf-8")
    with pytest.raises(DataShapeError, match="is not JSON"):
        client.confirm_deployed(str(path))
    assert emu.counters().get("confirmStructureDeployment", 0) == 0
