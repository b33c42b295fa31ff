"""What the raw layer checks of what goes out and comes back, apart from HTTP.

An answer that must be a JSON object, a whole document handed to a PUT, a deployment
info file given as a path, a dict or bytes, and the file name of a single export whose
answer names none. Each check raises the error the caller would see from the
operation itself, naming the operation and what is wrong.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from mddframes.disk_names import id_file_name
from mddframes.errors import InvalidArgumentError, ResponseFormatError
from mddframes.http.endpoints import endpoint


def json_object(value: Any, operation: str, url: str) -> dict[str, Any]:
    """``value`` if it is a JSON object, else the error every object-answering call raises.

    Parameters
    ----------
    value : Any
        A decoded answer.
    operation : str
        The operation id that answered it.
    url : str
        The URL it came from.

    Raises
    ------
    ResponseFormatError
        ``value`` is not a JSON object.
    """
    if not isinstance(value, dict):
        raise ResponseFormatError(
            f"expected a JSON object, got {type(value).__name__}",
            operation=operation,
            method=endpoint(operation).method,
            url=url,
        )
    return value


def attachment_filename_fallback(structure_id: str) -> str:
    """The file name of a single export whose answer names none: the element id as a
    file name (:func:`mddframes.disk_names.id_file_name`) and ``.txt``."""
    return id_file_name(str(structure_id), ".txt")


def require_document(method: str, name: str, value: Any) -> None:
    """Refuse a PUT of anything but a whole JSON document (a dict)."""
    if not isinstance(value, dict):
        raise InvalidArgumentError(
            f"{method}(): {name} must be a dict (the whole JSON document), "
            f"got {type(value).__name__}"
        )


def deployment_info_bytes(info: Any) -> bytes:
    """The bytes of a deployment info file given as a path, a dict or bytes; valid JSON."""
    if isinstance(info, bytes | bytearray):
        content = bytes(info)
    elif isinstance(info, dict):
        content = json.dumps(info, allow_nan=False, ensure_ascii=False).encode("utf-8")
    elif isinstance(info, str | os.PathLike):
        path = Path(info)
        if not path.is_file():
            raise InvalidArgumentError(
                f"confirm_structure_deployment(): the deployment info file {str(path)!r} does not exist"
            )
        content = path.read_bytes()
    else:
        raise InvalidArgumentError(
            f"confirm_structure_deployment(): info must be a path, a dict or bytes, got {type(info).__name__}"
        )
    try:
        json.loads(content)
    except (ValueError, UnicodeDecodeError) as exc:
        raise InvalidArgumentError(
            f"confirm_structure_deployment(): the deployment info is not valid JSON: {exc}"
        ) from None
    return content
