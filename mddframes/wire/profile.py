"""The wire profile: every spelling and shape mddframes assumes of the service, as data.

docs/wire-format.md states these assumptions in prose; this module states them once as
values, and every reader of the wire takes them from here: the client's tolerant
readers (:mod:`mddframes.http`, :mod:`mddframes.frames`, :mod:`mddframes.elements`),
doctor's checks, the recording learner and the emulator's dialects. A tenant that
spells something otherwise is then taught to all of them in one place
(docs/internals.md, "Adding a dialect").

Nothing here imports mddframes: this is the bottom layer.
"""

from __future__ import annotations

from typing import Any

# -- where the service answers (rows 1-4) --------------------------------------------

API_PREFIX = "/api/mdd-backend"
"""The prefix of every operation (row 2; the ``api_prefix`` setting's default)."""

LITERAL_REALM = "tenat"
"""The realm the service description writes in the token URL (row 4)."""

OPENAPI_PATH = "/v3/api-docs"
"""Where springdoc publishes the OpenAPI document, below the API prefix (row 3)."""

#: Every operation: its HTTP method and path template (under the prefix but for the
#: token). Ordered so that a path is matched by its most specific template first.
ROUTES: dict[str, tuple[str, str]] = {
    "getToken": ("POST", "/auth/realms/{realm}/protocol/openid-connect/token"),
    "getTree": ("GET", "/api/system/{name}/tree"),
    "getRawData": ("GET", "/api/structure/{structureId}/raw-data"),
    "structureMassExportAsyncResult": ("GET", "/api/structure/export/{taskId}/result"),
    "structureMassExportAsyncStatus": ("GET", "/api/structure/export/{taskId}"),
    "structureMassExportAsync": ("POST", "/api/structure/export"),
    "confirmStructureDeployment": ("POST", "/api/structure/deployed"),
    "getStructure": ("GET", "/api/structure/{id}"),
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
    "deployStructure": ("POST", "/api/structure/{id}/deploy/{deploymentId}"),
    "openApiDocument": ("GET", OPENAPI_PATH),
}
API_ROOT = "/api/"
"""Where every operation's path starts, below the prefix (all but the token's)."""
ASYNC_PATH = ROUTES["structureMassExportAsync"][1]
"""The batch export operations' path: the only ones the description shows prefixed."""
LIST_OPERATIONS = ("getTree", "getObjectTypes", "listDeploymentPackages")
"""The operations answering a list (rows 11, 14, 18): the ones a service may page."""

# -- field names (rows 11-24) -------------------------------------------------------

WIRE_NAMES: tuple[str, ...] = (
    "parentId",
    "tableId",
    "mappingId",
    "systemName",
    "modifiedAt",
    "deploymentId",
    "structureId",
    "structureIds",
    "dataType",
    "primaryKey",
    "sourceId",
    "targetId",
    "columnMappings",
    "createdAt",
    "fileExtension",
    "elementTypes",
    "objectTypeId",
    "taskId",
    "sourceName",
    "sourceType",
    "sourceSchema",
)
"""Every camelCase field name of docs/wire-format.md (a ``SNAKE_CASE`` service writes
them ``parent_id``...; :mod:`mddframes.wire.spelling` renames them)."""

USER_KEYS = frozenset({"data", "attributes"})
"""Keys whose values hold the user's own names (table rows, element attributes): never
renamed, never taken for wire names."""

#: The fields each answer is assumed to carry, and those only some entries carry
#: (rows 11-18): operation -> (always, sometimes).
FIELDS: dict[str, tuple[str, str]] = {
    "getTree": ("id name type parentId systemName version deployed", "tableId mappingId"),
    "getStructure": (
        "id name type parentId systemName version modifiedAt deployed deploymentId attributes",
        "tableId mappingId",
    ),
    "getRawData": ("element schema path children table mappings", ""),
    "getObjectTypes": ("id name description fileExtension elementTypes", ""),
    "getTable": ("id name structureId metadata data", ""),
    "getMapping": ("id name sourceId targetId description columnMappings", ""),
    "listDeploymentPackages": ("systemName name description status createdAt structureIds", ""),
}

# -- lists: envelopes and pages (rows 11, 14, 18) ------------------------------------

ENVELOPE_KEYS: tuple[str, ...] = (
    "content",
    "items",
    "data",
    "elements",
    "result",
    "results",
    "structures",
)
"""Keys under which a service may wrap a list, tried in this order."""

PACKAGE_ENVELOPE_KEYS: tuple[str, ...] = (
    "content",
    "items",
    "data",
    "results",
    "packages",
    "deploymentPackages",
)
"""Keys under which a service may wrap the list of deployment packages."""

PACKAGE_IDS_KEYS: tuple[str, ...] = ("structureIds", "structure_ids", "structures", "elements")
"""Keys under which a package may list its elements (ids, or objects with an id)."""

PAGE_CONTENT = "content"
"""The key of a Spring Data page's entries."""
PAGE_NUMBER = ("number",)
"""The spellings of a page's number (from 0)."""
PAGE_SIZE = ("size",)
"""The spellings of a page's size."""
PAGE_TOTAL_PAGES = ("totalPages", "total_pages")
"""The spellings of a page's count of pages."""
PAGE_TOTAL_ELEMENTS = ("totalElements", "total_elements")
"""The spellings of a page's count of entries (over every page)."""
PAGE_LAST = "last"
"""The flag a page is the last by."""
PAGE_TOTALS = (*PAGE_TOTAL_PAGES, *PAGE_TOTAL_ELEMENTS, PAGE_LAST)
"""A page's paging fields: one of them beside ``content`` makes an object a page."""
PAGEABLE = "pageable"
"""The key of the request a Spring Data page answers (``pageNumber``, ``pageSize``...)."""
PAGE_PARAMETERS = ("page", "size")
"""The query parameters Spring Data reads: the page number (from 0) and its size."""
SERVED_PAGE_SIZE = 50
"""The page size the ``spring-page`` dialect serves when none is asked."""
MAX_SERVED_PAGE_SIZE = 2000
"""Spring Data's default maximum page size (a larger ``size`` is served as this)."""
ASKED_PAGE_SIZE = 1000
"""The page size asked for once a list turned out to span pages."""
MAX_PAGES = 10_000
"""More pages than this is refused before fetching them (a bound, not a limit in use)."""


def served_page(entries: list[Any], page: int, size: int) -> dict[str, Any]:
    """Page ``page`` (of ``size``) of ``entries`` as Spring Data serialises a ``PageImpl``.

    The shape a paged tenant answers in; every field but those above is Spring's own.
    """
    content = entries[page * size : (page + 1) * size]
    total_pages = -(-len(entries) // size)
    return {
        PAGE_CONTENT: content,
        PAGEABLE: {"pageNumber": page, "pageSize": size, "offset": page * size},
        PAGE_TOTAL_ELEMENTS[0]: len(entries),
        PAGE_TOTAL_PAGES[0]: total_pages,
        PAGE_LAST: page >= total_pages - 1,
        "first": page == 0,
        PAGE_NUMBER[0]: page,
        PAGE_SIZE[0]: size,
        "numberOfElements": len(content),
        "empty": not content,
    }


# -- trees (row 11) ---------------------------------------------------------------------

CHILDREN_KEYS: tuple[str, ...] = ("children", "childs", "child_structures", "childStructures")
"""The spellings of a nested tree's child list, tried in this order."""
ENTRY_ID_KEYS: tuple[str, ...] = ("id", "structureId", "structure_id", "elementId", "element_id")
"""The spellings of an element's id in an answer, tried in this order."""
ID_ALIASES: tuple[str, ...] = tuple(key for key in ENTRY_ID_KEYS if key.islower())
"""The spellings of an element's id in a tree frame (its snake_case columns)."""
PARENT_ALIASES: tuple[str, ...] = ("parent_id", "parent_structure_id", "parent")
"""The spellings of an element's parent id in a tree (snake_case columns)."""

# -- concurrency (row 29) -----------------------------------------------------------

ETAG_HEADER = "ETag"
"""The answer header carrying an entity tag."""
IF_MATCH_HEADER = "If-Match"
"""The request header a write sends its read's tag back in."""
ANY_VERSION = "*"
"""The ``If-Match`` value matching any existing version."""
