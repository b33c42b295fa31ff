"""The emulator's published contract (issue 13): the OpenAPI document as served, checked by
openapi-spec-validator and by schemathesis against the running emulator; its examples
work; the Swagger UI page loads all its assets from the emulator itself.

Schemathesis runs every operation with a fixed seed (hypothesis ``derandomize``) and a
bounded number of cases, three ways: ids generated from the schema, the sample's real
ids with generated bodies, and negative data (bodies and parameters that break the
schema). It runs against an emulator of its own, so its writes touch no other test.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from html.parser import HTMLParser
from urllib.parse import quote, urljoin

import hypothesis
import pytest
import requests
import schemathesis
from hypothesis import HealthCheck, Phase, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator
from openapi_spec_validator import validate
from schemathesis import GenerationMode
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from mddframes.emulator import serve
from mddframes.http.endpoints import ENDPOINTS

# runs once, on the newest pandas: checks the service's wire, not pandas (tests/pandas_ends.py)
pytestmark = pytest.mark.pandas_free

CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_schema_conformance,
]
#: Cases per operation: enough to reach every status of each route, few enough that the
#: 18 operations take well under a minute on a loaded 2-core machine.
MAX_EXAMPLES = 40
CASES: Counter[str] = Counter()
STATUSES: dict[str, Counter[int]] = {}


@pytest.fixture(scope="module")
def served():
    with serve(export_seconds_per_element=0) as emu:
        yield emu


@pytest.fixture(scope="module")
def document(served) -> dict:
    response = requests.get(served.api_url + "/v3/api-docs", timeout=30)
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("application/json")
    return response.json()


@pytest.fixture(scope="module")
def schema(served, document):
    return schemathesis.openapi.from_url(served.api_url + "/v3/api-docs")


@pytest.fixture(scope="module")
def session(served):
    with requests.Session() as s:
        yield s


def operations(document: dict) -> dict[str, tuple[str, str, dict]]:
    return {
        op["operationId"]: (method.upper(), path, op)
        for path, item in document["paths"].items()
        for method, op in item.items()
    }


# ---------------------------------------------------------------------- the document


def test_the_document_is_valid_openapi_31(document):
    assert document["openapi"].startswith("3.1")
    validate(document)  # raises with the first problem


def test_operation_ids_methods_and_paths_are_the_clients(document, served):
    """Paths are relative to ``servers`` (the API prefix), as the client's table has them."""
    assert document["servers"][0]["url"] == served.api_prefix
    found = {op_id: (m, p) for op_id, (m, p, _) in operations(document).items()}
    assert found == {e.operation: (e.method, e.path) for e in ENDPOINTS.values()}
    token = operations(document)["getToken"][2]
    assert token["servers"] == [{"url": "/", "description": "the identity provider"}]


def test_every_operation_declares_schemas_statuses_security_and_an_example(document):
    components = document["components"]
    assert components["securitySchemes"]["bearerAuth"] == {
        **components["securitySchemes"]["bearerAuth"],
        "type": "http",
        "scheme": "bearer",
    }
    spring = {"$ref": "#/components/schemas/SpringError"}
    for op_id, (_method, _path, op) in operations(document).items():
        responses = op["responses"]
        ok = next(s for s in responses if s.startswith("2"))
        (media, content), *_ = responses[ok]["content"].items()
        assert content["schema"], op_id
        assert "examples" in content or media == "application/zip", op_id
        assert {"429", "5XX"} <= set(responses), op_id
        for param in op["parameters"]:
            assert "example" in param, (op_id, param["name"])
        if "requestBody" in op:
            (body,) = op["requestBody"]["content"].values()
            assert body["schema"] and "examples" in body, op_id
        if op_id == "getToken":
            assert op["security"] == []
            assert "application/x-www-form-urlencoded" in op["requestBody"]["content"]
            for status in ("400", "401", "415"):
                schema = responses[status]["content"]["application/json"]["schema"]
                assert schema == {"$ref": "#/components/schemas/OAuthError"}
            continue
        assert op["security"] == [{"bearerAuth": []}], op_id
        assert "content" not in responses["401"], op_id  # 401 has an empty body
        errors = [s for s in responses if s[0] in "45" and s != "401"]
        for status in errors:
            assert responses[status]["content"]["application/json"]["schema"] == spring
    assert set(components["schemas"]["SpringError"]["required"]) == {
        "timestamp", "status", "error", "message", "path"
    }  # fmt: skip


def test_statuses_declared_per_operation_match_what_the_routes_send(document):
    declared = {
        op_id: sorted(op["responses"]) for op_id, (_, _, op) in operations(document).items()
    }
    common = ["401", "429", "5XX"]
    path = ["400", "404"]
    body = ["400", "413", "415"]
    expected = {
        "getToken": ["200", "400", "401", "404", "413", "415", "429", "5XX"],
        "getObjectTypes": ["200", *common],
        "getTree": ["200", *path, *common],
        "getStructure": ["200", *path, *common],
        "getRawData": ["200", *path, *common],
        "getTable": ["200", *path, *common],
        "getMapping": ["200", *path, *common],
        "listDeploymentPackages": ["200", *path, *common],
        "structureMassExportAsyncStatus": ["200", *path, *common],
        "structureMassExportAsyncResult": ["200", *path, "409", *common],
        "externalExportStructure": ["200", *path, *common],
        "deployStructure": ["200", *path, *common],
        "tableUpdate": ["200", *path, *body, *common],
        "mappingUpdate": ["200", *path, *body, *common],
        "addToDeploymentPackage": ["200", *path, "409", *body, *common],
        "createChildStructure": ["201", *path, *body, *common],
        "structureMassExportAsync": ["202", "404", *body, *common],
        "confirmStructureDeployment": ["200", "404", *body, *common],
    }
    assert declared == {k: sorted(set(v)) for k, v in expected.items()}


# ---------------------------------------------------------------------- the examples


def test_every_example_works_against_a_fresh_sample_emulator(document):
    """Sent in an order where each example's ids exist (the batch export before its task)."""
    order = [
        "getToken", "getTree", "getStructure", "getRawData", "getObjectTypes",
        "externalExportStructure", "deployStructure", "confirmStructureDeployment",
        "getTable", "tableUpdate", "getMapping", "mappingUpdate", "listDeploymentPackages",
        "addToDeploymentPackage", "createChildStructure", "structureMassExportAsync",
        "structureMassExportAsyncStatus", "structureMassExportAsyncResult",
    ]  # fmt: skip
    found = operations(document)
    assert sorted(order) == sorted(found)
    with serve(export_seconds_per_element=0) as emu, requests.Session() as s:
        s.headers["Authorization"] = f"Bearer {emu.token()}"
        for op_id in order:
            method, path, op = found[op_id]
            base = emu.base_url + ("" if "servers" in op else emu.api_prefix)
            url = base + path.format(**{p["name"]: p["example"] for p in op["parameters"]})
            kwargs: dict = {}
            if "requestBody" in op:
                (media, body), *_ = op["requestBody"]["content"].items()
                value = body["examples"]["sample"]["value"]
                if media == "application/json":
                    kwargs["json"] = value
                elif media == "multipart/form-data":
                    kwargs["files"] = {"file": ("info.json", value["file"].encode())}
                else:
                    kwargs["data"] = {**value, "client_secret": emu.client_secret}
            if op_id == "structureMassExportAsyncStatus":
                for _ in range(200):  # the example shows the finished task
                    if s.get(url, timeout=10).json()["status"] != "RUNNING":
                        break
                    time.sleep(0.01)
            response = s.request(method, url, timeout=30, **kwargs)
            ok = next(code for code in op["responses"] if code.startswith("2"))
            assert response.status_code == int(ok), (op_id, response.text[:300])
            (media, content), *_ = op["responses"][ok]["content"].items()
            example = content.get("examples", {}).get("sample", {}).get("value")
            if op_id in ("getStructure", "getObjectTypes", "listDeploymentPackages",
                         "addToDeploymentPackage", "structureMassExportAsync",
                         "structureMassExportAsyncStatus", "deployStructure"):  # fmt: skip
                assert response.json() == example, op_id
            elif op_id == "externalExportStructure":
                assert response.text == example


# ---------------------------------------------------------------------- the data


def _validator(document: dict, op_id: str):
    """A JSON Schema validator of ``op_id``'s success answer, as the document declares it."""
    _, _, op = operations(document)[op_id]
    ok = next(code for code in op["responses"] if code.startswith("2"))
    schema = op["responses"][ok]["content"]["application/json"]["schema"]
    # "#/components/..." references resolve inside this root
    return Draft202012Validator({**schema, "components": document["components"]})


def segment(value: str) -> str:
    """One path segment; "." and ".." as %2E, since HTTP libraries collapse them."""
    return value.replace(".", "%2E") if value in (".", "..") else quote(value, safe="")


def test_every_record_of_the_sample_is_served_in_its_declared_shape(served, document, session):
    served.reset()
    headers = {"Authorization": f"Bearer {served.token()}"}
    api = served.api_url + "/api/"
    checked: Counter[str] = Counter()
    validators = {op_id: _validator(document, op_id) for op_id in operations(document)
                  if op_id.startswith("get") or op_id == "listDeploymentPackages"}  # fmt: skip

    def check(op_id: str, path: str) -> dict | list:
        response = session.get(api + path, headers=headers, timeout=30)
        assert response.status_code == 200, (path, response.text[:200])
        answer = response.json()
        errors = list(validators[op_id].iter_errors(answer))
        assert not errors, (path, [e.message[:200] for e in errors[:3]])
        checked[op_id] += 1
        return answer

    check("getObjectTypes", "object-type")
    for system in ("DWH", "LAB", "FLOW"):
        check("listDeploymentPackages", f"system/{system}/deployment-package")
        for entry in check("getTree", f"system/{system}/tree"):
            check("getStructure", f"structure/{segment(entry['id'])}")
            check("getRawData", f"structure/{segment(entry['id'])}/raw-data")
            if "tableId" in entry:
                check("getTable", f"table/{segment(entry['tableId'])}")
            if "mappingId" in entry:
                check("getMapping", f"mapping/{segment(entry['mappingId'])}")
    assert checked["getStructure"] == 185 and checked["getTable"] >= 100, checked


@pytest.mark.parametrize("dataset", ["scale", "tiny"])
def test_the_other_datasets_fit_the_models_the_document_is_built_from(dataset):
    from mddframes.emulator import schemas
    from mddframes.emulator._fallback import tiny_dataset
    from mddframes.emulator.state import scale_dataset

    data = scale_dataset(400) if dataset == "scale" else tiny_dataset()
    shapes = [
        (schemas.Element, data.elements),
        (schemas.TableDocument, data.tables),
        (schemas.MappingDocument, data.mappings),
        (
            schemas.ObjectType,
            [{k: v for k, v in o.items() if k != "template"} for o in data.object_types],
        ),
        (schemas.Package, data.packages),
    ]
    for model, records in shapes:
        assert records, model.__name__
        for record in records:
            assert schemas.validate_body(model, record, model.__name__) == []


# ---------------------------------------------------------------------- schemathesis


def _strategy(operation, op: dict):
    sample_ids = {p["name"]: p["example"] for p in op["parameters"]}
    ways = [
        operation.as_strategy(GenerationMode.POSITIVE),
        operation.as_strategy(GenerationMode.NEGATIVE),
    ]
    if sample_ids:
        ways.append(operation.as_strategy(GenerationMode.POSITIVE, path_parameters=sample_ids))
    return st.one_of(ways)


@pytest.mark.parametrize("operation_id", sorted(ENDPOINTS))
def test_schemathesis_finds_nothing(schema, document, served, session, operation_id):
    operation = schema.find_operation_by_id(operation_id)
    _, _, op = operations(document)[operation_id]
    headers = {"Authorization": f"Bearer {served.token()}"}
    statuses = STATUSES.setdefault(operation_id, Counter())

    @hypothesis.given(case=_strategy(operation, op))
    @settings(
        max_examples=MAX_EXAMPLES,
        derandomize=True,
        database=None,
        deadline=None,
        phases=[Phase.explicit, Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    def run(case) -> None:
        CASES[operation_id] += 1
        response = case.call_and_validate(
            session=session, headers=headers, checks=CHECKS, timeout=30
        )
        statuses[response.status_code] += 1

    run()
    assert CASES[operation_id] >= 10
    assert served.info()["counts"]["elements"] > 0  # still answering


def test_schemathesis_reached_success_and_error_answers_of_every_operation():
    """The cases were not all refused: each operation got a 2xx (getToken, whose generated
    credentials are never right, excepted) and an error other than 401. ``-s`` prints the
    figures."""
    if len(CASES) < len(ENDPOINTS):
        pytest.skip("runs after the schemathesis tests of every operation")
    lines = [
        f"{op}: {CASES[op]} cases, statuses {dict(sorted(STATUSES[op].items()))}"
        for op in sorted(CASES)
    ]
    print("\n" + "\n".join(lines) + f"\ntotal {sum(CASES.values())} cases")
    for op_id, seen in STATUSES.items():
        if op_id != "getToken":
            assert any(200 <= code < 300 for code in seen), (op_id, seen)
        assert (
            any(400 <= code < 500 and code != 401 for code in seen) or op_id == "getObjectTypes"
        ), (
            op_id,
            seen,
        )


# ---------------------------------------------------------------------- Swagger UI


class _Assets(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.urls: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        if tag == "script" and found.get("src"):
            self.urls.append(found["src"])
        if tag == "link" and found.get("href"):
            self.urls.append(found["href"])


def test_swagger_ui_loads_every_asset_from_the_emulator_itself(served, document):
    page_url = served.api_url + "/swagger-ui/index.html"
    page = requests.get(page_url, timeout=10)
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    parser = _Assets()
    parser.feed(page.text)
    assert len(parser.urls) >= 3  # script, stylesheet, icon
    for url in parser.urls:
        absolute = urljoin(page_url, url)
        assert absolute.startswith(served.base_url + "/"), url  # nothing from elsewhere
        asset = requests.get(absolute, timeout=10)
        assert asset.status_code == 200 and len(asset.content) > 0, url
    bundle = requests.get(urljoin(page_url, "swagger-ui-bundle.js"), timeout=10).text
    assert "SwaggerUIBundle" in bundle
    assert "isOAS31" in bundle  # Swagger UI 5: renders OpenAPI 3.1 (Swagger UI 4 cannot)
    # the page loads the document the emulator serves and deep-links every operation as
    # #/<tag>/<operationId>: each operation has exactly one tag for its anchor
    assert f"url: '{served.api_prefix}/v3/api-docs'" in page.text
    assert '"deepLinking": true' in page.text
    for op_id, (_, _, op) in operations(document).items():
        assert len(op["tags"]) == 1, op_id


def test_a_document_change_would_show_the_same_ids_in_the_page_anchors(document):
    anchors = sorted(
        f"#/{op['tags'][0]}/{op_id}" for op_id, (_, _, op) in operations(document).items()
    )
    assert len(anchors) == len(set(anchors)) == 18
    assert "#/structure/getStructure" in anchors and "#/token/getToken" in anchors


def test_the_document_is_built_once_and_served_as_json(served):
    first = requests.get(served.api_url + "/v3/api-docs", timeout=10)
    second = requests.get(served.api_url + "/v3/api-docs", timeout=10)
    assert first.content == second.content
    assert json.loads(first.content)["info"]["version"] == "emulator"
