"""The README's demo: start the embedded emulator and walk through what mddframes does.

Everything it writes (backups, the export zip) goes to a temporary folder that is removed
at the end, so running the demo leaves nothing behind.
"""

from __future__ import annotations

import tempfile
import warnings
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd

if TYPE_CHECKING:
    from mddframes.client import Client

COUNTRIES = "tbl-0109"  # ISO 3166 reference table of the sample data


def _section(title: str) -> None:
    print(f"\n== {title}")


def _show_tree(client: Client) -> pd.DataFrame:
    _section("the DWH element tree as a DataFrame")
    tree = client.read_tree("DWH")
    print(
        f"token obtained; the DWH tree has {len(tree)} elements, {tree['depth'].max() + 1} levels"
    )
    print(tree["type"].value_counts().to_string())
    print(tree.loc[tree["depth"] == 3, ["id", "type", "path"]].head(3).to_string(index=False))
    return tree


def _show_writes(client: Client, work: Path) -> None:
    from mddframes import IncompletePayloadError

    _section(f"a table with typed columns: {COUNTRIES}")
    countries = client.read_table(COUNTRIES)
    print(countries.head(3).to_string())
    print(countries.dtypes.to_string())

    _section("a write that would lose data is refused, nothing is sent")
    try:
        client.write_table(COUNTRIES, countries.drop(columns="numeric"), backup_dir=work)
    except IncompletePayloadError as refused:
        first = refused.report.errors.iloc[0]
        print(f"refused: {first['problem']} (table {first['table']}, column {first['column']})")

    _section("edit one cell, dry run, then write (backup, verify)")
    edited = countries.copy()
    edited.loc[edited["alpha2"] == "DE", "name"] = "Germany (Federal Republic of)"
    preview = client.write_table(COUNTRIES, edited, dry_run=True, backup_dir=work)
    print(f"dry run: {preview.diff.summary}")
    result = client.write_table(COUNTRIES, edited, backup_dir=work)
    backup = result.backup.name if result.backup is not None else "none"
    print(f"{result.status}: verified={result.verified}, backup {backup}")


def _show_exports(client: Client, tree: pd.DataFrame, work: Path) -> None:
    _section("batch export of the hubs' DDL scripts")
    hubs = tree.loc[tree["type"] == "HUB", "id"].tolist()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the demo prints its own summary
        archive = client.export_batch(hubs, "sql-ddl", work / "hubs.zip", progress=False)
    files = archive.files()
    print(f"{len(files)} scripts, {int(files['size'].sum())} bytes; first: {files['name'].iloc[0]}")

    _section("open deployment packages")
    print(client.read_packages("DWH")[["name", "status", "n_structures"]].to_string(index=False))


def main() -> int:
    """Run the demo; returns the exit code."""
    from mddframes import Client
    from mddframes.emulator import serve

    pd.set_option("display.width", 120)
    pd.set_option("display.max_columns", 8)
    with tempfile.TemporaryDirectory(prefix="mddframes-demo-") as tmp, serve() as emu:
        work = Path(tmp)
        with Client.from_emulator(emu) as client:
            _section("connect")
            print(f"emulator at {emu.base_url}, tenant {emu.tenant!r}; {client!r}")
            tree = _show_tree(client)
            _show_writes(client, work)
            _show_exports(client, tree, work)
    print("\ndone: the emulator is stopped and the temporary files are removed.")
    return 0
