"""read_tree streams the answer into Arrow columns (mddframes.frames.tree_arrow), under
both dtype backends: its frame, warnings and errors equal those of the plain route (the
answer decoded whole and framed by tree_frame; converted by to_backend for "pyarrow"),
over generated trees served by a scripted service (cut into many small batches) and over
the emulator's sample systems."""

from __future__ import annotations

import json
import warnings
from typing import Any
from unittest import mock

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from needs import require
from scripted_service import API, make_client

import mddframes.codec.splitter as splitter
from mddframes import Client
from mddframes.emulator import serve
from mddframes.errors import NotFoundError
from mddframes.frames import tree_arrow, tree_walk
from mddframes.frames.backends import to_backend
from mddframes.frames.tree import tree_frame

require("pyarrow")

TREE_PATH = f"{API}/system/SYS/tree"


def _outcome(read: Any) -> tuple[str, Any, list[tuple[type, str]]]:
    """What a read gives: ("frame", frame) or ("error", (type, message)), and its warnings."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            result: tuple[str, Any] = ("frame", read())
        except Exception as error:  # noqa: BLE001 - the two routes must fail alike
            result = ("error", (type(error), str(error)))
    return (*result, [(w.category, str(w.message)) for w in caught])


def _assert_same(arrow: tuple[str, Any, list[Any]], default: tuple[str, Any, list[Any]]) -> None:
    assert arrow[0] == default[0], (arrow[1], default[1])
    if arrow[0] == "frame":
        pd.testing.assert_frame_equal(arrow[1], default[1], check_exact=True)
        assert list(map(str, arrow[1].dtypes)) == list(map(str, default[1].dtypes))
    else:
        assert arrow[1] == default[1]
    assert arrow[2] == default[2]


def _plain(client: Any, system: str, types: Any) -> pd.DataFrame:
    """The tree read the plain way: the answer decoded whole, then framed."""
    return tree_frame(client.api.get_tree(system), types=types, what=f"tree of system {system!r}")


def _both_routes(client: Any, system: str, types: Any = None) -> None:
    # both backends come from the Arrow route now: each against the plain route
    arrow = _outcome(lambda: client.read_tree(system, types=types, dtype_backend="pyarrow"))
    plain = _outcome(lambda: to_backend(_plain(client, system, types), "pyarrow"))
    _assert_same(arrow, plain)
    default = _outcome(lambda: client.read_tree(system, types=types))
    _assert_same(default, _outcome(lambda: _plain(client, system, types)))


# --- generated trees ---------------------------------------------------------------------

_IDS = st.one_of(
    st.sampled_from(["a", "b", "c", "d", "e", "f", "g", "Zürich-Ω", "x/y"]),
    st.integers(-3, 3),
)
_VALUES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**70), 2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=6),
    st.lists(st.integers(0, 3), max_size=2),
    st.dictionaries(st.sampled_from(["k", "v"]), st.integers(0, 3), max_size=2),
)


@st.composite
def _elements(draw: Any) -> list[dict[str, Any]]:
    size = draw(st.integers(0, 14))
    kind = draw(st.sampled_from(["unique"] * 5 + ["repeated"] * 3 + ["ints", "mixed"]))
    ids: list[Any] = {
        "unique": lambda: [f"e{i}" for i in range(size)],
        "repeated": lambda: draw(
            st.lists(_IDS.filter(lambda v: isinstance(v, str)), min_size=size, max_size=size)
        ),  # fmt: skip
        "ints": lambda: list(range(size, 0, -1)),
        "mixed": lambda: draw(st.lists(_IDS, min_size=size, max_size=size)),
    }[kind]()
    parent_pool = st.one_of(st.none(), st.sampled_from([*ids, "missing"]) if ids else st.none())
    extra = draw(st.lists(st.sampled_from(["version", "deployed", "tableId", "note", "attributes",
                                           "ownerTeam", "odd"]), unique=True))  # fmt: skip
    field_values = {
        "version": st.one_of(
            st.none(), st.integers(0, 5), st.integers(0, 5).map(float), st.floats(0, 5), _VALUES
        ),
        "deployed": st.one_of(st.none(), st.booleans(), _VALUES),
        "tableId": st.one_of(st.none(), st.text(max_size=4)),
        "note": _VALUES,
        "attributes": _VALUES,
        "ownerTeam": st.one_of(st.none(), st.text(max_size=4)),
        # rare: NaN (json.dumps writes a NaN literal), a name or table id of another kind
        "odd": st.sampled_from([float("nan"), 1, True]),
    }
    elements = []
    for element_id in ids:
        element: dict[str, Any] = {
            "id": draw(st.one_of(st.just(element_id), st.none()))
            if draw(st.integers(0, 99)) == 0
            else element_id,  # now and then an element without an id
            "name": draw(st.one_of(st.none(), st.text(max_size=5))),
            "type": draw(st.sampled_from(["TABLE", "SCHEMA", None])),
            "parentId": draw(parent_pool),
        }
        for key in extra:
            if key == "odd":
                if draw(st.integers(0, 20)) == 0:
                    element[draw(st.sampled_from(["name", "tableId", "version"]))] = draw(
                        field_values[key]
                    )
            elif draw(st.integers(0, 3)):  # absent now and then: a gap
                element[key] = draw(field_values[key])
        elements.append(element)
    return elements


@st.composite
def _answers(draw: Any) -> tuple[Any, list[str] | None]:
    elements = draw(_elements())
    shape = draw(st.sampled_from(["flat"] * 12 + ["snake", "nested", "envelope"]))
    if shape == "snake":
        elements = [{("parent_id" if k == "parentId" else k): v for k, v in e.items()}
                    for e in elements]  # fmt: skip
    if shape == "nested" and elements:
        first, *rest = elements
        elements = [{**first, "children": [{k: v for k, v in e.items() if k != "parentId"}
                                           for e in rest]}]  # fmt: skip
    answer: Any = {"content": elements} if shape == "envelope" else elements
    types = draw(st.one_of(st.none(), st.just(["TABLE"])))
    return answer, types


@pytest.fixture
def served(script):
    """The scripted service (its tree answer set by the test) and a client of it."""
    plan, base_url = script
    client = make_client(base_url)
    yield plan, client
    client.close()


def _serve(plan: Any, body: bytes) -> None:
    plan.routes[TREE_PATH] = lambda handler: (200, {"Content-Type": "application/json"}, body)


@settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(answer=_answers(), spaced=st.booleans(), deep=st.booleans())
def test_the_arrow_route_equals_the_default_route_converted(served, answer, spaced, deep):
    plan, client = served
    tree_arrow._OTHER_SHAPES.clear()  # one client for every example: each its own service
    value, types = answer
    body = json.dumps(value, indent=1 if spaced else None).encode()
    _serve(plan, body)
    # batches of a few elements: every type change between batches is exercised
    # and (deep) paths level by level, as for a tree deeper than JOIN_DEPTH
    with (
        mock.patch.object(splitter, "BATCH_BYTES", 40),
        mock.patch.object(tree_walk, "JOIN_DEPTH", 0 if deep else tree_walk.JOIN_DEPTH),
        mock.patch.object(tree_walk, "PATH_BLOCK", 3),
    ):
        _both_routes(client, "SYS", types)


def test_a_tree_of_many_batches_keeps_its_types_across_them(served):
    """Fields that change kind from one batch to the next, big ints, floats, gaps."""
    plan, client = served
    elements = [
        {"id": f"n{i}", "name": f"node {i}", "type": "T", "parentId": f"n{(i - 1) // 3}" if i else None,
         "version": i if i < 50 else float(i), "score": i if i < 50 else i + 0.5, "deployed": (i % 2 == 0) if i % 7 else None,
         "count": 2**64 if i == 90 else i, "tableId": None if i < 60 else f"t{i}",
         "note": "text" if i < 80 else 5}
        for i in range(120)
    ]  # fmt: skip
    _serve(plan, json.dumps(elements).encode())
    with mock.patch.object(splitter, "BATCH_BYTES", 256):
        _both_routes(client, "SYS")
        _both_routes(client, "SYS", ["T"])
    frame = client.read_tree("SYS", dtype_backend="pyarrow")
    assert str(frame["table_id"].dtype) == "string[pyarrow]"
    assert frame["count"].dtype == object and frame["count"][90] == 2**64
    assert str(frame["version"].dtype) == "int64[pyarrow]"  # 2.0 is the version 2
    assert str(frame["score"].dtype) == "double[pyarrow]"
    assert frame["depth"].max() == 4 and frame["path"][4] == "node 0/node 1/node 4"


def test_the_arrow_route_reads_the_answer_once_and_in_batches(served, monkeypatch):
    plan, client = served
    elements = [{"id": f"n{i}", "name": "x", "type": "T", "parentId": None} for i in range(500)]
    _serve(plan, json.dumps(elements).encode())
    batches = []
    taken = tree_arrow._ColumnBuilder.add

    def counting(self: Any, batch: list[Any]) -> None:
        batches.append(len(batch))
        taken(self, batch)

    monkeypatch.setattr(tree_arrow._ColumnBuilder, "add", counting)
    monkeypatch.setattr(splitter, "BATCH_BYTES", 4096)
    plan.hits.clear()
    frame = client.read_tree("SYS", dtype_backend="pyarrow")
    assert len(frame) == 500 and sum(batches) == 500 and len(batches) > 5
    assert plan.hits[TREE_PATH] == 1  # no second request: the stream route took it


def test_an_answer_it_cannot_vouch_for_is_read_the_default_way(served):
    plan, client = served
    nested = [{"id": "r", "name": "R", "children": [{"id": "c", "name": "C"}]}]
    _serve(plan, json.dumps(nested).encode())
    plan.hits.clear()
    frame = client.read_tree("SYS", dtype_backend="pyarrow")
    assert frame["path"].tolist() == ["R", "R/C"]
    assert plan.hits[TREE_PATH] == 2  # the stream stepped aside, the default route read it
    client.read_tree("SYS", dtype_backend="pyarrow")
    assert plan.hits[TREE_PATH] == 3  # this service nests its trees: no stream tried again


@pytest.mark.emulator
@pytest.mark.parametrize("dialect", ["nested-tree", "snake-case", "spring-page"])
def test_the_service_dialects_read_alike_under_both_routes(dialect):
    with serve(dialect=dialect) as emu, Client.from_emulator(emu) as client:
        for system in ("DWH", "LAB"):
            _both_routes(client, system)


# --- the emulator's sample systems ---------------------------------------------------------


@pytest.mark.parametrize("system", ["DWH", "LAB", "FLOW"])
def test_sample_systems_read_alike_under_both_routes(client, system):
    _both_routes(client, system)
    _both_routes(client, system, ["HUB", "SOURCE_TABLE"])
    frame = client.read_tree(system, dtype_backend="pyarrow")
    assert all(isinstance(dtype, pd.ArrowDtype) for dtype in frame.dtypes[:7])


def test_an_unknown_system_is_named_under_both_routes(client):
    _both_routes(client, "NO_SUCH_SYSTEM")
    with pytest.raises(NotFoundError, match="NO_SUCH_SYSTEM"):
        client.read_tree("NO_SUCH_SYSTEM", dtype_backend="pyarrow")
