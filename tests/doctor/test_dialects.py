"""The client against every emulator dialect: each proves one tolerant reader.

The whole suite runs against the default dialect. Here each other dialect (one emulator
each, module-scoped, reset per test) repeats only the cases that cross the wire: every
loader (compared with the default dialect's frames), the full write cycle of a table
and of a mapping, a single and a batch export, a package addition, and doctor. They
repeat for every dialect, not only for the one "meant" for them, because the dialect
middleware sits in front of every route (a prefix, a realm, a key spelling or a page
changes every call it touches) and the seven cases cost about a second per dialect;
the rest of the suite (codec properties, widgets, spreadsheets, faults, the emulator's
own contract) does not depend on the wire's shapes and is not repeated.
"""

from __future__ import annotations

import copy
import logging
import zipfile

import pandas as pd
import pytest
from dialect_expectations import DIFFERENCES

from mddframes import Client, doctor_exit_code, run_doctor
from mddframes.emulator import serve
from mddframes.errors import AuthError, DataShapeError
from mddframes.http.paging import collect_pages

DIALECTS = ["spring-page", "snake-case", "nested-tree", "unprefixed", "literal-realm", "etag"]
TABLE_OWNER = "dwh-0005"  # crm_customer, owns tbl-0001
EXPORTED = ["dwh-0005", "dwh-0006"]
EMPTY_PACKAGE = "hotfix-2024.07.1"


@pytest.fixture(scope="module", params=DIALECTS)
def dialect_emulator(request):
    with serve(dialect=request.param) as emu:
        yield emu


@pytest.fixture
def demu(dialect_emulator):
    dialect_emulator.reset()
    yield dialect_emulator


@pytest.fixture
def dclient(demu):
    c = Client.from_emulator(demu)
    yield c
    c.close()


@pytest.fixture(scope="module")
def reference(emulator, tmp_path_factory):
    """The default dialect's frames, scripts and batch archive of the sample, read once."""
    emulator.reset()
    with Client.from_emulator(emulator) as c:
        found = _read_everything(c)
        found["script"] = c.export_script(TABLE_OWNER, "sql-ddl")
        archive = c.export_batch(EXPORTED, "sql-ddl", tmp_path_factory.mktemp("ref") / "a.zip")
        found["archive"] = _zip_members(archive.path)
    return found


def _zip_members(path) -> dict[str, bytes]:
    with zipfile.ZipFile(path) as zf:
        return {name: zf.read(name) for name in zf.namelist()}


def _read_everything(c: Client) -> dict[str, object]:
    tree = c.read_tree("DWH")
    owner = tree.loc[tree["id"] == TABLE_OWNER].iloc[0]
    mapping_id = tree["mapping_id"].dropna().iloc[0]
    return {
        "tree": tree,
        "structure": c.read_structure(TABLE_OWNER),
        "raw": c.read_raw_data(tree["id"].iloc[-1], flatten=True),
        "object_types": c.read_object_types(),
        "packages": c.read_packages("DWH"),
        "table": c.read_table(owner["table_id"]),
        "columns": c.read_table_columns(owner["table_id"]),
        "mapping": c.read_mapping(mapping_id),
    }


def _in_id_order(tree: pd.DataFrame) -> pd.DataFrame:
    # a nested tree is read in pre-order (documented), a flat one in the payload's order
    return tree.sort_values("id", kind="stable").reset_index(drop=True)


def test_every_loader_reads_what_the_default_dialect_reads(dclient, reference):
    got = _read_everything(dclient)
    for kind, want in reference.items():
        if kind in ("script", "archive"):
            continue
        if kind == "tree":
            got[kind], want = _in_id_order(got[kind]), _in_id_order(want)
        if isinstance(want, pd.DataFrame):
            pd.testing.assert_frame_equal(got[kind], want, obj=kind)
        elif isinstance(want, pd.Series):
            pd.testing.assert_series_equal(got[kind], want, obj=kind)
        else:
            assert got[kind] == want, kind
    # the tree is the largest list: in spring-page it came in pages, all of them read
    assert len(got["tree"]) == 155


def _edited_document(before: dict, rows_key: str, row: int, column: str, value: str) -> dict:
    expected = copy.deepcopy(before)
    expected[rows_key][row][column] = value
    return expected


def _rows_key(document: dict, *candidates: str) -> str:
    return next(k for k in candidates if k in document)


def test_table_write_cycle_changes_exactly_the_edited_cell(dclient, demu, tmp_path):
    table_id = dclient.read_tree("DWH").set_index("id").loc[TABLE_OWNER, "table_id"]
    before = dclient.api.get_table(table_id)
    frame = dclient.read_table(table_id)
    column = next(c for c in frame.columns if isinstance(before["data"][0].get(c), str))
    frame.loc[0, column] = "edited in a dialect"
    preview = dclient.write_table(table_id, frame, dry_run=True)
    assert len(preview.diff.changed) == 1 and preview.diff.added.empty
    result = dclient.write_table(table_id, frame, backup_dir=tmp_path)
    assert result.verified is True and result.backup is not None and result.backup.exists()
    # every other byte of the document is what it was, in the dialect's own spelling
    after = dclient.api.get_table(table_id)
    assert after == _edited_document(before, "data", 0, column, "edited in a dialect")
    with Client.from_emulator(demu) as other:
        assert other.read_table(table_id).loc[0, column] == "edited in a dialect"


def test_mapping_write_cycle_changes_exactly_the_edited_cell(dclient, demu, tmp_path):
    mapping_id = dclient.read_tree("DWH")["mapping_id"].dropna().iloc[0]
    before = dclient.api.get_mapping(mapping_id)
    rows_key = _rows_key(before, "columnMappings", "column_mappings")
    frame = dclient.read_mapping(mapping_id)
    frame.loc[1, "transformation"] = "UPPER(src.first_name)"
    result = dclient.write_mapping(mapping_id, frame, backup_dir=tmp_path)
    assert result.verified is True and len(result.diff.changed) == 1
    after = dclient.api.get_mapping(mapping_id)
    assert after == _edited_document(before, rows_key, 1, "transformation", "UPPER(src.first_name)")
    with Client.from_emulator(demu) as other:
        assert other.read_mapping(mapping_id).loc[1, "transformation"] == "UPPER(src.first_name)"


def test_single_and_batch_exports_match_the_default_dialect(dclient, reference, tmp_path):
    script = dclient.export_script(TABLE_OWNER, "sql-ddl")
    assert (script.file_name, script.text) == (
        reference["script"].file_name,
        reference["script"].text,
    )
    archive = dclient.export_batch(EXPORTED, "sql-ddl", tmp_path / "batch.zip")
    assert archive.task_id is not None  # the asynchronous task, not the legacy fallback
    assert _zip_members(archive.path) == reference["archive"]


def test_package_addition_is_read_back(dclient):
    added = dclient.add_to_package("DWH", EMPTY_PACKAGE, EXPORTED)
    assert added["ok"].all() and not added["already_in_package"].any()
    packages = dclient.read_packages("DWH").set_index("name")
    assert packages.loc[EMPTY_PACKAGE, "n_structures"] == len(EXPORTED)


def test_doctor_names_exactly_the_dialects_differences(dclient, demu):
    report = run_doctor(dclient.api, system="DWH")
    assert set(report["result"]) <= {"ok", "differs"}, report.to_string()
    differs = dict(report.loc[report["result"] != "ok", ["check", "result"]].values)
    assert differs == DIFFERENCES[demu.dialect], report.to_string()
    assert doctor_exit_code(report) == (1 if differs else 0)
    # every difference says what mddframes does about it and which assumption it is
    for _, check in report[report["result"] == "differs"].iterrows():
        assert check["action"] and check["row"], check.to_dict()


def test_doctor_against_the_default_dialect_finds_nothing(client):
    report = run_doctor(client.api, system="DWH")
    assert (report["result"] == "ok").all(), report.to_string()
    assert doctor_exit_code(report) == 0


# -- what the client does where it cannot cope: loud, naming the row ----------------


def _pages(entries: list[int], size: int, *, honour_page: bool = True, drop: int = 0):
    """A page source like Spring Data's; optionally deaf to ``page`` or losing entries."""
    total = len(entries)

    def page(number: int) -> dict:
        n = number if honour_page else 0
        content = entries[n * size : (n + 1) * size]
        pages = -(-total // size)
        return {"content": content, "totalElements": total + drop, "totalPages": pages,
                "number": n, "size": size, "last": n >= pages - 1}  # fmt: skip

    return page(0), lambda number, _size: page(number)


def test_pages_are_followed_to_the_end():
    first, fetch = _pages(list(range(123)), 50)
    assert collect_pages(first, fetch, what="list", row=11, progress=False) == list(range(123))


def test_a_service_deaf_to_the_page_parameter_fails_naming_the_row():
    first, fetch = _pages(list(range(123)), 50, honour_page=False)
    with pytest.raises(DataShapeError, match=r"row 11.*does not read the page/size"):
        collect_pages(first, fetch, what="tree", row=11, progress=False)


def test_a_total_that_does_not_match_fails_instead_of_returning_fewer():
    first, fetch = _pages(list(range(123)), 50, drop=1)
    with pytest.raises(DataShapeError, match=r"row 14.*announced 124 entries but .* held 123"):
        collect_pages(first, fetch, what="object types", row=14, progress=False)


def test_too_many_pages_are_refused_before_fetching():
    first, fetch = _pages(list(range(123)), 5)
    with pytest.raises(DataShapeError, match="bound of 10"):
        collect_pages(first, fetch, what="tree", row=11, progress=False, max_pages=10)


# -- the prefix and the realm: found once per client, reported, or a loud failure ----


@pytest.fixture(scope="module")
def unprefixed():
    with serve(dialect="unprefixed") as emu:
        yield emu


@pytest.fixture(scope="module")
def literal_realm():
    with serve(dialect="literal-realm") as emu:
        yield emu


def _discovery_warnings(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == "mddframes.http.discovery"]


def test_the_prefix_is_found_once_per_client_and_logged(unprefixed, caplog, tmp_path):
    caplog.set_level(logging.INFO, logger="mddframes.http.discovery")
    with Client.from_emulator(unprefixed) as c:
        assert c.api.http.discovery.report()["sync_prefix"] is None  # nothing found yet
        for _ in range(3):
            c.read_object_types()
        archive = c.export_batch(EXPORTED, "sql-ddl", tmp_path / "a.zip")
        assert archive.task_id is not None  # the batch export kept the prefix
        assert c.api.http.discovery.report() == {
            "api_prefix": "/api/mdd-backend",
            "sync_prefix": "",
            "realm": "acme",
            "token_realm": "acme",
        }
    (warning,) = _discovery_warnings(caplog)
    assert "row 2" in warning and "'/api/mdd-backend'" in warning


def test_a_configured_prefix_that_holds_is_not_probed(unprefixed, caplog):
    caplog.set_level(logging.INFO, logger="mddframes.http.discovery")
    with Client.from_emulator(unprefixed, api_prefix="") as c:
        c.read_object_types()
        assert c.api.http.discovery.report()["sync_prefix"] == ""
    assert _discovery_warnings(caplog) == []


def test_the_literal_realm_is_found_and_logged(literal_realm, caplog):
    caplog.set_level(logging.INFO, logger="mddframes.http.discovery")
    with Client.from_emulator(literal_realm) as c:
        c.read_object_types()
        c.read_object_types()
        assert c.api.http.discovery.report()["token_realm"] == "tenat"
        assert c.http.tokens.fetches == 1
    (warning,) = _discovery_warnings(caplog)
    assert "row 4" in warning and "'tenat'" in warning


def test_no_realm_answering_is_an_auth_error_naming_row_4(emulator):
    with Client.from_emulator(emulator, realm="no-such-realm") as c:
        with pytest.raises(AuthError, match=r"knows no token realm 'no-such-realm'") as caught:
            c.read_object_types()
    assert caught.value.status == 404
    assert "Check MDD_REALM" in str(caught.value) and "'tenat'" not in str(caught.value)


@pytest.mark.emulator
def test_a_long_paged_list_is_read_whole_in_few_requests():
    """3,000 elements in pages of 50 by default: the client asks for pages of 1,000."""
    with serve(dialect="spring-page", elements=3000) as emu, Client.from_emulator(emu) as c:
        emu.reset_counters()
        tree = c.read_tree("SCALE")
        assert len(tree) == 3000 and tree["id"].is_unique
        assert tree["depth"].notna().all()  # every parent was read before its children
        # the streamed route's request (a page is no bare list: it steps aside, and is
        # not tried again on this service), the default page, then 3 of 1,000
        assert emu.counters()["getTree"] == 1 + 1 + 3
        assert c.api.paged == {"getTree": 3000}
        emu.reset_counters()
        assert len(c.read_tree("SCALE")) == 3000
        assert emu.counters()["getTree"] == 1 + 3
