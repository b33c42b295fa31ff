"""The assumptions of docs/wire-format.md, one row each, as the page's table shows them.

Each row says what the service description shows, what mddframes assumes (and the
emulator serves) and how the client tolerates a difference; the last column names the
dialects (:mod:`mddframes.wire.dialects`) that serve the alternative. The values the
rows name are :mod:`mddframes.wire.profile`'s; :mod:`mddframes.wire.page` makes the
page's table from :data:`ROWS` (a test fails when they disagree).
"""

from __future__ import annotations

from typing import NamedTuple


class Row(NamedTuple):
    """One assumption (one row of the page's table)."""

    number: int
    operation: str
    shows: str
    assumed: str
    tolerated: str
    dialects: str


ROWS: tuple[Row, ...] = (
    Row(
        1,
        "all",
        "`{base_url}` with `{tenant}` in the host",
        (
            "base URL template `https://{tenant}.example.com`; the emulator has one tenant "
            "(`acme`) at `http://127.0.0.1:<port>`"
        ),
        "base URL configurable; `{tenant}` substituted only when present",
        "—",
    ),
    Row(
        2,
        "all",
        'async paths carry `/api/mdd-backend`; sync paths "not shown"',
        "every operation under `/api/mdd-backend`",
        "`api_prefix` setting; the empty string is allowed",
        "`unprefixed`",
    ),
    Row(
        3,
        "docs",
        "Swagger UI at `<prefix>/swagger-ui/index.html`",
        (
            "OpenAPI 3.1 JSON at `<prefix>/v3/api-docs`, built from the pydantic models the "
            "routes check bodies with (`emulator/schemas.py`, `emulator/openapi.py`): paths "
            "relative to `servers` = the prefix (the token path has its own `servers` `/`), every"
            " status each route sends (errors with the Spring body of row 10), the bearer scheme,"
            " one example per operation with ids of the sample data; the real Swagger UI 5, "
            "served offline by the emulator from the `fastapi-offline` package's assets, "
            "deep-linking each operation as `#/<tag>/<operationId>`"
        ),
        "docs are never needed at run time",
        "— (doctor reads it in every dialect; `unprefixed` keeps it under the prefix)",
    ),
    Row(
        4,
        "getToken",
        (
            "`POST /auth/realms/tenat/protocol/openid-connect/token`, form body, "
            "`client_credentials`"
        ),
        "realm configurable, default the tenant name; Keycloak 20+ behaviour (rows 5-8)",
        "`realm` setting; error fields read when present",
        "`literal-realm`",
    ),
    Row(
        5,
        "getToken",
        "the six answer fields, `expires_in` 300",
        "exactly those six, `Cache-Control: no-store`; TTL configurable",
        "only `access_token` is required; missing `expires_in` means 300",
        "—",
    ),
    Row(
        6,
        "getToken",
        "nothing on errors",
        (
            "checked in order: content type (415, not form-encoded), `grant_type` (missing: 400 "
            '`invalid_request` "Missing form parameter: grant_type"; other: 400 '
            "`unsupported_grant_type`), client (unknown or missing id: 401 `invalid_client`; "
            'wrong or missing secret: 401 `unauthorized_client` "Invalid client secret"; secrets '
            "are compared as UTF-8 bytes, so non-ASCII secrets work); unknown realm, or a realm "
            'segment that is not percent-encoded UTF-8 (`%FF`), 404 `{"error":"Realm does not '
            'exist"}`; a body over 256 MiB 413 (Spring body)'
        ),
        ("any 4xx from the token endpoint is an `AuthError` carrying `error`/`error_description`"),
        "—",
    ),
    Row(
        7,
        "getToken",
        "credentials as form fields",
        (
            "form fields (client_secret_post) or HTTP Basic (client_secret_basic, both parts "
            "form-url-encoded); Basic wins when both are sent; empty form fields are ignored"
        ),
        "the client sends form fields",
        "—",
    ),
    Row(
        8,
        "getToken",
        "`refresh_expires_in` 0, no refresh call",
        (
            "no refresh token; tokens are opaque random strings (not JWTs), bound to the realm, "
            "rejected after expiry or after an admin revoke"
        ),
        "renew shortly before expiry and on a 401 (see row 9)",
        "—",
    ),
    Row(
        9,
        "all API calls",
        "`Authorization: Bearer <token>`",
        (
            "no/non-Bearer header: 401, `WWW-Authenticate: Bearer`, empty body; unknown, expired "
            'or revoked token: 401, `WWW-Authenticate: Bearer error="invalid_token", '
            'error_description="Token is expired"` (or "Token is not active"), empty body'
        ),
        (
            "on a 401 a renewed token and the call again, while the token keeps changing within "
            "the call's deadline; a just-fetched token refused twice in a row (for 10 s, pausing "
            "between renewals, when the API accepted the client's tokens in the last minute): "
            "`AuthError`"
        ),
        "—",
    ),
    Row(
        10,
        "all API calls",
        'status codes and error bodies "not shown"',
        (
            'Spring Boot body `{"timestamp","status","error","message","path"}` for '
            "400/404/409/412 (dialect `etag`)/413/415/429/5xx; `message` names what is wrong and "
            'where; a body breaking a limit (section "Limits") 400, a body over 256 MiB 413; a '
            "path with a trailing slash 404 (no redirect), as Spring Boot 3"
        ),
        "body read tolerantly (`message` shown when present; non-JSON bodies shown as text)",
        "—",
    ),
    Row(
        11,
        "getTree",
        '"the list of all elements"; each entry carries the id',
        (
            'flat JSON list, parents before children, entry `{"id","name","type","parentId"(null '
            'at roots),"systemName","version","deployed"}` plus `tableId`/`mappingId` when the '
            "element owns one; unknown system 404"
        ),
        (
            "bare list or enveloped list; flat with parent ids or nested `children`; camelCase or"
            " snake_case"
        ),
        "`spring-page` (pages), `nested-tree` (children), `snake-case`",
    ),
    Row(
        12,
        "getStructure",
        '"latest version of the data"',
        (
            '`{"id","name","type","parentId","systemName","version","modifiedAt","deployed","deploymentId","attributes":{...}}`'
            " plus `tableId`/`mappingId`"
        ),
        "unknown fields kept as columns",
        "`snake-case`",
    ),
    Row(
        13,
        "getRawData",
        '"the data that is sent to the template"',
        (
            '`{"element","schema","path"(names '
            'root..element),"children":[{"id","name","type"}],"table":{"id","name","metadata"(without'
            ' columns),"columns"} or null,"mappings":[the mappings targeting the element, with '
            '"sourceName","sourceType","sourceSchema"]}` (see `emulator/rawdata.py`)'
        ),
        "any JSON: flattened to a leaf frame",
        "`snake-case`",
    ),
    Row(
        14,
        "getObjectTypes",
        '"all object types"',
        (
            'list of `{"id","name","description","fileExtension","elementTypes":[...]}`; '
            "templates never served"
        ),
        "bare or enveloped list",
        "`spring-page`, `snake-case`",
    ),
    Row(
        15,
        "getTable",
        '"full data of a table as JSON"',
        (
            '`{"id","name","structureId","metadata":{"description",...,"columns":[{"name","dataType","nullable","primaryKey","description"}]},"data":[{...}]}`;'
            " rows may omit keys, hold nulls, nested values, big integers, decimals as strings"
        ),
        "unknown envelope keys are kept and written back unchanged",
        "`snake-case` (document kept as served; `data_type`/`primary_key` read)",
    ),
    Row(
        16,
        "tableUpdate",
        '"replaces the whole content"; body "JSON content"',
        (
            "body `application/json` (else 415); must be an object with `metadata` (an object; "
            "`columns`, when present, a list of objects) and `data` (a list of objects), else 400"
            " naming the part; the known keys are typed when present (`id`, `name`, "
            "`structureId`, `metadata.description`, a column's `name`/`dataType`/`description`: "
            "string or null; `nullable`/`primaryKey`: boolean or null); within the limits of "
            'section "Limits"; NaN/Infinity are invalid JSON (400); stored as sent (key order, '
            'integers of any size; other numbers as doubles, section "Numbers"); answers 200 with'
            " the stored document; the owning element's `version` rises by 1 and `modifiedAt` is "
            "set"
        ),
        ("the writer sends the full payload rebuilt from the last read; it reads back to verify"),
        "`snake-case` (written back in its own spelling)",
    ),
    Row(
        17,
        "getMapping / mappingUpdate",
        '"full data" / "replaces the mapping data"',
        (
            '`{"id","name","sourceId","targetId","description","columnMappings":[{"source","target","transformation",...}]}`;'
            " PUT needs an object with `columnMappings` (a list of objects; "
            "`source`/`target`/`transformation` string or null when present), same rules as row "
            "16"
        ),
        "as rows 15-16",
        "`snake-case`",
    ),
    Row(
        18,
        "listDeploymentPackages",
        '"lists open packages"',
        (
            "list of "
            '`{"systemName","name","description","status":"OPEN","createdAt","structureIds":[...]}`;'
            " closed packages never listed; unknown system 404"
        ),
        "bare or enveloped list; `status` optional",
        "`spring-page`, `snake-case`",
    ),
    Row(
        19,
        "addToDeploymentPackage",
        'body "not shown"',
        (
            "body a non-empty JSON list of element ids (else 400); unknown package or system 404;"
            " an element not in that system 404; closed package 409; duplicates ignored; answers "
            "200 with the package; all-or-nothing"
        ),
        "409 becomes `PackageClosedError`",
        "—",
    ),
    Row(
        20,
        "createChildStructure",
        'body "not shown"',
        (
            'body `{"name", ...}`: every key but `name` becomes an attribute (a key `attributes` '
            "holding an object is merged in, not nested); answers 201 with the new element "
            "(`version` 1, not deployed); generated id `<system>-new-<type>-<nnnnn>`; unknown "
            "parent 404; no/empty name 400"
        ),
        "the answer is read as an element; any 2xx accepted",
        "—",
    ),
    Row(
        21,
        "externalExportStructure",
        '"generates the output script"',
        (
            "answers `text/plain; charset=utf-8` with `Content-Disposition: attachment; "
            "filename=\"<ascii>\"; filename*=UTF-8''<utf-8>`; file name `<element "
            "name>.<fileExtension>` made safe (`emulator/rendering.py`); unknown element or "
            "object type 404; object type not applying to the element's type 400"
        ),
        "file name from `filename*`, then `filename`, then `<id>.txt`",
        "—",
    ),
    Row(
        22,
        "structureMassExportAsync",
        'answer carries `taskId`; body "not shown"',
        (
            'body `{"structureIds":[...],"objectTypeId":"..."}`; answers 202 `{"taskId"}`; '
            "validated before a task exists: bad body 400, unknown object type or element 404, "
            "object type not applying 400; an id listed twice is exported once (as row 19 ignores"
            " duplicates; a second entry of the same name in the archive would be a conflict the "
            "client cannot resolve)"
        ),
        "any 2xx with a `taskId` accepted",
        "`snake-case` (body `structure_ids`/`object_type_id`, answer `task_id`)",
    ),
    Row(
        23,
        "structureMassExportAsyncStatus",
        '"status of the task"',
        (
            '`{"taskId","status":"RUNNING"|"FINISHED"|"FAILED","total","done","message"}`; '
            "unknown task 404"
        ),
        "unknown statuses treated as running until the poll time-out",
        "`snake-case` (`task_id`)",
    ),
    Row(
        24,
        "structureMassExportAsyncResult",
        '"result file once finished"',
        (
            "`application/zip`, one file per element named `<safe id>__<file name>` (rule in "
            "`emulator/tasks.py`: ASCII letters, digits, `.-_` kept, other characters and leading"
            " dots become `_`, a SHA-1 prefix appended when the id changed); 409 while running or"
            " when the task failed; unknown task 404"
        ),
        "archive entries checked for escapes and size before extraction",
        "—",
    ),
    Row(
        25,
        "batch export (all three)",
        '"available only with a newer version"',
        "`--legacy`: start (and status/result) answer 404",
        "on 404 at start, fall back to single exports and build the same zip",
        "— (`serve(legacy=True)`, not a dialect)",
    ),
    Row(
        26,
        "deployStructure",
        '"marks an element as deployed"',
        (
            "answers 200 with the element (`deployed` true, `deploymentId` set; `version` "
            "unchanged); unknown element 404"
        ),
        "any 2xx accepted",
        "—",
    ),
    Row(
        27,
        "confirmStructureDeployment",
        '"deployment info file generated by push to git"',
        (
            "`multipart/form-data`, field `file`, a JSON document "
            '`{"deploymentId","systemName","commit","structures":[{"id","version"}]}`; not '
            "multipart 415; missing field, bad JSON or bad document 400; unknown element 404 "
            "(nothing marked); answers 200 with the list of updated elements"
        ),
        "the info may be given as a path, bytes, text or dict",
        "—",
    ),
    Row(
        28,
        "all path parameters",
        '"single path segments"',
        (
            "each parameter percent-encoded as one segment; the emulator routes on the raw path, "
            "so `%2F` stays inside the segment; a segment whose escapes are not UTF-8 (`%FF`, "
            "`%C3%28`, an encoded surrogate) is 400 naming it, as a servlet container refuses a "
            "URI it cannot decode"
        ),
        (
            '`quote(value, safe="")`; `.` and `..` must be sent as `%2E`/`%2E%2E` because HTTP '
            "libraries (urllib3) collapse dot segments"
        ),
        "—",
    ),
    Row(
        29,
        (
            "getTable, getMapping / tableUpdate, mappingUpdate (ETag / If-Match on tables and "
            "mappings)"
        ),
        "nothing (no `ETag`, no `If-Match`)",
        (
            "no `ETag`; an `If-Match` is ignored. Across machines a write is then protected only "
            "by the lock window: mddframes' lock keeps writers on one machine "
            "apart, and each write compares what the service holds with what was read just before"
            " its PUT; a write from another machine between that check and the PUT can be "
            "overwritten"
        ),
        (
            "reads expose the answer's strong `ETag` (`api.get_table_with_etag`, "
            "`api.get_mapping_with_etag` -> `Tagged(document, etag)`; "
            "`api.get_table_stream(...).etag`); `put_table`/`put_mapping(..., if_match=etag)` "
            "send `If-Match`; a 412 is a `ConcurrentModificationError` naming the object, nothing"
            " written (after a repeated PUT the message says an earlier attempt may have written "
            'it); a weak (`W/"..."`) or malformed tag is never sent (If-Match compares strongly, '
            "RFC 9110); doctor reads each kind twice and reports whether the tenant sends a "
            "strong ETag that holds between reads (a tag changing on every read `breaks`: every "
            "If-Match would fail); whether the updates honour `If-Match` needs a write, which "
            "doctor never sends"
        ),
        (
            "`etag` (the quoted SHA-256 of the stored document, on the reads and the updates' "
            "answers; a stale tag 412 with the Spring body and nothing written, `*` any existing "
            "object, no header as today)"
        ),
    ),
)
"""Every assumption, in the order of the page."""
