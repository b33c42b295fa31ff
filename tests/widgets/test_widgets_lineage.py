"""LineagePanel against the emulator's FLOW system, headless: the frame and the drawing."""

from __future__ import annotations

import pytest
from widget_helpers import displayed, everything_shown, output_text, stderr_text

from mddframes import InvalidArgumentError
from mddframes.widgets import ElementPicker, LineagePanel


@pytest.fixture
def panel(client):
    return LineagePanel(client, "FLOW")


def test_picking_an_element_offers_its_columns(panel):
    assert panel.button.disabled  # nothing picked yet
    panel.picker.select(["flow-02"])
    assert [value for _label, value in panel.column.options] == [
        "", "amount", "customer_no", "return_date", "return_id",
    ]  # fmt: skip
    assert not panel.button.disabled
    panel.question.value = "impact"
    assert panel.button.disabled  # impact needs a column
    panel.column.value = "amount"
    assert not panel.button.disabled


def test_upstream_of_an_element_shows_the_frame_and_a_drawing(panel):
    panel.picker.select(["flow-08"])
    answer = panel.run()
    assert sorted(answer.to_frame()["element_name"]) == [
        "sales_by_customer", "shop_orders", "shop_returns", "stg_sales",
    ]  # fmt: skip
    text = output_text(panel.output)
    assert "upstream of 'flow-08': 4 found." in text
    bundles = displayed(panel.output)
    assert "shop_returns" in bundles[0]["text/html"]
    assert bundles[-1]["image/png"]
    assert panel.progress.bar_style == "success"


def test_impact_of_a_column_by_clicking(panel):
    panel.picker.select(["flow-02"])
    panel.column.value = "amount"
    panel.question.value = "impact"
    panel.button.click()
    answer = panel.wait(30)
    assert answer is not None
    frame = answer.to_frame()
    assert set(frame["column"]) == {"amount", "total_amount", "value_band"}
    assert "image/png" in displayed(panel.output)[-1]


def test_downstream_around_the_cycle_ends_where_it_started(panel):
    panel.picker.select(["flow-03"])
    panel.question.value = "downstream"
    frame = panel.run().to_frame()
    assert frame["element_name"].tolist() == ["stg_customers", "customer_score"]


def test_an_element_no_mapping_touches_is_an_error_in_words(client):
    picker = ElementPicker(client, "FLOW")
    panel = LineagePanel(client, "FLOW", picker=picker)
    picker.select(["flow"])  # the root folder: no mapping reads or writes it
    assert panel.button.disabled
    with pytest.raises(InvalidArgumentError):
        panel.run()
    assert "no element 'flow'" in stderr_text(panel.output)
    assert panel.progress.bar_style == "danger"


def test_no_panel_state_or_output_holds_the_secret(client, emu, panel):
    panel.picker.select(["flow-04"])
    panel.run()
    assert emu.client_secret not in everything_shown(panel)


def test_the_client_makes_the_panel(client):
    assert isinstance(client.lineage_panel("FLOW"), LineagePanel)


def test_re_read_picks_up_a_changed_mapping_and_reports_a_failure_in_words(client, emu, panel):
    client.api.put_mapping(
        "flow-map-04",
        {"id": "flow-map-04", "sourceId": "flow-01", "targetId": "flow-07",
         "columnMappings": [{"source": "order_date", "target": "sale_date"}]},
    )  # fmt: skip
    panel.refresh_button.click()
    assert panel.lineage.upstream("flow-07", depth=1).to_frame()["element_id"].tolist() == [
        "flow-01"
    ]
    panel.system = "NO-SUCH-SYSTEM"  # the next read fails: 404
    panel.refresh_button.click()
    assert "Reading the lineage" in stderr_text(panel.output)
    assert panel.lineage.names  # the lineage read before is kept
