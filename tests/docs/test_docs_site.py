"""The documentation site: built once per module with ``bash scripts/docs`` (warnings as
errors, nitpicky references), then checked for a page per public name and rendered in
headless Chromium.

The build is the one CI relies on: ``scripts/docs`` runs ``sphinx-build -W --keep-going
-n``, so a warning anywhere (an unresolved reference, a numpydoc validation failure, a
page outside every toctree) fails :func:`site` and every test here.
"""

from __future__ import annotations

import html
import inspect
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import mddframes
from mddframes.api import Api

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests" / "browser"))  # labpage: one home for Chromium

from labpage import assert_not_blank, chromium  # noqa: E402
from needs import require  # noqa: E402

pytestmark = [pytest.mark.docs, pytest.mark.timeout(600)]


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    """The built site's HTML folder (``scripts/docs`` with this interpreter)."""
    out = tmp_path_factory.mktemp("docs") / "html"
    env = {**os.environ, "MDD_DOCS_PYTHON": sys.executable}
    done = subprocess.run(
        ["bash", str(REPO / "scripts" / "docs"), str(out)], cwd=REPO, env=env,
        capture_output=True, text=True, timeout=540,
    )  # fmt: skip
    assert done.returncode == 0, f"the docs build failed:\n{done.stdout}\n{done.stderr}"
    # -q: sphinx prints only warnings and errors, and -W makes any of them fatal; the
    # kernels that run the notebooks print their own notice about local TCP, not sphinx's
    sphinx_lines = [
        line for line in done.stderr.splitlines() if not line.startswith("[IPKernelApp]")
    ]
    assert not [line for line in sphinx_lines if "WARNING" in line], done.stderr
    return out


def _inventory(site: Path) -> dict[str, dict[str, object]]:
    from sphinx.util.inventory import InventoryFile

    with (site / "objects.inv").open("rb") as stream:
        return InventoryFile.load(stream, "", lambda base, page: page)


def _public_members(cls: type) -> list[str]:
    return [
        name for name in dir(cls)
        if not name.startswith("_")
        and any(name in vars(k) for k in cls.__mro__ if k.__module__.startswith("mddframes"))
    ]  # fmt: skip


@pytest.mark.emulator  # the build runs the notebooks, which start one
def test_every_public_name_has_a_page(site):
    inventory = _inventory(site)
    documented = {name for entries in inventory.values() for name in entries}
    wanted = [f"mddframes.{n}" for n in mddframes.__all__]
    wanted += [f"mddframes.Client.{m}" for m in _public_members(mddframes.Client)]
    wanted += [f"mddframes.api.Api.{m}" for m in _public_members(Api)]
    missing = [name for name in wanted if name not in documented]
    assert not missing, f"no page in the reference for: {', '.join(missing)}"
    # and each of those names is on a page of its own (the page named after it)
    pages = {name: item.uri for entries in inventory.values() for name, item in entries.items()}
    assert pages["mddframes.Client.write_table"].startswith(
        "reference/_generated/mddframes.Client.write_table.html"
    )
    assert len(wanted) >= 58 + 31


@pytest.mark.emulator  # the build runs the notebooks, which start one
def test_the_error_tree_names_every_error_class(site):
    from mddframes import errors

    page = (site / "reference" / "_generated" / "mddframes.errors.html").read_text("utf-8")
    classes = [
        name for name, value in vars(errors).items()
        if inspect.isclass(value) and issubclass(value, BaseException)
        and value.__module__ == errors.__name__
    ]  # fmt: skip
    assert [c for c in classes if f"mddframes.errors.{c}.html" not in page] == []


@pytest.mark.emulator  # the build runs the notebooks, which start one
def test_the_command_line_page_has_every_command_and_the_exit_codes(site):
    from mddframes.cli import build_parser

    page = html.unescape(re.sub(r"<[^>]+>", "", (site / "cli.html").read_text("utf-8")))
    parser = build_parser()
    commands = next(a for a in parser._actions if isinstance(a.choices, dict))
    missing = [
        f"mddframes {name} {option}".strip()
        for name, command in commands.choices.items()
        for option in ["", *(a.option_strings[-1] for a in command._actions if a.option_strings)]
        if f"mddframes {name}" not in page or (option and option not in page)
    ]  # fmt: skip
    assert missing == []
    assert len(commands.choices) >= 18
    assert "exit codes" in page and "141" in page


@pytest.mark.emulator  # the build runs the notebooks, which start one
def test_the_notebooks_and_markdown_pages_are_rendered(site):
    for notebook in sorted((REPO / "notebooks").glob("*.ipynb")):
        assert (site / "notebooks" / f"{notebook.stem}.html").is_file()
    for page in ("internals", "settings", "wire-format", "changelog"):
        assert (site / f"{page}.html").is_file()
    for guide in sorted((REPO / "docs" / "guide").glob("*.md")):
        assert (site / "guide" / f"{guide.stem}.html").is_file()
    assert "Unreleased" in (site / "changelog.html").read_text("utf-8")


@pytest.mark.emulator  # the build runs the notebooks, which start one
@pytest.mark.parametrize(
    "page",
    ["index.html", "reference/_generated/mddframes.Client.write_table.html"],
)
def test_the_page_renders_in_chromium(site, tmp_path, page):
    require("chromium", "playwright", "pillow")
    shot = tmp_path / (page.replace("/", "_") + ".png")
    with chromium(tmp_path / "chrome") as browser:
        view = browser.new_page(viewport={"width": 1280, "height": 900})
        errors: list[str] = []
        view.on("pageerror", lambda error: errors.append(str(error)))
        view.goto((site / page).as_uri())
        view.wait_for_load_state("load")
        title = view.title()
        view.screenshot(path=str(shot), full_page=False)
    assert_not_blank(shot)
    assert "mddframes" in title
    assert errors == []


def _extension():
    sys.path.insert(0, str(REPO / "docs" / "_ext"))
    import mdd_reference

    return mdd_reference


def test_a_name_added_to_all_gets_a_page_with_no_doc_edit(tmp_path, monkeypatch):
    extension = _extension()
    monkeypatch.setattr(mddframes, "__all__", [*mddframes.__all__, "some_new_function"])
    monkeypatch.setattr(mddframes, "some_new_function", mddframes.connect, raising=False)
    documented = extension.generate(tmp_path)
    assert "mddframes.some_new_function" in documented
    stub = (tmp_path / "mddframes.some_new_function.rst").read_text("utf-8")
    assert ".. autofunction:: some_new_function" in stub
    assert "   some_new_function" in (tmp_path / "mddframes.rst").read_text("utf-8")


def test_a_reference_into_the_internals_must_name_something_that_exists():
    # rendered as code without a link when it exists; a build warning (an error) if not
    exists = _extension()._exists_in_package
    assert exists(
        "overlay", ["mddframes.codec.frame_overlay.to_payload", "mddframes.codec.frame_overlay"]
    )
    assert exists("mddframes.writing.engine", [])
    assert exists(".files", ["mddframes.tables_as_code"])
    assert not exists("overlay", ["mddframes.writing.batch"])  # not that module's name
    assert not exists("mddframes.writing.no_such_module", [])
    assert not exists("pandas.DataFrame", ["mddframes"])
