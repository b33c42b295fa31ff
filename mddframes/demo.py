"""The README's demo: start the embedded emulator, connect, and show what mddframes does."""

from __future__ import annotations


def main() -> int:
    """Run the demo; returns the exit code."""
    from mddframes import Client
    from mddframes.emulator import serve

    with serve() as emu:
        client = Client.from_emulator(emu)
        print(f"emulator running at {emu.base_url} (tenant {emu.tenant})")
        tree = client.get_tree("DWH")
        print(f"token obtained; the DWH tree has {len(tree)} elements")
        client.close()
    return 0
