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


def test_panels_export_and_package_by_clicking(tmp_path):
    from labpage import chromium, open_notebook, run_all
    from labserver import LabServer
    from playwright.sync_api import expect

    expect.set_options(timeout=30_000)
    root = tmp_path / "root"
    root.mkdir()
    _notebook_without_teardown(root)

    with LabServer(root, tmp_path / "lab") as lab, chromium(tmp_path / "chrome") as browser:
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
