"""The refusals of the emulator: each carries the HTTP status the routes answer with."""

from __future__ import annotations


class EmulatorError(Exception):
    """A request the emulator refuses; ``status`` is the HTTP status to answer with."""

    status = 500

    def __init__(self, message: str) -> None:
        self.message = message
        super().__init__(message)


class InvalidInput(EmulatorError):
    """Malformed request body or parameter (400)."""

    status = 400


class UnknownObject(EmulatorError):
    """No such system, element, table, mapping, object type, package or task (404)."""

    status = 404


class StateConflict(EmulatorError):
    """The object's state forbids the request, e.g. a closed package (409)."""

    status = 409


class PreconditionFailed(EmulatorError):
    """An ``If-Match`` names no current version of the object: nothing is written (412)."""

    status = 412


class BodyTooLarge(EmulatorError):
    """The request body is larger than the emulator reads (413)."""

    status = 413


class UnsupportedMedia(EmulatorError):
    """The body's content type is not the one the operation takes (415)."""

    status = 415
