"""The wire shapes of docs/wire-format.md as pydantic models: one source for two uses.

1. The routes validate every JSON request body with its model (:func:`validate_body`)
   and answer 400 naming the first problems and where they are.
2. :mod:`mddframes.emulator.openapi` turns the same models into the JSON Schemas of the
   OpenAPI document (request bodies and answers).

Bodies are parsed by ``json.loads`` (big integers, key order) and stored as parsed: a
model only *checks* a body, it never rebuilds it. Objects allow keys beyond the known
ones (``extra="allow"``) because the service keeps unknown fields. Table rows are
checked by a plain loop (a list of objects) rather than field by field, which keeps a
100,000-row write as fast as before (pydantic would rebuild every row).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError
from pydantic.functional_validators import PlainValidator
from pydantic.json_schema import WithJsonSchema
from pydantic_core import ErrorDetails, PydanticCustomError

from mddframes.emulator.documents import describe_kind

__all__ = [
    "Column",
    "ColumnMapping",
    "DeploymentInfo",
    "DeploymentUpload",
    "Element",
    "ExportRequest",
    "MappingDocument",
    "NewChild",
    "OAuthError",
    "ObjectType",
    "Package",
    "PackageAdd",
    "RawData",
    "RealmError",
    "SpringError",
    "TableDocument",
    "TaskStarted",
    "TaskStatus",
    "TokenResponse",
    "TreeEntry",
    "validate_body",
]

_OPEN = ConfigDict(extra="allow", strict=True)
_CLOSED = ConfigDict(extra="forbid", strict=True)


def _objects(value: Any) -> list[Any]:
    if not isinstance(value, list):
        raise PydanticCustomError(
            "objects", "must be a list of objects, got {got}", {"got": describe_kind(value)}
        )
    for index, item in enumerate(value):
        if not isinstance(item, dict):
            raise PydanticCustomError(
                "objects_item",
                "must be an object, got {got}",
                {"index": index, "got": describe_kind(item)},
            )
    return value


#: A list of JSON objects with any keys (table rows), checked by one plain loop.
ObjectList = Annotated[
    list[dict[str, Any]],
    PlainValidator(_objects),
    WithJsonSchema({"type": "array", "items": {"type": "object", "additionalProperties": True}}),
]


# ---------------------------------------------------------------------- errors


class SpringError(BaseModel):
    """Spring Boot's default error body (wire-format row 10)."""

    model_config = _CLOSED
    timestamp: str = Field(description="ISO-8601 instant of the error")
    status: int = Field(description="The HTTP status, repeated")
    error: str = Field(description="The status's reason phrase")
    message: str = Field(description="What is wrong and where")
    path: str = Field(description="The request path")


class OAuthError(BaseModel):
    """An OAuth 2 error of the token endpoint (Keycloak; wire-format row 6)."""

    model_config = _CLOSED
    error: str = Field(
        description="invalid_request, unsupported_grant_type, invalid_client or unauthorized_client"
    )
    error_description: str


class RealmError(BaseModel):
    """Keycloak's answer for a realm that does not exist."""

    model_config = _CLOSED
    error: Literal["Realm does not exist"]


# ---------------------------------------------------------------------- token


class TokenResponse(BaseModel):
    """The six fields of a token answer (wire-format row 5)."""

    model_config = _CLOSED
    access_token: str
    expires_in: int
    refresh_expires_in: int
    token_type: Literal["Bearer"]
    not_before_policy: int = Field(alias="not-before-policy")
    scope: str


class TokenForm(BaseModel):
    """The form body of a token request (client_secret_post)."""

    model_config = _OPEN
    grant_type: str = Field(description="client_credentials", examples=["client_credentials"])
    client_id: str | None = Field(None, description="The API user's id (or HTTP Basic)")
    client_secret: str | None = Field(None, description="The API user's secret (or HTTP Basic)")


# ---------------------------------------------------------------------- elements


class TreeEntry(BaseModel):
    """One entry of ``getTree`` (wire-format row 11)."""

    model_config = _OPEN
    id: str
    name: str
    type: str
    parentId: str | None
    systemName: str
    version: int
    deployed: bool
    tableId: str | None = None
    mappingId: str | None = None


class Element(BaseModel):
    """An element as ``getStructure`` serves it (wire-format row 12)."""

    model_config = _OPEN
    id: str
    name: str
    type: str
    parentId: str | None
    systemName: str
    version: int
    modifiedAt: str
    deployed: bool
    deploymentId: str | None
    tableId: str | None = None
    mappingId: str | None = None
    attributes: dict[str, Any]


class NewChild(BaseModel):
    """The body of ``createChildStructure``: a name, every other key an attribute."""

    model_config = _OPEN
    name: str = Field(pattern=r"\S", description="Not blank")
    attributes: dict[str, Any] | None = Field(
        None, description="Merged into the attributes (not nested)"
    )


# ---------------------------------------------------------------------- tables and mappings


class Column(BaseModel):
    """A column of a table's metadata; the known keys are typed when present."""

    model_config = _OPEN
    name: str | None = None
    dataType: str | None = None
    nullable: bool | None = None
    primaryKey: bool | None = None
    description: str | None = None


class TableMetadata(BaseModel):
    """A table's metadata: any keys, ``columns`` a list of column objects when present."""

    model_config = _OPEN
    description: str | None = None
    columns: list[Column] = Field(default_factory=list)


class TableDocument(BaseModel):
    """A whole table (``getTable`` answer and ``tableUpdate`` body; wire-format rows 15-16)."""

    model_config = _OPEN
    id: str | None = None
    name: str | None = None
    structureId: str | None = None
    metadata: TableMetadata
    data: ObjectList = Field(description="The rows: objects whose keys are column names")


class ColumnMapping(BaseModel):
    """One column mapping; the known keys are typed when present."""

    model_config = _OPEN
    source: str | None = None
    target: str | None = None
    transformation: str | None = None


class MappingDocument(BaseModel):
    """A whole mapping (``getMapping`` answer and ``mappingUpdate`` body; wire-format row 17)."""

    model_config = _OPEN
    id: str | None = None
    name: str | None = None
    sourceId: str | None = None
    targetId: str | None = None
    description: str | None = None
    columnMappings: list[ColumnMapping]


# ---------------------------------------------------------------------- object types, packages


class ObjectType(BaseModel):
    """An object type (wire-format row 14); its template is never served."""

    model_config = _OPEN
    id: str
    name: str
    description: str | None = None
    fileExtension: str
    elementTypes: list[str]


class Package(BaseModel):
    """A deployment package (wire-format row 18)."""

    model_config = _OPEN
    systemName: str
    name: str
    description: str | None = None
    status: Literal["OPEN", "CLOSED"]
    createdAt: str
    structureIds: list[str]


PackageAdd = Annotated[
    list[str], Field(min_length=1, description="Element ids of the package's system")
]


# ---------------------------------------------------------------------- export tasks


class ExportRequest(BaseModel):
    """The body of ``structureMassExportAsync`` (wire-format row 22)."""

    model_config = _OPEN
    structureIds: list[str] = Field(min_length=1, description="Duplicates are ignored")
    objectTypeId: str = Field(min_length=1)


class TaskStarted(BaseModel):
    """The answer of ``structureMassExportAsync``."""

    model_config = _CLOSED
    taskId: str


class TaskStatus(BaseModel):
    """The answer of ``structureMassExportAsyncStatus`` (wire-format row 23)."""

    model_config = _CLOSED
    taskId: str
    status: Literal["RUNNING", "FINISHED", "FAILED"]
    total: int
    done: int
    message: str | None


# ---------------------------------------------------------------------- raw data, deployment


class Child(BaseModel):
    """A child as the raw data lists it."""

    model_config = _OPEN
    id: Any
    name: Any
    type: Any


class RawData(BaseModel):
    """The answer of ``getRawData`` (wire-format row 13; ``emulator/rawdata.py``)."""

    model_config = _OPEN
    element: Element
    schema_: str = Field(alias="schema")
    path: list[str]
    children: list[Child]
    table: dict[str, Any] | None = Field(
        description='{"id","name","metadata" (without columns),"columns"} or null'
    )
    mappings: list[dict[str, Any]] = Field(
        description='The mappings targeting the element, with "sourceName","sourceType","sourceSchema"'
    )


class DeployedStructure(BaseModel):
    """One structure of a deployment info file."""

    model_config = _OPEN
    id: str
    version: int | None = None


class DeploymentInfo(BaseModel):
    """The deployment info file of ``confirmStructureDeployment`` (wire-format row 27)."""

    model_config = _OPEN
    deploymentId: str = Field(pattern=r"\S")
    systemName: str | None = None
    commit: str | None = None
    structures: list[DeployedStructure] = Field(min_length=1)


class DeploymentUpload(BaseModel):
    """The multipart body of ``confirmStructureDeployment``: the file in the field ``file``."""

    model_config = _CLOSED
    file: Annotated[
        bytes,
        WithJsonSchema(
            {
                "type": "string",
                "format": "binary",
                "contentMediaType": "application/json",
                "description": "A JSON document (DeploymentInfo)",
            }
        ),
    ]


# ---------------------------------------------------------------------- validation

_ADAPTERS: dict[Any, TypeAdapter[Any]] = {}


def _adapter(model: Any) -> TypeAdapter[Any]:
    if model not in _ADAPTERS:
        _ADAPTERS[model] = TypeAdapter(model)
    return _ADAPTERS[model]


def _where(loc: tuple[int | str, ...], ctx: dict[str, Any] | None) -> str:
    parts = list(loc)
    if ctx and "index" in ctx:
        parts.append(int(ctx["index"]))
    text = ""
    for part in parts:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    if text.startswith("["):  # an item of a top-level list
        return "position " + text[1:].split("]", 1)[0] + text.split("]", 1)[1]
    return text


_PHRASES = {
    "model_type": "must be a JSON object",
    "model_attributes_type": "must be a JSON object",
    "dict_type": "must be an object",
    "list_type": "must be a list",
    "string_type": "must be a string",
    "int_type": "must be an integer",
    "bool_type": "must be a boolean",
    "literal_error": "must be one of the allowed values",
    "too_short": "must not be empty",
    "string_too_short": "must not be empty",
    "string_pattern_mismatch": "must not be blank",
}


def _phrase(error: ErrorDetails) -> str:
    kind = error["type"]
    if kind in ("objects", "objects_item"):
        return error["msg"]
    phrase = _PHRASES.get(kind, error["msg"].lower())
    if kind.endswith("_type") or kind == "model_attributes_type":
        phrase += f", got {describe_kind(error.get('input'))}"
    return phrase


def validate_body(model: Any, value: Any, what: str) -> list[str]:
    """Check a parsed JSON body against ``model``; the problems found, as sentences.

    Parameters
    ----------
    model : pydantic model or annotated type
        One of this module's shapes.
    value : Any
        The body as ``json.loads`` returned it (it is not changed).
    what : str
        What the body is for, e.g. ``"table 'tbl-0001'"``; starts every sentence.

    Returns
    -------
    list of str
        Empty when the body fits; else up to 5 sentences such as
        ``"table 't': data[1] must be an object, got a number"``.
    """
    try:
        _adapter(model).validate_python(value, strict=True)
    except ValidationError as exc:
        missing = [
            _where(e["loc"], None) for e in exc.errors() if e["type"] == "missing" and e["loc"]
        ]
        problems = []
        if missing:
            problems.append(f"{what}: the body lacks {', '.join(missing)}")
        for error in exc.errors():
            if error["type"] == "missing":
                continue
            where = _where(error["loc"], error.get("ctx"))
            subject = f"{what}: {where}" if where else f"{what}: the body"
            problems.append(f"{subject} {_phrase(error)}")
        return problems[:5]
    return []
