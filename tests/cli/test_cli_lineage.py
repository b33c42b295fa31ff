"""``mddframes lineage`` and ``mddframes search`` against the emulator's FLOW system."""

from __future__ import annotations

import io
import json

import pandas as pd
import pytest

from mddframes.cli import EXIT_ERROR, EXIT_USAGE, main


@pytest.fixture
def env(emu, monkeypatch, tmp_path):
    """MDD_* variables for the emulator, and no profile file of the developer's."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setenv("HOME", str(tmp_path))
    for name, value in (
        ("MDD_TENANT", emu.tenant),
        ("MDD_BASE_URL", emu.base_url),
        ("MDD_REALM", emu.realm),
        ("MDD_API_PREFIX", emu.api_prefix),
        ("MDD_CLIENT_ID", emu.client_id),
        ("MDD_CLIENT_SECRET", emu.client_secret),
    ):
        monkeypatch.setenv(name, value)
    return emu


def _csv(text: str) -> pd.DataFrame:
    return pd.read_csv(io.StringIO(text), dtype=str, keep_default_na=False)


def test_lineage_upstream_is_the_default_and_prints_csv(env, capsys):
    assert main(["lineage", "FLOW", "customer_value"]) == 0
    frame = _csv(capsys.readouterr().out)
    assert sorted(frame["element_name"]) == [
        "sales_by_customer",
        "shop_orders",
        "shop_returns",
        "stg_sales",
    ]
    assert main(["lineage", "FLOW", "flow-08", "--upstream", "--depth", "1"]) == 0
    assert _csv(capsys.readouterr().out)["element_id"].tolist() == ["flow-06"]


def test_lineage_impact_of_a_column_as_json(env, capsys):
    assert main(["lineage", "FLOW", "flow-02.amount", "--impact", "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    band = next(r for r in rows if r["column"] == "value_band")
    assert band["depth"] == 3 and band["transformations"].startswith("-src.amount -> SUM(")


def test_lineage_downstream_as_dot_and_mermaid(env, capsys, tmp_path):
    assert main(["lineage", "FLOW", "flow-04", "--downstream", "--format", "dot"]) == 0
    dot = capsys.readouterr().out
    assert dot.startswith('digraph "lineage" {') and dot.rstrip().endswith("}")
    assert '"stg_sales"' in dot and '"customer_value"' in dot and dot.count(" -> ") == 3
    target = tmp_path / "impact.mmd"
    assert main(["lineage", "FLOW", "flow-02.amount", "--impact", "-o", str(target)]) == 0
    mermaid = target.read_text("utf-8")
    assert mermaid.startswith("flowchart LR\n")
    assert '-->|"SUM(src.amount)"|' in mermaid


def test_lineage_text_format(env, capsys):
    assert main(["lineage", "FLOW", "flow-03", "--downstream", "--format", "text"]) == 0
    out = capsys.readouterr().out
    assert "stg_customers" in out and "customer_score" in out  # the cycle, each once
    assert "shop_customers" not in out.split("\n", 1)[1]


def test_lineage_unknown_column_and_bad_usage(env, capsys):
    assert main(["lineage", "FLOW", "flow-02.amout", "--impact"]) == EXIT_ERROR
    assert "no column 'amout' of element 'flow-02'" in capsys.readouterr().err
    for argv in (
        ["lineage", "FLOW", "flow-02", "--upstream", "--impact"],
        ["lineage", "FLOW", "flow-02.amount", "--impact", "--depth", "2"],
    ):
        with pytest.raises(SystemExit) as caught:
            main(argv)
        assert caught.value.code == EXIT_USAGE


def test_search_prints_hits_and_takes_a_regex(env, capsys):
    assert main(["search", "FLOW", "customer_no", "--in", "mappings"]) == 0
    frame = _csv(capsys.readouterr().out)
    assert set(frame["where"]) == {"mapping"} and "transformation" in set(frame["column"])
    assert main(["search", "FLOW", "^shop_", "--regex", "--in", "names"]) == 0
    frame = _csv(capsys.readouterr().out)
    assert sorted(frame["element_name"]) == ["shop_customers", "shop_orders", "shop_returns"]
    with pytest.raises(SystemExit) as caught:
        main(["search", "FLOW", "(", "--regex"])
    assert caught.value.code == EXIT_USAGE
    assert "not a regular expression" in capsys.readouterr().err
