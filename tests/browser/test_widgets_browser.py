"""The widgets notebook in a real browser: run all, then export, package and trace by clicking.

JupyterLab serves a copy of ``notebooks/exports-and-packages.ipynb`` and Debian's
Chromium, driven by Playwright, runs it. Everything after "Run all" is done by clicking
in the rendered page; what the clicks achieved is checked on disk (the zip) and by asking
the notebook's own kernel (hub count, package contents) through jupyter_client, so the
notebook holds no test code.

Without Chromium, Playwright or JupyterLab the test is skipped, except under ``CI=true``,
where it fails (the ``browser`` marker requires them: tests/needs.py): CI installs them
(``.ci/run``) and must not go green by skipping.
``MDD_UPDATE_SCREENSHOTS=1`` also saves the export panel's screenshot as
``docs/images/export-panel.png`` (the README shows it).
"""

from __future__ import annotations

import os
import re
import shutil
import zipfile
from pathlib import Path

import nbformat
import pytest

REPO = Path(__file__).resolve().parents[2]
NOTEBOOK = REPO / "notebooks" / "exports-and-packages.ipynb"
SCREENSHOT = REPO / "docs" / "images" / "export-panel.png"
COPY = "widgets.ipynb"  # the notebook's name in the temporary Jupyter root
PACKAGE = "hotfix-2024.07.1"  # the sample's empty open package of DWH

# emulator: the notebook starts one in its kernel
pytestmark = [pytest.mark.browser, pytest.mark.emulator, pytest.mark.timeout(240)]


def _notebook_without_teardown(root: Path) -> None:
    """Copy the notebook into ``root``, minus its teardown cell.

    The teardown cell stops the emulator, which the panels still need when the test
    clicks them after "Run all"; ending the kernel at the end of the test stops it.
    """
    notebook = nbformat.read(NOTEBOOK, as_version=4)
    kept = [c for c in notebook.cells if "teardown" not in c.metadata.get("tags", [])]
    assert len(kept) == len(notebook.cells) - 1, "the notebook has exactly one teardown cell"
    notebook.cells = kept
    nbformat.write(notebook, root / COPY)


def _wait_until_done(panel, button_class: str, timeout: float) -> None:
    """Wait until the panel's button, disabled while its work runs, is enabled again.

    Only meaningful once the page shows that the work started (the button is disabled
    in the kernel before the work begins, and the page learns both in that order).
    """
    panel.locator(f"button.{button_class}:enabled").wait_for(timeout=timeout * 1000)


def _screenshot(panel, path: Path) -> Path:
    from labpage import assert_not_blank

    panel.screenshot(path=str(path))
    assert_not_blank(path)
    return path


@pytest.fixture(scope="module")
def lab_browser(tmp_path_factory):
    """One JupyterLab server and one Chromium for the tests of this file (``--dist
    loadfile`` keeps them on one worker): each test opens its own notebook in them."""
    from labpage import chromium
    from labserver import LabServer

    home = tmp_path_factory.mktemp("lab")
    root = home / "root"
    root.mkdir()
    with LabServer(root, home / "lab") as lab, chromium(home / "chrome") as browser:
        yield lab, browser


def test_panels_export_and_package_by_clicking(lab_browser, tmp_path):
    from labpage import open_notebook, run_all
    from playwright.sync_api import expect

    expect.set_options(timeout=30_000)
    lab, browser = lab_browser
    root = lab.root
    _notebook_without_teardown(root)

    # tall enough for the export panel with its results, so its screenshot is whole
    page = browser.new_page(viewport={"width": 1280, "height": 2000})
    page.set_default_timeout(30_000)
    page_errors: list[str] = []  # uncaught JavaScript errors, e.g. a widget view failing
    page.on("pageerror", lambda error: page_errors.append(str(error)))
    try:
        open_notebook(page, lab, COPY)
        run_all(page, lab, COPY)
        panels = _panels_render(page, tmp_path)
        export_png = _export_hubs_ddl(page, lab, panels["export-panel"], root, tmp_path)
        _add_three_to_package(page, lab, panels["package-panel"], tmp_path)
        _trace_a_mart(lab, panels["lineage-panel"], tmp_path)
    except BaseException:
        # what the page showed, for a failure in CI (pytest keeps the tmp folder)
        page.screenshot(path=str(tmp_path / "failure.png"))
        raise
    finally:
        lab.delete_sessions()
        page.close()
    assert page_errors == [], f"JavaScript errors in the page: {page_errors}"

    if os.environ.get("MDD_UPDATE_SCREENSHOTS") == "1":
        SCREENSHOT.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(export_png, SCREENSHOT)


def _panels_render(page, tmp_path: Path) -> dict:
    """Every panel is rendered once, visible and not blank; returns their locators."""
    from playwright.sync_api import expect

    panels = {
        "export-panel": page.locator(".mdd-export-panel"),
        "package-panel": page.locator(".mdd-package-panel"),
        "deploy-panel": page.locator(".mdd-deploy-panel"),
        "write-review": page.locator(".mdd-write-review"),
        "lineage-panel": page.locator(".mdd-lineage-panel"),
    }
    for name, panel in panels.items():
        expect(panel, f"{name} is rendered").to_have_count(1)
        expect(panel).to_be_visible()
        _screenshot(panel, tmp_path / f"{name}-rendered.png")
    return panels


def _export_hubs_ddl(page, lab, export, root: Path, tmp_path: Path) -> Path:
    """Export the hubs' DDL as one zip by clicking; returns the panel's screenshot."""
    from playwright.sync_api import expect

    with lab.kernel(COPY) as kernel:
        hubs = kernel.eval('sorted(client.read_tree("DWH").query("type == \'HUB\'")["id"])')
    assert len(hubs) >= 3, "the sample has hubs to export"

    export.locator(".mdd-picker-type select").select_option(label="HUB")
    export.locator("button.mdd-picker-select-shown").click()
    expect(export.locator(".mdd-picker-count")).to_have_text(re.compile(rf"^{len(hubs)} of "))
    export.locator(".mdd-export-object-type select").select_option(label="SQL DDL")
    export.locator(".mdd-export-mode button", has_text="one zip").click()
    export.locator("button.mdd-export-button").click()
    expect(export.locator(".mdd-progress .progress-bar")).to_have_attribute(
        "style", re.compile(r"width:\s*100%"), timeout=60_000
    )
    _wait_until_done(export, "mdd-export-button", timeout=30)
    zips = sorted((root / "exports").glob("export-*.zip"))
    assert len(zips) == 1, f"one zip in exports/, found {[z.name for z in zips]}"
    with zipfile.ZipFile(zips[0]) as archive:
        names = [n for n in archive.namelist() if not n.endswith("/")]
        assert archive.testzip() is None
    # the emulator names each entry "<element id>__<file name>"
    assert sorted(name.split("__", 1)[0] for name in names) == hubs, names
    assert all(name.endswith(".sql") for name in names), names
    with lab.kernel(COPY) as kernel:
        picked = kernel.eval("sorted(export_panel.picker.selected)")
        object_type = kernel.eval("export_panel.object_type.value")
    assert picked == hubs and object_type == "sql-ddl"
    page.mouse.move(0, 0)  # no hover highlight in the picture
    return _screenshot(export, tmp_path / "export-panel.png")


def _add_three_to_package(page, lab, package, tmp_path: Path) -> None:
    """Add three links to the empty open package by clicking; the service lists them."""
    from playwright.sync_api import expect

    offered = package.locator(".mdd-package select option").all_inner_texts()
    labels = [text for text in offered if PACKAGE in text]
    assert labels, f"the package dropdown does not offer {PACKAGE!r}: {offered}"
    package.locator(".mdd-package select").select_option(label=labels[0])
    package.locator(".mdd-picker-type select").select_option(label="LINK")
    listing = package.locator(".mdd-picker-list select option")
    expect(listing.first).to_contain_text("LINK")
    listing.nth(0).click()
    listing.nth(1).click(modifiers=["Control"])
    listing.nth(2).click(modifiers=["Control"])
    expect(package.locator(".mdd-picker-count")).to_have_text(re.compile(r"^3 of "))
    package.locator("button.mdd-package-add").click()
    # the button may not be disabled yet right after the click: wait for the outcome
    expect(package.locator(".mdd-package-count")).to_contain_text(re.compile(r"\b3 element"))
    _wait_until_done(package, "mdd-package-add", timeout=30)
    with lab.kernel(COPY) as kernel:
        chosen = kernel.eval("sorted(package_panel.picker.selected)")
        listed = kernel.eval(
            'sorted(client.read_packages("DWH").set_index("name")'
            f'.at["{PACKAGE}", "structure_ids"])'
        )
    assert len(chosen) == 3
    assert listed == chosen, f"{PACKAGE} lists {listed}, the page picked {chosen}"
    _screenshot(package, tmp_path / "package-panel.png")


def _trace_a_mart(lab, lineage, tmp_path: Path) -> None:
    """Trace dim_customer upstream by clicking: the output lists its sources and draws them."""
    from playwright.sync_api import expect

    lineage.locator(".mdd-picker-type select").select_option(label="VIEW")
    lineage.locator(".mdd-picker-list select option", has_text="dim_customer").first.click()
    expect(lineage.locator(".mdd-picker-count")).to_have_text(re.compile(r"^1 of "))
    lineage.locator("button.mdd-lineage-trace").click()
    expect(lineage.locator(".mdd-output img")).to_be_visible()
    expect(lineage.locator(".mdd-output")).to_contain_text("crm_customer")
    _wait_until_done(lineage, "mdd-lineage-trace", timeout=30)
    with lab.kernel(COPY) as kernel:
        found = kernel.eval(
            'sorted(lineage_panel.last_result.to_frame()["element_name"].astype(str))'
        )
    assert found == ["crm_customer", "sat_crm_customer", "stg_crm_customer"], found
    _screenshot(lineage, tmp_path / "lineage-panel.png")


# -- the editing grid (notebooks/fix-a-few-cells.ipynb) --

GRID_NOTEBOOK = REPO / "notebooks" / "fix-a-few-cells.ipynb"
GRID_COPY = "grid.ipynb"
GRID_SCREENSHOT = REPO / "docs" / "images" / "edit-grid.png"
HIGHLIGHT = (0xFD, 0xE6, 0x8A)  # mddframes.widgets.edit_grid.HIGHLIGHT
# ipydatagrid's geometry (its defaults, and base_column_size=130 of EditGrid): the
# grid is a canvas, so a cell is reached by where it is drawn
ROW_HEADER, COLUMN_HEADER, ROW_HEIGHT, COLUMN_WIDTH = 64, 20, 20, 130


def _grid_notebook(root: Path) -> None:
    """The grid notebook without its scripted edits and its teardown: the test clicks."""
    notebook = nbformat.read(GRID_NOTEBOOK, as_version=4)
    dropped = {"teardown", "scripted"}
    notebook.cells = [c for c in notebook.cells if not dropped & set(c.metadata.get("tags", []))]
    nbformat.write(notebook, root / GRID_COPY)


def _cell_point(panel, row: int, column: int) -> tuple[float, float]:
    viewport = panel.locator(".lm-DataGrid-viewport").first
    viewport.scroll_into_view_if_needed()
    box = viewport.bounding_box()
    x = box["x"] + ROW_HEADER + column * COLUMN_WIDTH + COLUMN_WIDTH / 2
    return x, box["y"] + COLUMN_HEADER + row * ROW_HEIGHT + ROW_HEIGHT / 2


def _type_into(page, panel, row: int, column: int, text: str) -> None:
    """Double-click a cell, replace its text, press Enter (as a person edits it)."""
    page.mouse.dblclick(*_cell_point(panel, row, column))
    editor = page.locator(".lm-DataGrid-cellEditorInput")
    editor.wait_for()
    editor.fill(text)
    editor.press("Enter")


def _colour_at(page, panel, row: int, column: int) -> tuple[int, int, int]:
    """The colour the page draws a little inside the cell's left edge (not its text),
    with the grid's selection moved to its first cell (it tints what it covers)."""
    import io

    from PIL import Image

    page.mouse.click(*_cell_point(panel, 0, 0))
    x, y = _cell_point(panel, row, column)
    page.mouse.move(0, 0)
    spot = {"x": x - COLUMN_WIDTH / 2 + 4, "y": y - 6, "width": 2, "height": 2}
    with Image.open(io.BytesIO(page.screenshot(clip=spot))) as image:
        return image.convert("RGB").getpixel((0, 0))


def test_grid_edit_preview_write_refusal_conflict_and_revert_by_clicking(lab_browser, tmp_path):
    """Type into a cell, see it highlighted, Preview, Write: the service holds exactly that
    edit; a value the column cannot hold is refused; a conflict keeps the edit; Revert all."""
    from labpage import open_notebook, run_all
    from playwright.sync_api import expect

    expect.set_options(timeout=30_000)
    lab, browser = lab_browser
    _grid_notebook(lab.root)
    page = browser.new_page(viewport={"width": 2000, "height": 1600})
    page.set_default_timeout(30_000)
    page_errors: list[str] = []
    page.on("pageerror", lambda error: page_errors.append(str(error)))
    try:
        open_notebook(page, lab, GRID_COPY)
        run_all(page, lab, GRID_COPY)
        panels = page.locator(".mdd-edit-panel")
        expect(panels).to_have_count(3)
        countries, products = panels.nth(0), panels.nth(2)
        with lab.kernel(GRID_COPY) as kernel:
            before = kernel.eval('client.read_table("tbl-0109").to_dict("list")')

        # one edit, highlighted at once, listed beside the grid
        _type_into(page, countries, 1, 3, "United Arab Emirates (UAE)")
        expect(countries.locator(".mdd-edit-summary")).to_contain_text("1 edited cell(s)")
        expect(countries.locator(".mdd-edit-changes")).to_contain_text("(UAE)")
        assert _colour_at(page, countries, 1, 3) == HIGHLIGHT
        assert _colour_at(page, countries, 2, 3) != HIGHLIGHT
        countries.screenshot(path=str(tmp_path / "edit-grid-edited.png"))

        # a value the column cannot hold: refused in words, the cell put back
        _type_into(page, products, 0, 5, "heavy")  # weight_kg, a Float64 column
        expect(products.locator(".mdd-edit-message")).to_contain_text("not a number")

        # Preview (the write's dry run), then Write: exactly that cell changes
        countries.locator("button.mdd-edit-preview").click()
        expect(countries.locator(".mdd-edit-check")).to_contain_text("1 cell(s) changed")
        countries.screenshot(path=str(tmp_path / "edit-grid-preview.png"))
        countries.locator("button.mdd-edit-write:enabled").click()
        expect(countries.locator(".mdd-output")).to_contain_text("verified=True")
        expect(countries.locator(".mdd-edit-summary")).to_contain_text("no edits")
        countries.screenshot(path=str(tmp_path / "edit-grid-written.png"))
        with lab.kernel(GRID_COPY) as kernel:
            after = kernel.eval('client.read_table("tbl-0109").to_dict("list")')
            assert kernel.eval("products.model.dirty") is False  # the refused value
            assert kernel.eval("products.grid.get_cell_value_by_index('weight_kg', 0)") == "0.25"
        differ = [
            (column, row)
            for column in before
            for row, (old, new) in enumerate(zip(before[column], after[column], strict=True))
            if old != new
        ]
        assert differ == [("name", 1)], differ
        assert after["name"][1] == "United Arab Emirates (UAE)"

        # a colleague changes the table: the Preview is refused, the edit stays
        _type_into(page, countries, 2, 3, "Afghanistan (AF)")
        with lab.kernel(GRID_COPY) as kernel:
            kernel.eval('bool(emu.touch_table("tbl-0109"))')
            countries.locator("button.mdd-edit-preview").click()
            expect(countries.locator(".mdd-output")).to_contain_text("read it again")
            assert kernel.eval("countries.model.changed") == [(2, "name")]
        expect(countries.locator("button.mdd-edit-write")).to_be_disabled()

        # Reload asks before it drops the edit; Revert all takes it back
        countries.locator("button.mdd-edit-reload").click()
        expect(countries.locator(".mdd-edit-message")).to_contain_text("click Reload again")
        countries.locator("button.mdd-edit-revert-all").click()
        expect(countries.locator(".mdd-edit-summary")).to_contain_text("no edits")
        assert _colour_at(page, countries, 2, 3) != HIGHLIGHT
        with lab.kernel(GRID_COPY) as kernel:
            assert kernel.eval("countries.model.dirty") is False
            assert kernel.eval("countries.grid.get_cell_value_by_index('name', 2)") == "Afghanistan"
    except BaseException:
        page.screenshot(path=str(tmp_path / "failure.png"))
        raise
    finally:
        lab.delete_sessions()
        page.close()
    assert page_errors == [], f"JavaScript errors in the page: {page_errors}"
    from labpage import assert_not_blank

    for name in ("edited", "preview", "written"):
        assert_not_blank(tmp_path / f"edit-grid-{name}.png")
    if os.environ.get("MDD_UPDATE_SCREENSHOTS") == "1":
        shutil.copyfile(tmp_path / "edit-grid-preview.png", GRID_SCREENSHOT)
