"""The streamed write of a large table gives what the whole-document write gives.

Each test edits a frame of a large table read from the emulator (a streamed read, so
its context keeps the document and the frame's fingerprint) and compares the streamed
strategy of the write engine (:class:`~mddframes.writing.documents.EncodedDocument`) with
the parsed one (``prepare_edit(..., stream=False)``): the same payload (key order
included), the same diff and the same report, line for line. Batches are made small
(``BATCH_BYTES``, ``BLOCK_ROWS``) so that a table of a few thousand rows has many.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import hashlib
import json

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mddframes.codec import fingerprint as fingerprint_module
from mddframes.codec import splitter
from mddframes.codec.kept import KeptJson
from mddframes.codec.streamed_overlay import OVERLAY_BATCH_SHARE
from mddframes.emulator.scale import big_table
from mddframes.errors import (
    ConcurrentModificationError,
    IncompletePayloadError,
    WriteVerificationError,
)
from mddframes.writing.changes import prepare_edit
from mddframes.writing.documents import EncodedDocument
from mddframes.writing.engine import gate, send, take_backup

ROWS = 6_000  # about 1.6 MB of JSON: a streamed read


@pytest.fixture
def small_batches(monkeypatch):
    monkeypatch.setattr(splitter, "BATCH_BYTES", 48 << 10)  # about 30 batches
    monkeypatch.setattr(fingerprint_module, "BLOCK_ROWS", 256)


def write_table_streamed(api, table_id, frame, *, dry_run=False, allow_deletes=False,
                         backup_dir=None):  # fmt: skip
    """The engine's write of ``frame`` when it takes the streamed strategy, else None
    (nothing sent)."""
    change = prepare_edit(api, "table", table_id, frame, allow_deletes=allow_deletes)
    if not isinstance(change.new, EncodedDocument):
        return None
    gated = gate(change, dry_run=dry_run)
    if gated is not None:
        return gated
    return send(api, change, backup=take_backup(api, change, backup_dir))


def _prepare(api, kind, object_id, frame, **options):
    """The parsed strategy's change, with its payload."""
    change = prepare_edit(api, kind, object_id, frame, stream=False, **options)
    change.payload = change.new.payload()
    return change


@pytest.fixture
def large(client, small_batches):
    """A large table on the emulator, its frame read (streamed) and the payload."""
    table_id = client.read_tree("DWH")["table_id"].dropna().iloc[0]
    payload = big_table(table_id, n_rows=ROWS, n_cols=12)
    payload["data"][3]["external_ref"] = 2**64 + 1  # beyond int64
    payload["data"][5]["note"] = "caf\u00e9 \U0001f600"
    for position in range(40, ROWS, 37):  # a column the metadata does not declare
        payload["data"][position]["legacy"] = position
    client.api.put_table(table_id, payload)
    frame = client.read_table(table_id)
    assert frame.attrs["mddframes"].fingerprint is not None
    return table_id, frame, client.api.get_table(table_id)


@pytest.fixture
def unlaid(large):
    """The large table read, its kept document without the layout the read recorded:
    the first write cuts it with the splitter, proving and parsing every batch."""
    table_id, frame, payload = large
    context = frame.attrs["mddframes"]
    object.__setattr__(context, "_kept", dataclasses.replace(context.kept, layout=None))
    assert frame.attrs["mddframes"].kept.layout is None
    return table_id, frame, payload


def both_paths(client, table_id, frame, **options):
    """(streamed outcome, whole-document outcome): each a payload, diff and report, or
    the report of the refusal."""
    try:
        streamed = write_table_streamed(client.api, table_id, frame, dry_run=True, **options)
    except IncompletePayloadError as refused:
        streamed_outcome = ("refused", refused.report.frame)
    else:
        assert streamed is not None, "the streamed path declined"
        streamed_outcome = (streamed.payload, streamed.diff, streamed.report.frame)
    prepared = _prepare(client.api, "table", table_id, frame, **options)
    if not prepared.report.ok:
        whole_outcome = ("refused", prepared.report.frame)
    else:
        whole_outcome = (prepared.payload, prepared.diff, prepared.report.frame)
    return streamed_outcome, whole_outcome


def assert_same(streamed, whole):
    assert len(streamed) == len(whole)
    if streamed[0] == "refused":
        assert whole[0] == "refused"
        pd.testing.assert_frame_equal(streamed[1], whole[1])
        return
    payload, diff, report = streamed
    # same values, same types, same key order
    assert json.dumps(payload) == json.dumps(whole[0])
    pd.testing.assert_frame_equal(diff.changed, whole[1].changed)
    assert diff.empty == whole[1].empty and diff.summary == whole[1].summary
    pd.testing.assert_frame_equal(report, whole[2])


def test_one_cell_edit_is_the_whole_documents_edit(client, large):
    table_id, frame, _ = large
    frame.at[4321, "name"] = "edited"
    assert_same(*both_paths(client, table_id, frame))


@pytest.mark.parametrize("by_content", [False, True], ids=["digested", "compared-by-content"])
def test_keys_a_row_lacked_are_added_in_the_frames_order(client, large, by_content):
    # a batch is overlaid on the columns its fingerprint names only: two keys a row did
    # not have come in the frame's column order, as the whole document's overlay adds them
    # (also when the first is a column compared by content, named after the digested ones)
    table_id, frame, payload = large
    for row in payload["data"][4000:4003]:
        del row["note"], row["quantity"]
    client.api.put_table(table_id, payload)
    frame = client.read_table(table_id)
    if by_content:
        context = frame.attrs["mddframes"]
        digests = {**context.fingerprint.digests, "quantity": None}
        object.__setattr__(
            context, "_fingerprint", dataclasses.replace(context.fingerprint, digests=digests)
        )
    frame.at[4001, "note"] = "added"
    frame.at[4001, "quantity"] = 7
    streamed, whole = both_paths(client, table_id, frame)
    assert_same(streamed, whole)
    added = [name for name in streamed[0]["data"][4001] if name in ("note", "quantity")]
    assert added == [name for name in frame.columns if name in ("note", "quantity")]


def test_two_values_trading_places_in_one_block_are_both_written(client, large):
    # a plain sum of the block's hashes cannot see a swap: the weights per row can
    table_id, frame, _ = large
    active = frame["active"].iloc[:1024]
    first_true = int(active[active == True].index[0])  # noqa: E712 (a boolean column)
    first_false = int(active[active == False].index[0])  # noqa: E712
    frame.at[first_true, "active"] = False
    frame.at[first_false, "active"] = True
    streamed, whole = both_paths(client, table_id, frame)
    assert_same(streamed, whole)
    assert len(streamed[1].changed) == 2


EDITS = {
    "code": st.text(min_size=1, max_size=8),
    "name": st.one_of(st.none(), st.text(max_size=12)),
    "ratio": st.one_of(st.none(), st.floats(allow_nan=False, allow_infinity=False, width=32)),
    "active": st.booleans(),
    "quantity": st.one_of(st.none(), st.integers(-(2**40), 2**40)),
    "id": st.integers(0, ROWS + 10),
    "note": st.one_of(st.none(), st.text(max_size=12)),
    "attributes": st.one_of(
        st.none(),
        st.dictionaries(st.text(max_size=3), st.integers(0, 9), max_size=2),
        st.text(max_size=3),  # a string where an object was: type drift, refused
    ),
    # within datetime64[ns] (1677-2262): pandas 2.2 keeps dates in nanoseconds
    "valid_from": st.one_of(
        st.none(),
        st.datetimes(dt.datetime(1678, 1, 1), dt.datetime(2262, 1, 1)).map(
            lambda d: pd.Timestamp(d).floor("D")
        ),
    ),  # fmt: skip
}


# up to 6 cells edited: (row, column, the draw of the column's new value)
RANDOM_EDITS = st.lists(
    st.tuples(st.integers(0, ROWS - 1), st.sampled_from(sorted(EDITS)), st.data()),
    min_size=0,
    max_size=6,
)


def test_a_read_by_the_native_engine_keeps_the_documents_layout(large):
    # the first write cuts the kept document where the read did, and parts a batch that
    # may hold an edit into overlay-sized ones (random edits below go through both)
    _, frame, payload = large
    context = frame.attrs["mddframes"]
    assert context.route == "arrow"
    layout = context.kept.layout
    assert layout is not None and layout.fits(context.kept.size, len(payload["data"]))
    assert max(layout.batch_bytes) > 2 * splitter.BATCH_BYTES // OVERLAY_BATCH_SHARE
    ids = [row["id"] for row in payload["data"]]
    assert layout.key_hashes is not None and layout.key_hashes.tolist() == list(map(hash, ids))


@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
@given(edits=RANDOM_EDITS)
def test_random_cell_edits_give_the_whole_documents_outcome(client, large, edits):
    assert_edits_give_the_whole_documents_outcome(client, large, edits)


@settings(max_examples=10, deadline=None, suppress_health_check=list(HealthCheck))
@given(edits=RANDOM_EDITS)
def test_random_cell_edits_cut_by_the_splitter_give_the_whole_documents_outcome(
    client, unlaid, edits
):
    assert_edits_give_the_whole_documents_outcome(client, unlaid, edits)


def assert_edits_give_the_whole_documents_outcome(client, read_table, edits) -> None:
    """``edits`` (row, column, data) drawn into a copy of the read frame: the streamed
    and the whole-document writes give the same payload, diff and report."""
    table_id, read, _ = read_table
    frame = read.copy()
    for row, column, data in edits:
        value = data.draw(EDITS[column])
        frame.at[row, column] = pd.NA if value is None and column != "attributes" else value
    assert_same(*both_paths(client, table_id, frame))


def test_a_dict_mutated_in_place_is_found(client, large):
    table_id, frame, payload = large
    row = next(i for i, r in enumerate(payload["data"]) if isinstance(r.get("attributes"), dict))
    frame.at[row, "attributes"]["added"] = 1  # the frame's own dict, mutated in place
    streamed, whole = both_paths(client, table_id, frame)
    assert_same(streamed, whole)
    assert streamed[1].changed["column"].tolist() == ["attributes"]


def test_a_duplicate_primary_key_is_refused_and_named_as_whole_check_names_it(client, large):
    table_id, frame, _ = large
    frame.at[4000, "id"] = frame.at[17, "id"]
    frame.at[4001, "name"] = "unrelated edit"
    streamed, whole = both_paths(client, table_id, frame)
    assert streamed[0] == "refused"
    assert_same(streamed, whole)
    assert "same key as row 17" in streamed[1]["old"].tolist()


@pytest.mark.parametrize("cut_by", ["large", "laid_out"])
def test_a_duplicate_of_a_key_in_a_batch_never_parsed_is_refused(client, request, cut_by):
    # row 5800's batch holds no edit: the write never parses it, and knows its key only
    # by the hash in the layout (the read's for a first write, a write's after one)
    table_id, frame, _ = request.getfixturevalue(cut_by)
    frame.at[1200, "id"] = frame.at[5800, "id"]
    streamed, whole = both_paths(client, table_id, frame)
    assert streamed[0] == "refused"
    assert_same(streamed, whole)
    assert "same key as row 5800" in streamed[1]["old"].tolist()


def test_a_null_in_a_non_nullable_column_warns_as_the_whole_check(client, large):
    table_id, frame, _ = large
    frame.at[10, "code"] = pd.NA
    frame.at[5000, "code"] = pd.NA
    frame.at[20, "changed_at"] = pd.NaT
    streamed, whole = both_paths(client, table_id, frame)
    assert_same(streamed, whole)
    assert len(streamed[2]) >= 3


def test_a_written_table_reads_back_and_writes_again_streamed(client, large, tmp_path):
    table_id, frame, payload = large
    frame.at[100, "note"] = "first"
    first = write_table_streamed(client.api, table_id, frame, backup_dir=tmp_path)
    assert first is not None and first.status == "written" and first.verified
    assert json.loads(first.backup.read_text())["payload"] == payload
    held = client.api.get_table(table_id)
    assert held["data"][100]["note"] == "first" and first.payload == held
    expected = json.dumps({**payload, "data": [*payload["data"][:100], held["data"][100],
                                               *payload["data"][101:]]})  # fmt: skip
    assert json.dumps(held) == expected  # every other row exactly as it was

    frame.at[5999, "quantity"] = 7  # the context the write recorded: streamed again
    second = write_table_streamed(client.api, table_id, frame, backup_dir=tmp_path)
    assert second is not None and second.status == "written"
    assert client.api.get_table(table_id)["data"][5999]["quantity"] == 7
    assert json.loads(second.backup.read_text())["payload"] == held


def test_an_unchanged_frame_sends_nothing(client, emu, large, tmp_path):
    table_id, frame, _ = large
    emu.reset_counters()
    result = write_table_streamed(client.api, table_id, frame, backup_dir=tmp_path)
    assert result is not None and result.status == "unchanged" and result.diff.empty
    assert emu.counters().get("tableUpdate", 0) == 0 and not list(tmp_path.iterdir())


@pytest.mark.parametrize(
    "change",
    [
        lambda f: f.drop(index=[10]),
        lambda f: pd.concat([f, f.iloc[[0]].set_axis([ROWS])]),
        lambda f: f.drop(columns=["note"]),
        lambda f: f.assign(extra=1),
        lambda f: f.iloc[::-1],
    ],
    ids=["row deleted", "row added", "column dropped", "column added", "rows reordered"],
)
def test_rows_or_columns_changed_take_the_whole_document_path(client, emu, large, change):
    table_id, frame, _ = large
    emu.reset_counters()
    assert write_table_streamed(client.api, table_id, change(frame)) is None
    assert emu.counters().get("tableUpdate", 0) == 0


def test_a_change_on_the_service_takes_the_whole_document_path(client, emu, large, tmp_path):
    table_id, frame, _ = large
    emu.touch_table(table_id)
    frame.at[1, "note"] = "mine"
    emu.reset_counters()
    with pytest.raises(ConcurrentModificationError):  # reported by the parsed strategy
        write_table_streamed(client.api, table_id, frame, backup_dir=tmp_path)
    assert emu.counters().get("getTable") == 1  # one GET: the fallback reuses it
    assert emu.counters().get("tableUpdate", 0) == 0
    with pytest.raises(ConcurrentModificationError):
        client.write_table(table_id, frame, backup_dir=tmp_path)


def test_write_table_takes_the_streamed_path_and_its_result_holds_the_payload(
    client, emu, large, tmp_path
):
    table_id, frame, _ = large
    frame.at[42, "name"] = "through the client"
    emu.reset_counters()
    result = client.write_table(table_id, frame, backup_dir=tmp_path)
    # streamed: GET (compare), PUT, GET (read back); the whole path would GET the same
    assert emu.counters().get("tableUpdate") == 1 and result.verified
    assert result.payload == client.api.get_table(table_id)
    assert frame.attrs["mddframes"].fingerprint is not None


def test_type_drift_is_refused_as_the_whole_check_refuses_it(client, large):
    table_id, frame, payload = large
    rows = [i for i, r in enumerate(payload["data"]) if isinstance(r.get("attributes"), dict)]
    frame.at[rows[0], "attributes"] = "was an object"
    frame.at[rows[-1], "attributes"] = 12
    streamed, whole = both_paths(client, table_id, frame)
    assert streamed[0] == "refused"
    assert_same(streamed, whole)
    errors = streamed[1][streamed[1]["level"] == "error"]
    assert errors["row"].tolist() == [rows[0], rows[-1]]


def test_undeclared_columns_warn_as_the_whole_check_warns(client, large):
    table_id, frame, _ = large
    frame.at[77, "legacy"] = 1  # a row that has the key
    frame.at[3000, "name"] = "x"
    streamed, whole = both_paths(client, table_id, frame)
    assert_same(streamed, whole)
    assert "legacy" in streamed[2]["column"].tolist()


def test_an_undeclared_key_added_to_a_row_takes_the_whole_document_path(client, large):
    table_id, frame, _ = large
    frame.at[0, "legacy"] = 5  # row 0 has no "legacy" key: the warnings' order may change
    assert write_table_streamed(client.api, table_id, frame, dry_run=True) is None
    assert _prepare(client.api, "table", table_id, frame).payload["data"][0]["legacy"] == 5


def test_a_table_read_back_in_other_bytes_is_verified_by_content(client, large, tmp_path):
    table_id, frame, _ = large
    # orjson writes 1e16 as "1e16", the emulator serialises it as "1e+16": other bytes,
    # the same content
    frame.at[12, "ratio"] = 1e16
    result = write_table_streamed(client.api, table_id, frame, backup_dir=tmp_path)
    assert result is not None and result.verified
    assert client.api.get_table(table_id)["data"][12]["ratio"] == 1e16
    # the next write starts from the bytes the service holds, not from those it was sent
    assert frame.attrs["mddframes"].kept.content() == _served_bytes(client, table_id)


def test_a_streamed_writes_context_keeps_the_bytes_the_service_holds(client, large, tmp_path):
    table_id, frame, _ = large
    frame.at[20, "name"] = "kept for the next write"
    assert client.write_table(table_id, frame, backup_dir=tmp_path).route == "streamed"
    kept = frame.attrs["mddframes"].kept
    served = _served_bytes(client, table_id)
    assert kept.content() == served and kept.sha256 == hashlib.sha256(served).hexdigest()
    frame.at[21, "name"] = "and written again from them"
    again = client.write_table(table_id, frame, backup_dir=tmp_path)
    assert again.route == "streamed" and len(again.diff.changed) == 1


def _served_bytes(client, table_id):
    with client.api.get_table_stream(table_id) as body:
        return b"".join(body.chunks())


def test_a_table_that_reads_back_different_is_named(client, large, tmp_path, changed_after_put):
    table_id, frame, _ = large
    frame.at[12, "note"] = "mine"
    with pytest.raises(WriteVerificationError, match="reads back different") as caught:
        write_table_streamed(client.api, table_id, frame, backup_dir=tmp_path)
    assert str(tmp_path) in str(caught.value)


def test_write_tables_streams_a_large_tables_cell_edits(client, large, tmp_path):
    table_id, _frame, payload = large
    long = client.read_tables([table_id, "tbl-0109"], progress=False)
    rows = (long["table_id"] == table_id).to_numpy()
    first = long["row"][rows].iloc[7]
    long.loc[rows & (long["row"] == first).to_numpy(), "name"] = "in a batch"
    written = client.write_tables(long, backup_dir=tmp_path, progress=False)
    result = written.attrs["results"][table_id]
    assert result.verified and len(result.diff.changed) == 1
    # the streamed strategy keeps the read-back as the bytes received, never parsed
    assert isinstance(result._payload, KeptJson)
    held = client.api.get_table(table_id)
    assert held["data"][7]["name"] == "in a batch"
    assert held["data"][:7] == payload["data"][:7] and held["data"][8:] == payload["data"][8:]
    # and its backup is the bytes the write received
    assert json.loads(result.backup.read_text())["payload"] == payload


@pytest.fixture
def written(client, large, tmp_path):
    """The large table after one streamed write: its context keeps the new document (the
    next write streams from it)."""
    table_id, frame, _ = large
    frame.at[3000, "name"] = "written once"  # (rows 3 and 5 read back in other bytes)
    assert client.write_table(table_id, frame, backup_dir=tmp_path).status == "written"
    assert frame.attrs["mddframes"].kept is not None
    return table_id, frame, client.api.get_table(table_id)


@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
@given(edits=RANDOM_EDITS)
def test_random_cell_edits_after_a_write_give_the_whole_documents_outcome(client, written, edits):
    assert_edits_give_the_whole_documents_outcome(client, written, edits)


def test_a_streamed_writes_body_sent_in_pieces_is_recorded_whole(client, large, tmp_path):
    table_id, frame, _ = large
    frame.at[30, "name"] = "recorded"
    har = tmp_path / "write.har"
    with client.recording(har):
        result = client.write_table(table_id, frame, backup_dir=tmp_path)
    assert result.route == "streamed"
    entries = json.loads(har.read_text("utf-8"))["log"]["entries"]
    (put,) = [e["request"] for e in entries if e["_operation"] == "tableUpdate"]
    sent = put["postData"]["text"].encode("utf-8")
    assert put["bodySize"] == len(sent)  # (the service answers rows 3 and 5 in other bytes)
    assert json.loads(sent) == client.api.get_table(table_id)


@pytest.fixture
def laid_out(client, written, tmp_path):
    """The large table after a second streamed write whose read-back holds the very bytes
    sent: its context keeps them with their layout, and the next write cuts them there
    (parsing only the batches the fingerprint points at)."""
    table_id, frame, _ = written
    frame.at[4500, "name"] = "written twice"
    assert client.write_table(table_id, frame, backup_dir=tmp_path).status == "written"
    kept = frame.attrs["mddframes"].kept
    assert kept.layout is not None and kept.layout.fits(kept.size, len(frame))
    assert len(kept.layout.batch_rows) > 10  # many batches, most of them never parsed
    return table_id, frame, client.api.get_table(table_id)


@settings(max_examples=15, deadline=None, suppress_health_check=list(HealthCheck))
@given(edits=RANDOM_EDITS)
def test_random_cell_edits_cut_by_the_layout_give_the_whole_documents_outcome(
    client, laid_out, edits
):
    assert_edits_give_the_whole_documents_outcome(client, laid_out, edits)


def test_a_layout_of_another_process_is_not_used(client, laid_out, monkeypatch):
    # its key hashes are Python's hash of another process: the write cuts and parses
    # every batch again (the splitter), and its outcome is the whole document's
    table_id, frame, _ = laid_out
    context = frame.attrs["mddframes"]
    layout = context.kept.layout
    object.__setattr__(layout, "process", b"another process")
    assert not layout.fits(context.kept.size, len(frame))
    cut_calls = []
    monkeypatch.setattr("mddframes.codec.streamed_overlay.cut", lambda *a: cut_calls.append(a))
    frame.at[1300, "id"] = frame.at[5900, "id"]
    streamed, whole = both_paths(client, table_id, frame)
    assert cut_calls == [] and streamed[0] == "refused"
    assert_same(streamed, whole)


def test_a_document_that_does_not_divide_as_its_layout_takes_the_whole_path(client, laid_out):
    # a layout is made with its document and never lies; if one did (a batch a byte
    # short, the next a byte long), the write declines the streamed strategy
    table_id, frame, _ = laid_out
    context = frame.attrs["mddframes"]
    layout = context.kept.layout
    sizes = list(layout.batch_bytes)
    sizes[3], sizes[4] = sizes[3] - 1, sizes[4] + 1
    object.__setattr__(layout, "batch_bytes", tuple(sizes))
    frame.at[10, "name"] = "edited"
    change = prepare_edit(client.api, "table", table_id, frame)
    assert change.route.route == "parsed" and "layout" in change.route.reason
    assert change.new.payload()["data"][10]["name"] == "edited"
