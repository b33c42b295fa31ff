"""A PUT that never left (the service stopped: connection refused) says nothing was sent,
and no read is made to settle whether it landed (there is nothing to settle)."""

from __future__ import annotations

from contextlib import ExitStack

import pytest

from mddframes import Client
from mddframes.emulator import serve
from mddframes.errors import ConcurrentModificationError, TransportError


@pytest.mark.emulator
@pytest.mark.parametrize("dialect", ["default", "etag"])
def test_a_write_to_a_stopped_service_says_nothing_was_sent_and_reads_nothing(
    dialect, tmp_path, monkeypatch
):
    running = ExitStack()
    emu = running.enter_context(serve(dialect=dialect))
    try:
        client = Client.from_emulator(emu, max_retries=1)
        tree = client.read_tree("DWH")
        table_id = str(tree["table_id"].dropna().iloc[0])
        frame = client.read_table(table_id)
        column = next(c for c in frame.columns if frame[c].dtype == "string")
        frame.loc[frame.index[0], column] = "never sent"
        real_put = client.api.put_table
        reads_after_stop: list[str] = []

        def stop_then_put(*args, **kwargs):
            running.close()  # the service stops between the last check and the PUT
            for name in ("get_table", "get_table_stream", "get_mapping_with_etag"):
                real = getattr(client.api, name)

                def counted(*a, _real=real, _name=name, **k):
                    reads_after_stop.append(_name)
                    return _real(*a, **k)

                monkeypatch.setattr(client.api, name, counted)
            return real_put(*args, **kwargs)

        monkeypatch.setattr(client.api, "put_table", stop_then_put)
        with pytest.raises(TransportError) as caught:
            client.write_table(table_id, frame, backup_dir=tmp_path)
        error = caught.value
        assert error.may_have_been_sent is False
        assert not isinstance(error, ConcurrentModificationError)
        message = str(error)
        assert "nothing was sent" in message, message
        assert "conflict" not in message and "landed" not in message, message
        assert error.operation == "tableUpdate"
        assert reads_after_stop == []  # no "did it land?" read
    finally:
        running.close()


def test_an_answer_dropped_after_sending_may_have_been_sent(client, emu):
    # the contrast: a connection dropped once the request went out is not "nothing sent"
    emu.inject_faults(drop_rate=1.0, operations=["deployStructure"])
    with pytest.raises(TransportError) as caught:
        client.api.deploy_structure("dwh-0001", "dep-dropped")
    assert caught.value.may_have_been_sent is True
    assert "nothing was sent" not in str(caught.value)
