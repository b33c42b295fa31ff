"""The wire profile against independent sources: the emulator's models, the endpoints."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from mddframes.emulator import schemas
from mddframes.wire import profile, spelling
from mddframes.wire.dialects import DIALECTS, Dialect, check_dialect, nested_dialect

_CAMEL = re.compile(r"[a-z]+[A-Z]")


def _model_names() -> set[str]:
    names: set[str] = set()
    for model in vars(schemas).values():
        fields = getattr(model, "model_fields", None)
        if isinstance(fields, dict):
            names.update(field.alias or name for name, field in fields.items())
    return {name for name in names if _CAMEL.match(name)}


def test_the_wire_names_are_the_camel_case_names_of_the_emulators_models():
    # the raw data's source* fields are composed by emulator/rawdata.py, not a model
    assert set(profile.WIRE_NAMES) == _model_names() | {"sourceName", "sourceType", "sourceSchema"}


def test_every_api_route_hangs_below_the_api_root_and_the_token_route_names_the_realm():
    for operation, (method, path) in profile.ROUTES.items():
        assert method in ("GET", "PUT", "POST"), operation
        if operation == "getToken":
            assert "{realm}" in path and not path.startswith(profile.API_ROOT)
        elif operation != "openApiDocument":
            assert path.startswith(profile.API_ROOT), operation


def test_the_dialect_literal_names_every_entry_and_only_those():
    assert list(Dialect.__args__) == list(DIALECTS)  # type: ignore[attr-defined]
    assert check_dialect("nested-tree") == "nested-tree"
    assert nested_dialect("children") is DIALECTS["nested-tree"]
    assert nested_dialect("childs") is None


def test_a_served_page_is_what_the_profile_calls_a_page():
    page = profile.served_page(list(range(7)), 1, 3)
    assert page[profile.PAGE_CONTENT] == [3, 4, 5]
    assert any(key in page for key in profile.PAGE_TOTALS)
    assert page["totalPages"] == 3 and page["totalElements"] == 7 and page["last"] is False


_names = st.sampled_from(profile.WIRE_NAMES)
_user = st.dictionaries(st.sampled_from(["parentId", "tableId", "free text"]), st.integers(),
                        max_size=3)  # fmt: skip
_answers = st.recursive(
    st.integers() | st.text(max_size=3),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(_names | st.sampled_from(["id", "name"]), inner, max_size=4)
        | st.fixed_dictionaries({"data": st.lists(_user, max_size=2), "attributes": _user})
    ),
    max_leaves=12,
)


@given(_answers)
def test_snake_case_and_back_is_the_same_answer_and_users_keys_are_never_renamed(value):
    snake = spelling.to_snake(value)
    assert spelling.rename(snake, spelling.TO_CAMEL) == value
    assert spelling.camel_names(snake) == set()


def test_users_keys_keep_wire_like_names():
    answer = {"parentId": 1, "data": [{"parentId": 2}], "attributes": {"tableId": 3}}
    assert spelling.to_snake(answer) == {
        "parent_id": 1,
        "data": [{"parentId": 2}],
        "attributes": {"tableId": 3},
    }
    assert spelling.spelling(answer) == "camelCase"
    assert spelling.spelling(spelling.to_snake(answer)) == "snake_case"
    assert spelling.spelling([1, 2]) is None
