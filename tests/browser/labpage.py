"""Driving a notebook in JupyterLab 4 with Playwright and Debian's Chromium.

The selectors are ones found to work with JupyterLab 4.6 and ipywidgets 8 (JupyterLab's
own classes and the widgets' rendered labels, never positions). Every wait has a deadline and fails with what the page
showed, so a broken notebook reads as its error, not as a bare time-out.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from needs import CHROMIUM  # Debian's Chromium: one home, with the other tools

if TYPE_CHECKING:  # imported lazily: this module must load without the browser extra
    from labserver import LabServer

_PROMPT_DONE = re.compile(r"^\[\d+\]:$")


@contextmanager
def chromium(config_home: Path) -> Iterator[Any]:
    """A headless Chromium (Playwright ``Browser``) whose crash-report helpers and caches
    write under ``config_home`` instead of the user's ``~/.config`` and ``~/.cache``."""
    from playwright.sync_api import sync_playwright

    config_home.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as pw:
        browser = pw.chromium.launch(
            executable_path=str(CHROMIUM),
            args=["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"],
            # XDG_CACHE_HOME: dconf's cache, else written to ~/.cache
            env={
                **os.environ,
                "CHROME_CONFIG_HOME": str(config_home),
                "XDG_CACHE_HOME": str(config_home / "cache"),
            },
        )
        try:
            yield browser
        finally:
            browser.close()


def _poll(condition: Any, timeout: float, what: str, detail: Any = lambda: "") -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise TimeoutError(f"{what} within {timeout:.0f} s. {detail()}")
        time.sleep(0.2)


def open_notebook(page: Any, lab: LabServer, notebook: str, timeout: float = 60.0) -> None:
    """Open ``notebook`` and wait until its kernel is started and idle."""
    page.goto(lab.lab_url(notebook))
    page.locator(".jp-NotebookPanel .jp-Cell").first.wait_for(timeout=timeout * 1000)

    def kernel_idle() -> bool:
        accept = page.locator(".jp-Dialog .jp-mod-accept")
        if accept.count():  # a "Select Kernel" dialog: keep the suggested kernel
            accept.first.click()
        # the page's indicator also reads idle before a kernel exists; the server knows
        return lab.kernel_state(notebook) == "idle"

    _poll(kernel_idle, timeout, f"the kernel of {notebook} was not idle", lab.log_tail)


def code_prompts(page: Any) -> list[str]:
    """The execution prompts of the code cells (``[ ]:``, ``[*]:`` or ``[n]:``)."""
    return [
        text.strip() for text in page.locator(".jp-CodeCell .jp-InputArea-prompt").all_inner_texts()
    ]


def error_outputs(page: Any) -> list[str]:
    """The texts of the error outputs (tracebacks) the page shows."""
    return page.locator(
        ".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr']"
    ).all_inner_texts()


def run_all(page: Any, lab: LabServer, notebook: str, timeout: float = 90.0) -> None:
    """Run all cells through the Run menu and wait until every code cell has run.

    Fails early, with the traceback, when a cell raises (JupyterLab then stops the run
    and leaves the later prompts empty).
    """
    page.locator("#jp-MainMenu .lm-MenuBar-item", has_text="Run").first.click()
    page.locator("#jp-mainmenu-run .lm-Menu-item[data-command='runmenu:run-all']").click()
    # the numbers of an earlier run must not end the wait: see the run start first
    _poll(
        lambda: "[*]:" in code_prompts(page) or lab.kernel_state(notebook) == "busy",
        30,
        "the run did not start",
    )

    def finished() -> bool:
        prompts = code_prompts(page)
        if "[*]:" in prompts or lab.kernel_state(notebook) != "idle":
            return False
        if all(_PROMPT_DONE.match(p) for p in prompts):
            return True
        errors = [e for e in error_outputs(page) if "Error" in e or "Traceback" in e]
        if errors:
            raise AssertionError(f"a cell failed in the browser:\n{errors[0][-3000:]}")
        return False

    _poll(finished, timeout, "run all did not finish", lambda: f"prompts: {code_prompts(page)}")


def assert_not_blank(path: Path, min_colours: int = 3, min_ink: float = 0.01) -> None:
    """Assert that the PNG at ``path`` shows something: several colours, some ink.

    ``min_ink`` is the share of pixels that must be clearly non-white.
    """
    from PIL import Image

    with Image.open(path) as image:
        rgb = image.convert("RGB")
        colours = rgb.getcolors(maxcolors=1 << 16)
        n_colours = len(colours) if colours is not None else 1 << 16
        grey = rgb.convert("L")
        ink = sum(grey.histogram()[:200]) / (grey.width * grey.height)
    assert n_colours >= min_colours, f"{path.name}: only {n_colours} colour(s), looks blank"
    assert ink >= min_ink, f"{path.name}: only {ink:.2%} non-white pixels, looks blank"
