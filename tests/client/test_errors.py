"""The error tree: every exception pickles round-trip, and HTTP answers land on the right class.

The pickling test walks ``MddError.__subclasses__()`` recursively after importing every
module of mddframes, so a class added anywhere later is tested too (it fails, naming
the class, if it needs a keyword this file does not know yet).
"""

from __future__ import annotations

import copy
import dataclasses
import importlib
import pickle
import pkgutil
import warnings
from typing import Any

import pandas as pd
import pytest
from scripted_service import API

import mddframes
from mddframes import errors
from mddframes.codec import CheckReport
from mddframes.config import Settings
from mddframes.errors import MddError, MddWarning
from mddframes.http.session import HttpSession


def _import_all_modules() -> None:
    for info in pkgutil.walk_packages(mddframes.__path__, "mddframes."):
        if info.name.endswith("__main__"):
            continue  # runs the command line
        try:
            importlib.import_module(info.name)
        except ImportError:  # an optional extra that is not installed: its classes are skipped
            continue


def _walk(cls: type) -> list[type]:
    found = [cls]
    for sub in cls.__subclasses__():
        found.extend(c for c in _walk(sub) if c not in found)
    return found


_import_all_modules()
ERROR_CLASSES = _walk(MddError)
WARNING_CLASSES = _walk(MddWarning)

CONTEXT: dict[str, Any] = {
    "operation": "getTable",
    "method": "GET",
    "url": "http://127.0.0.1:8080/api/mdd-backend/api/table/t%2F1",
    "status": 409,
    "server_message": "Table t/1 was changed by someone else",
}
REPORT = CheckReport.from_records(
    [
        {
            "level": "error",
            "table": "t1",
            "row": 3,
            "column": "NAME",
            "problem": "required value is missing",
            "old": "a",
            "new": None,
        }
    ]
)
CHANGES = pd.DataFrame(
    {"row": [0, 2], "column": ["NAME", "TYPE"], "old": ["a", "x"], "new": ["b", None]}
)
#: The keywords a class needs beyond MddError's, with realistic values.
EXTRA: dict[str, dict[str, Any]] = {
    "AuthError": {"error": "invalid_client", "error_description": "Invalid client secret"},
    "ConcurrentModificationError": {"changes": CHANGES},
    "IncompletePayloadError": {"report": REPORT},
    "ExportError": {"task_id": "task-7f3a"},
    "ExportTimeoutError": {"task_id": "task-7f3a"},
    "ExportFailedError": {"task_id": "legacy"},
}


def _build(cls: type[MddError]) -> MddError:
    kwargs = {**CONTEXT, **EXTRA.get(cls.__name__, {})}
    try:
        return cls(f"{cls.__name__} for t/1: something went wrong", **kwargs)
    except TypeError as exc:  # pragma: no cover - only when a new class needs a new keyword
        pytest.fail(f"{cls.__module__}.{cls.__name__} needs keywords EXTRA lacks: {exc}")


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, pd.DataFrame):
        return isinstance(b, pd.DataFrame) and a.equals(b) and a.dtypes.equals(b.dtypes)
    if dataclasses.is_dataclass(a) and not isinstance(a, type):
        return type(a) is type(b) and all(
            _same(getattr(a, f.name), getattr(b, f.name)) for f in dataclasses.fields(a)
        )
    return type(a) is type(b) and a == b


def test_the_walk_finds_every_class_of_errors_py():
    defined = {getattr(errors, name) for name in errors.__all__}
    assert {c for c in defined if isinstance(c, type) and issubclass(c, MddError)} <= set(
        ERROR_CLASSES
    )
    assert len(ERROR_CLASSES) >= 24


@pytest.mark.parametrize("cls", ERROR_CLASSES, ids=lambda c: c.__name__)
@pytest.mark.parametrize("protocol", [2, pickle.HIGHEST_PROTOCOL])
def test_every_error_pickles_round_trip_with_all_its_attributes(cls, protocol):
    error = _build(cls)
    error.add_note("no table was written")
    copied = pickle.loads(pickle.dumps(error, protocol=protocol))
    assert type(copied) is cls
    assert str(copied) == str(error) and copied.args == error.args
    assert vars(copied).keys() == vars(error).keys()
    for name, value in vars(error).items():
        assert _same(getattr(copied, name), value), name
    for name, value in EXTRA.get(cls.__name__, {}).items():  # the keywords reached the copy
        assert _same(getattr(copied, name), value), name
    assert copied.status == 409 and copied.operation == "getTable"
    assert copied.__notes__ == ["no table was written"]
    deep = copy.deepcopy(error)
    assert type(deep) is cls and str(deep) == str(error)


@pytest.mark.parametrize("cls", WARNING_CLASSES, ids=lambda c: c.__name__)
def test_every_warning_pickles_and_is_caught_by_the_base(cls):
    copied = pickle.loads(pickle.dumps(cls("3 of 20 ids failed: 't1', 't2', 't3'")))
    assert type(copied) is cls and str(copied) == "3 of 20 ids failed: 't1', 't2', 't3'"
    with warnings.catch_warnings():
        warnings.simplefilter("error", MddWarning)
        with pytest.raises(MddWarning):
            warnings.warn("partial", cls, stacklevel=1)


def test_the_tree():
    answered = [
        errors.BadRequestError,
        errors.UnsupportedMediaTypeError,
        errors.AuthError,
        errors.NotFoundError,
        errors.ConflictError,
        errors.PackageClosedError,
        errors.RateLimitError,
        errors.ServerError,
    ]
    assert all(issubclass(c, errors.ServiceError) for c in answered)
    for beside in (errors.TransportError, errors.ResponseFormatError, errors.ClientClosedError):
        assert not issubclass(beside, errors.ServiceError)
    refused = (errors.ConcurrentModificationError, errors.IncompletePayloadError)
    assert all(issubclass(c, errors.WriteRefusedError) for c in refused)
    assert issubclass(errors.InvalidArgumentError, ValueError)
    # the drawn tree names every class of the module
    for name in errors.__all__:
        assert name in (errors.__doc__ or ""), name


def test_warnings_keep_their_old_import_paths():
    from mddframes.bulk import PartialFailureWarning
    from mddframes.exports import LegacyExportWarning
    from mddframes.frames.tree import TreeIntegrityWarning

    assert PartialFailureWarning is mddframes.PartialFailureWarning is errors.PartialFailureWarning
    assert LegacyExportWarning is mddframes.LegacyExportWarning is errors.LegacyExportWarning
    assert TreeIntegrityWarning is mddframes.TreeIntegrityWarning is errors.TreeIntegrityWarning
    assert {PartialFailureWarning, LegacyExportWarning, TreeIntegrityWarning} <= set(
        WARNING_CLASSES
    )
    assert all(issubclass(c, UserWarning) for c in WARNING_CLASSES)


# -- what a real answer becomes (through HttpSession, the layer that translates) ---------------


def _session(base_url: str, **extra: Any) -> HttpSession:
    values: dict[str, Any] = {
        "tenant": "acme",
        "base_url": base_url,
        "client_id": "cid",
        "client_secret": "sec-xyz",
        "realm": "acme",
        "max_retries": 1,
        "timeout": (2.0, 2.0),
        **extra,
    }
    return HttpSession(Settings(**values))


def test_an_unmapped_status_is_the_generic_service_error(script):  # noqa: F811
    plan, url = script
    plan.routes[f"{API}/table/t"] = lambda h: (418, {}, b'{"message": "I am a teapot"}')
    session = _session(url)
    with pytest.raises(errors.ServiceError) as caught:
        session.call("getTable", {"tableId": "t"})
    session.close()
    error = caught.value
    assert type(error) is errors.ServiceError
    assert error.status == 418 and error.server_message == "I am a teapot"
    assert error.operation == "getTable" and error.url.endswith("/table/t")
    copied = pickle.loads(pickle.dumps(error))
    assert str(copied) == str(error) and copied.status == 418


def test_a_redirect_is_a_service_error_with_its_status(script):  # noqa: F811
    plan, url = script
    plan.routes[f"{API}/object-type"] = lambda h: (302, {"Location": f"{url}/login"}, b"")
    session = _session(url)
    with pytest.raises(errors.ServiceError, match="unexpected redirect") as caught:
        session.call("getObjectTypes")
    session.close()
    assert type(caught.value) is errors.ServiceError and caught.value.status == 302


def _emulator_session(emu: Any) -> HttpSession:
    return _session(
        emu.base_url.rstrip("/"),
        tenant=emu.tenant,
        client_id=emu.client_id,
        client_secret=emu.client_secret,
        realm=emu.realm,
        api_prefix=emu.api_prefix.rstrip("/"),
    )


def test_an_error_from_the_emulator_pickles_with_its_context(emu):
    session = _emulator_session(emu)
    with pytest.raises(errors.NotFoundError) as caught:
        session.call("getTable", {"tableId": "no-such-table"})
    session.close()
    error = caught.value
    assert isinstance(error, errors.ServiceError) and error.status == 404
    copied = pickle.loads(pickle.dumps(error))
    assert (copied.operation, copied.method, copied.url, copied.status) == (
        "getTable",
        "GET",
        error.url,
        404,
    )
    assert str(copied) == str(error)


def test_a_closed_session_raises_client_closed_error(emu):
    session = _emulator_session(emu)
    session.call("getObjectTypes").close()
    session.close()
    with pytest.raises(errors.ClientClosedError, match="closed") as caught:
        session.call("getObjectTypes")
    assert caught.value.operation == "getObjectTypes"
