"""A read context's route is one of the read routes (ReadRoute, a Literal mypy checks)."""

from __future__ import annotations

import pytest

from mddframes.context import ReadContext


@pytest.mark.parametrize("route", ["whole", "arrow", "splitter", "ijson", "kept", "readback", None])
def test_a_context_keeps_each_read_route(route):
    assert ReadContext("table", "t", {"data": []}, route=route).route == route


@pytest.mark.parametrize("route", ["read-back", "streamed", "", "Splitter"])
def test_a_route_that_is_not_a_read_route_is_refused_naming_it(route):
    # to mypy, route is a ReadRoute; a caller it does not check is stopped here rather
    # than reaching the write rule as a route that "could not cut the document"
    with pytest.raises(ValueError, match=rf"table 't': route {route!r} is not one of"):
        ReadContext("table", "t", {"data": []}, route=route)
