"""Combined conditions, tables: 1,000 tables read, one cell of each edited, all written back.

All at once, on one emulator of its own (issue 43's combined-conditions suite, with issue
49's token churn):

- the flaky service of issue 43 (12% 5xx, 5% sporadic 429 with ``Retry-After: 1``, 5%
  dropped connections, 10 ms latency) plus a real token-bucket rate limit (150 req/s,
  burst 30) and 5% of PUT and POST answers lost after the service acted;
- tokens that live 1 s, and every token revoked every 0.5 s;
- the 1,000 tables of a 20,000-element ``SCALE`` system, three of them large (answers
  over 1 MiB, so the streamed read and write routes are taken), read with
  ``read_tables``, one cell of each edited (a text or an int cell), written back with
  ``write_tables``;
- a recording of the whole session (``client.recording``), during which the service
  echoes the client secret in the spellings issue 43 saw reach a recording (its 404
  answers name the id asked for).

It asserts, from the service's own ground truth (direct reads, faults off): nothing lost
(every untouched cell of every table the same, byte for byte), every edit exact, 0
failed rows, no credential on disk in any spelling (the secret and every token the
emulator issued; every file the run wrote, raw and decoded), and a bounded time: the
client's work ends within ``BUDGET`` (480) seconds. The bound of the whole suite: 480 s
here and 90 s in ``test_chaos_elements.py`` of the client's work, and about 20 s of
setting up and checking: about twice what the same work takes with every condition (76 s
here plain, 25-30 s there; with every condition 91 s and 44 s at load 15-20, and 123 s
here on a quiet machine on 2026-11-29), so CI's other tests beside it do not fail it: it
starts with the other slow files (the documented install, Spark, the browser, the
history's LibreOffice round trip), and took 223 s there on 2026-11-29, where 180 s had
been its bound; later that day, with every test of CI taking about twice its time of the
day before, it overran 300 s (0.5 s revocations beside round trips stretched past them). A pace that collapses (33x a plain retry loop before issue 43) still
fails it. Faults are seeded;
the threads make timing vary, and no assertion depends on timing but the bound. Every
check runs; the failure lists all that broke.
"""

from __future__ import annotations

import copy
import json
import random
import traceback
from pathlib import Path
from typing import Any

import pytest
from chaos_world import (
    REVOKE_EVERY,
    SECRET,
    TOKEN_TTL,
    Bounded,
    IssuedTokens,
    Problems,
    Service,
    exact,
    first_difference,
    inject_all,
    private_temp_dir,
    spellings,
    step,
)
from secret_search import CredentialSearch

from mddframes import Client
from mddframes.emulator import serve
from mddframes.emulator.scale import big_table
from mddframes.errors import MddError

pytestmark = [
    pytest.mark.chaos,
    pytest.mark.emulator,
    pytest.mark.slow,
    pytest.mark.pandas_once,
    pytest.mark.timeout(900),
]  # the work's own bound (BUDGET) says what went wrong first

ELEMENTS = 20_000  # a table for about one element in 20: 1,000 tables
TABLES = 1_000
LARGE_ROWS = 4_500  # about 1.2 MB of JSON each: above the 1 MiB of the streamed routes
LARGE_AT = (99, 499, 899)  # which of the tables are made large
BUDGET = 480.0  # seconds for the client's work (reads, edits, writes, recording)
SEED = 4349


def _install_large_tables(truth: Service, table_ids: list[str]) -> list[str]:
    large = [table_ids[i] for i in LARGE_AT]
    for table_id in large:
        owner = truth.get(f"/api/table/{table_id}")["structureId"]
        truth.put_table(table_id, big_table(table_id, LARGE_ROWS, 12, structure_id=owner))
        size = len(truth.raw("GET", f"/api/table/{table_id}"))
        assert size > 1 << 20, f"{table_id}: a {size}-byte answer takes no streamed route"
    return large


def _choose_edits(before: dict[str, Any]) -> dict[str, tuple[int, str, Any]]:
    """One cell per table, seeded: (row position, column, new value); a text cell or an
    int cell (the int grows, so it must come back an int)."""
    rng = random.Random(SEED)
    edits = {}
    for number, table_id in enumerate(sorted(before)):
        rows = before[table_id]["data"]
        position = rng.randrange(len(rows))
        old = rows[position].get("quantity")
        if number % 2 and isinstance(old, int) and not isinstance(old, bool):
            edits[table_id] = (position, "quantity", old + 1_000_003)
        else:
            edits[table_id] = (position, "code", f"chaos-{number:04d}")
    return edits


def _expected(before: dict[str, Any], edits: dict[str, tuple[int, str, Any]]) -> dict[str, Any]:
    expected = {}
    for table_id, document in before.items():
        position, column, value = edits[table_id]
        edited = copy.deepcopy(document)
        edited["data"][position][column] = value
        expected[table_id] = edited
    return expected


def _echo_probes(client: Client) -> None:
    """The service echoes what it is asked for: a 404 naming the id, spelled oddly."""
    for spelled in spellings(SECRET).values():
        try:
            client.read_structure(spelled)
        except MddError:
            pass  # a 404 naming it, as expected (or a fault the client gave up on)


def test_a_thousand_tables_read_edited_and_written_back_under_every_condition(
    tmp_path: Path,
) -> None:
    problems = Problems()
    run = tmp_path / "run"  # every file the client writes goes below this folder
    outcome: dict[str, Any] = {}
    with serve(elements=ELEMENTS, client_secret=SECRET) as emu, IssuedTokens(emu) as issued:
        truth = Service(emu)
        table_ids = [e["tableId"] for e in truth.tree("SCALE") if e.get("tableId")]
        assert len(table_ids) == TABLES
        large = _install_large_tables(truth, table_ids)
        before = truth.objects("table", table_ids)
        truth.close()
        edits = _choose_edits(before)
        client = Client.from_emulator(
            emu, backup_dir=str(run / "backups"), lock_dir=str(run / "locks")
        )

        def work() -> None:
            raised = outcome["raised"] = {}
            with client.recording(run / "session.har"):
                _echo_probes(client)
                tree = step(raised, "read_tree", lambda: client.read_tree("SCALE"))
                if tree is None:
                    return
                ids = outcome["ids"] = tree["table_id"].dropna().tolist()
                long = step(
                    raised, "read_tables",
                    lambda: client.read_tables(ids, errors="skip", progress=False),
                )  # fmt: skip
                if long is None:
                    return
                outcome["read_failures"] = list(long.attrs.get("failures") or [])
                labels = {
                    (table_id, int(row)): label
                    for label, table_id, row in zip(
                        long.index, long["table_id"], long["row"], strict=True
                    )
                }
                for table_id, (position, column, value) in edits.items():
                    label = labels.get((table_id, position))
                    if label is not None:
                        long.at[label, column] = value
                outcome["written"] = step(
                    raised, "write_tables", lambda: client.write_tables(long, progress=False)
                )

        emu.set_token_ttl(TOKEN_TTL)
        inject_all(emu, SEED)
        bounded = Bounded(BUDGET, grace=15.0)
        with private_temp_dir(run / "tmp"), emu.churn_tokens(REVOKE_EVERY) as revocations:
            bounded.run(work, client.close)
        emu.clear_faults()
        emu.set_token_ttl(300)
        faulted = sum(emu.fault_counters().values())
        sent = sum(emu.counters().values())
        repeats_after_401 = client.http.unauthorized_repeats
        client.close()
        truth = Service(emu)
        after = truth.objects("table", table_ids)
        truth.close()
        tokens = list(issued.tokens)

    print(
        f"chaos tables: {bounded.elapsed:.1f} s of work (budget {BUDGET} s), {sent} requests, "
        f"{faulted} answered by a fault, {len(tokens)} tokens issued, {len(revocations)} "
        f"revocations, {repeats_after_401} repeats after a 401"
    )
    # the conditions were there (else every check below would pass for nothing)
    assert faulted > 0 and len(revocations) >= 5 and len(tokens) >= 2, (
        "the conditions did not apply"
    )

    # bounded time, and no error out of the client
    for name, error in (outcome.get("raised") or {}).items():
        problems.check(False, f"{name} raised {error}")
    problems.check(not bounded.overran, f"the work did not end within {BUDGET} s (client closed)")
    problems.check(not bounded.stuck, "the work did not stop within 15 s of the client's close")
    problems.check(
        bounded.failure is None,
        lambda: (
            ("after the close, " if bounded.overran else "")
            + "the work raised: "
            + "".join(traceback.format_exception_only(bounded.failure)).strip()[:600]
        ),
    )

    # every table seen and read, 0 failed rows
    problems.check(
        sorted(outcome.get("ids") or []) == sorted(table_ids),
        lambda: f"read_tree listed {len(outcome.get('ids') or [])} of {TABLES} tables",
    )
    failures = outcome.get("read_failures") or []
    problems.check(
        not failures,
        lambda: (
            f"read_tables: {len(failures)} failed, e.g. "
            + "; ".join(
                f"{f['id']}: {f['error_type']} {str(f['message'])[:160]}" for f in failures[:3]
            )
        ),
    )
    written = outcome.get("written")
    if written is not None:
        status = written["status"].value_counts().to_dict()
        problems.check(
            status == {"written": TABLES} and bool(written["verified"].all()),
            lambda: (
                f"write_tables: {status}; e.g. "
                + "; ".join(
                    f"{r.table_id}: {str(r.error)[:160]}"
                    for r in written[written["status"] != "written"].head(3).itertuples()
                )
            ),
        )

    # nothing lost, every edit exact (per table, from the service's own answers)
    expected = _expected(before, edits)
    missing, damaged = [], []
    for table_id in table_ids:
        if exact(after[table_id]) == exact(expected[table_id]):
            continue
        if exact(after[table_id]) == exact(before[table_id]):
            missing.append(table_id)
        else:
            damaged.append(f"{table_id}: {first_difference(expected[table_id], after[table_id])}")
    problems.check(
        not missing,
        lambda: f"{len(missing)} of {TABLES} edits not on the service (e.g. {missing[:3]})",
    )
    problems.check(
        not damaged,
        lambda: f"{len(damaged)} tables changed otherwise than edited: " + "; ".join(damaged[:3]),
    )
    problems.check(
        all(exact(after[t]) == exact(expected[t]) for t in large),
        "a large table (streamed route) does not hold exactly its edit",
    )

    # no credential on disk, in any spelling
    har = run / "session.har"
    problems.check(har.is_file(), "no recording was written")
    if har.is_file():
        entries = json.loads(har.read_bytes())["log"]["entries"]
        problems.check(
            len(entries) >= TABLES, f"the recording holds {len(entries)} calls, not the session"
        )
    search = CredentialSearch({"the client secret": SECRET} | {
        f"access token #{n}": token for n, token in enumerate(tokens, 1)
    })  # fmt: skip
    files = sorted(p for p in run.rglob("*") if p.is_file())
    found = search.search_files(files, run)
    problems.check(
        not found,
        lambda: f"credentials on disk in {len(found)} file(s): " + "; ".join(map(str, found[:5])),
    )

    assert not problems.items, "the combined conditions broke:\n" + problems.report()
