"""Progress bars: shown when asked (``progress=True``), hidden when not, and by default
only on a terminal or in Jupyter: a script whose stderr is a file gets no bar lines."""

from __future__ import annotations

import pytest

from mddframes.progress import progress_shown

IDS = ["tbl-0109", "tbl-0001"]


@pytest.mark.parametrize(("progress", "shown"), [(True, True), (False, False), (None, False)])
def test_a_bulk_read_shows_a_bar_only_when_asked_or_watched(client, capsys, progress, shown):
    client.read_tables(IDS, progress=progress)
    err = capsys.readouterr().err
    assert ("|" in err) is shown, err  # tqdm's bar: "read ...: 100%|####| 2/2"


def test_the_default_follows_the_terminal(monkeypatch):
    class Terminal:
        def isatty(self) -> bool:
            return True

    assert progress_shown(True) and not progress_shown(False)
    monkeypatch.setattr("sys.stderr", Terminal())
    assert progress_shown(None)
