"""The endpoints table: complete, and the only place a path is written."""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import unquote

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mddframes.errors import InvalidArgumentError
from mddframes.http.endpoints import ENDPOINTS, build_path, endpoint

# runs once, on the newest pandas: checks the service's wire, not pandas (tests/pandas_ends.py)
pytestmark = pytest.mark.pandas_free

# docs/internals.md, "Operation ids".
OPERATIONS = {
    "getToken": ("POST", "/auth/realms/{realm}/protocol/openid-connect/token"),
    "getTree": ("GET", "/api/system/{name}/tree"),
    "getStructure": ("GET", "/api/structure/{id}"),
    "getRawData": ("GET", "/api/structure/{structureId}/raw-data"),
    "getObjectTypes": ("GET", "/api/object-type"),
    "getTable": ("GET", "/api/table/{tableId}"),
    "tableUpdate": ("PUT", "/api/table/{tableId}"),
    "getMapping": ("GET", "/api/mapping/{mappingId}"),
    "mappingUpdate": ("PUT", "/api/mapping/{mappingId}"),
    "listDeploymentPackages": ("GET", "/api/system/{systemName}/deployment-package"),
    "addToDeploymentPackage": (
        "POST",
        "/api/system/{systemName}/deployment-package/{dpName}/structure",
    ),
    "createChildStructure": ("POST", "/api/structure/{parentId}/children/{type}"),
    "externalExportStructure": ("POST", "/api/structure/{id}/export/{objectTypeId}"),
    "structureMassExportAsync": ("POST", "/api/structure/export"),
    "structureMassExportAsyncStatus": ("GET", "/api/structure/export/{taskId}"),
    "structureMassExportAsyncResult": ("GET", "/api/structure/export/{taskId}/result"),
    "deployStructure": ("POST", "/api/structure/{id}/deploy/{deploymentId}"),
    "confirmStructureDeployment": ("POST", "/api/structure/deployed"),
}


def test_table_has_every_operation_of_the_service_and_no_other():
    assert set(ENDPOINTS) == set(OPERATIONS)
    for name, (method, path) in OPERATIONS.items():
        assert (ENDPOINTS[name].method, ENDPOINTS[name].path) == (method, path), name


def test_only_the_token_call_is_outside_the_api_prefix():
    outside = {name for name, entry in ENDPOINTS.items() if not entry.under_api_prefix}
    assert outside == {"getToken"}


def test_unknown_operation_lists_the_known_ones():
    with pytest.raises(KeyError, match="getTable"):
        endpoint("getTabel")


@pytest.mark.parametrize(
    ("value", "encoded"),
    [
        ("a/b", "a%2Fb"),
        ("..", ".."),
        ("../admin", "..%2Fadmin"),
        ("100%", "100%25"),
        ("with space", "with%20space"),
        ("Zürich", "Z%C3%BCrich"),
        ("q?x=1#f", "q%3Fx%3D1%23f"),
        (42, "42"),
    ],
)
def test_parameters_become_one_encoded_segment(value, encoded):
    assert build_path("getTable", tableId=value) == f"/api/table/{encoded}"


@given(st.text(min_size=1).filter(lambda s: s.strip()))
def test_any_id_stays_one_segment_and_round_trips(value):
    parts = build_path("getRawData", structureId=value).split("/")
    assert parts[:3] == ["", "api", "structure"] and parts[-1] == "raw-data"
    assert len(parts) == 5  # exactly one segment between the fixed parts
    assert re.fullmatch(r"[A-Za-z0-9_.~%-]+", parts[3])
    assert unquote(parts[3]) == value


@pytest.mark.parametrize("bad", [None, "", "   ", True])
def test_empty_or_missing_ids_are_refused_before_sending(bad):
    with pytest.raises(InvalidArgumentError, match="tableId"):
        build_path("getTable", tableId=bad)


def test_missing_and_unexpected_parameters_are_named():
    with pytest.raises(InvalidArgumentError, match=r"missing \['dpName'\]"):
        build_path("addToDeploymentPackage", systemName="DWH")
    with pytest.raises(InvalidArgumentError, match=r"unexpected \['tableid'\]"):
        build_path("getTable", tableId="t", tableid="t")


def test_invalid_argument_error_is_a_value_error_too():
    with pytest.raises(ValueError):
        build_path("getTable", tableId="")


def test_no_other_module_writes_an_api_path():
    """The wire profile is the only place a path is written (the emulator's routes too)."""
    package = Path(__file__).resolve().parents[2] / "mddframes"
    pattern = re.compile(
        r"""["'](/api/(system|structure|table|mapping|object-type)|/auth/realms)"""
    )
    offenders = []
    for path in package.rglob("*.py"):
        relative = path.relative_to(package).as_posix()
        if relative == "wire/profile.py":
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if pattern.search(line):
                offenders.append(f"{relative}:{number}: {line.strip()}")
    assert offenders == []
