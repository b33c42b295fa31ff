"""What each emulator dialect must make mddframes doctor report (shared by two test files)."""

from __future__ import annotations

#: What mddframes doctor must find different in each dialect (check -> result).
DIFFERENCES: dict[str, dict[str, str]] = {
    "default": {},
    "spring-page": {"tree": "differs", "object types": "differs", "packages": "differs"},
    "snake-case": {
        "tree": "differs",
        "element": "differs",
        "raw data": "differs",
        "object types": "differs",
        "table": "differs",
        "mapping": "differs",
        "packages": "differs",
    },
    "nested-tree": {"tree": "differs"},
    "unprefixed": {"API prefix": "differs"},
    "literal-realm": {"token realm": "differs"},
    "etag": {},  # the ETag check is ok either way; its evidence tells them apart
}
