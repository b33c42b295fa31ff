"""How the raw layer reads an answer: decoded, its spelling learned, its pages followed.

:class:`AnswerReader` is the base of :class:`~mddframes.api.Api`: the one place an
operation's JSON answer is decoded, renamed to the wire format's camelCase (or kept as
served, for the documents written back whole), checked to be an object where one is
due, tagged with its strong ETag, and followed to its last page when it comes as a
Spring page. The operations themselves, one method each, are :mod:`mddframes.api`.
"""

from __future__ import annotations

from typing import Any

from mddframes.api_bodies import json_object
from mddframes.errors import InvalidArgumentError
from mddframes.http.endpoints import endpoint
from mddframes.http.etags import Tagged, etag_of
from mddframes.http.paging import ASKED_PAGE_SIZE, collect_pages, is_page, worth_bigger_pages
from mddframes.http.session import BodyStream, HttpSession, decode_json
from mddframes.wire.profile import PAGE_PARAMETERS
from mddframes.wire.spelling import is_snake_case, spelling, to_camel

# Table and mapping documents are written back whole, so their keys stay as served
# (the codec reads a column's dataType/data_type and primaryKey/primary_key either way).
_KEPT_AS_SERVED = frozenset({"getTable", "tableUpdate", "getMapping", "mappingUpdate"})


class AnswerReader:
    """The answer-reading half of :class:`~mddframes.api.Api` (which sets these
    attributes up and documents them)."""

    http: HttpSession
    paged: dict[str, int]
    key_style: str | None
    snake_case_answers: set[str]
    progress: bool

    def _json(
        self, operation: str, path_params: dict[str, Any] | None = None, **kwargs: Any
    ) -> Any:
        return self._json_answer(operation, path_params, **kwargs)[0]

    def _json_answer(
        self, operation: str, path_params: dict[str, Any] | None, **kwargs: Any
    ) -> tuple[Any, str, str | None]:
        """The decoded answer, its URL and its strong ETag (:mod:`.http.etags`)."""
        entry = endpoint(operation)
        response = self.http.call(operation, path_params, **kwargs)
        try:
            value = decode_json(entry, response.url, response)
        finally:
            response.close()
        etag = etag_of(response.headers)
        if operation in _KEPT_AS_SERVED:  # written back whole: the service's own keys
            if is_snake_case(value):
                self._saw_snake_case(operation)
            return value, response.url, etag
        renamed = to_camel(value)
        if renamed is not value:
            self._saw_snake_case(operation)
        elif self.key_style is None and spelling(value) == "camelCase":
            self.key_style = "camelCase"
        return renamed, response.url, etag

    def _saw_snake_case(self, operation: str) -> None:
        self.snake_case_answers.add(operation)  # a set: adding is atomic under the GIL
        self.key_style = "snake_case"

    def _json_object(
        self, operation: str, path_params: dict[str, Any] | None = None, **kwargs: Any
    ) -> dict[str, Any]:
        return self._tagged(operation, path_params, **kwargs).document

    def _tagged(
        self, operation: str, path_params: dict[str, Any] | None = None, **kwargs: Any
    ) -> Tagged:
        value, url, etag = self._json_answer(operation, path_params, **kwargs)
        return Tagged(json_object(value, operation, url), etag)

    def _stream(self, operation: str, path_params: dict[str, Any]) -> BodyStream:
        """The answer with its body still unread (a context manager)."""
        response = self.http.call(operation, path_params, stream=True)
        return BodyStream(endpoint(operation), response.url, response)

    def _list(self, operation: str, path_params: dict[str, Any] | None, what: str, row: int) -> Any:
        """A list answer; a Spring page is followed to its end (:mod:`.http.paging`)."""
        value = self._json(operation, path_params)
        if not is_page(value):
            return value

        def fetch(page: int, size: int) -> Any:
            return self._json(
                operation, path_params, query=dict(zip(PAGE_PARAMETERS, (page, size), strict=True))
            )

        if worth_bigger_pages(value):
            bigger = fetch(0, ASKED_PAGE_SIZE)
            value = bigger if is_page(bigger) else value  # not a page: keep the first one
        entries = collect_pages(value, fetch, what=what, row=row, progress=self.progress)
        self.paged[operation] = len(entries)
        return entries

    @staticmethod
    def _nonempty(ids: list[str], method: str) -> list[str]:
        if not ids:
            raise InvalidArgumentError(f"{method}(): ids is empty; give at least one element id")
        return ids
