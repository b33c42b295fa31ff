"""Start-up: ``import mddframes`` and ``mddframes --help`` against ``import pandas, requests``.

Every pipeline step starts a fresh interpreter, so start-up is paid on each. The
baseline is what any pandas-over-HTTP tool pays: a fresh interpreter importing pandas
and requests. Each run is a new process (nothing cached in memory between runs; the
files are in the page cache after the first); baseline and candidate alternate, five
pairs each. The first use of :func:`mddframes.connect` loads the rest of the package;
it is shown for context, with no goal of its own here.
"""

from __future__ import annotations

import subprocess
import sys
import time

from benchmarks.common import Result, median_at_most, paired_times

BASELINE = "import pandas, requests"
REPEAT = 5


def _python(code: str) -> None:
    subprocess.run([sys.executable, "-c", code], check=True)


def _help() -> None:
    subprocess.run(
        [sys.executable, "-m", "mddframes", "--help"], check=True, stdout=subprocess.DEVNULL
    )


def run() -> list[Result]:
    """The two start-up ratios, five paired runs each."""
    _python(BASELINE)  # the first run of all reads the files from disk: not counted
    _python("import mddframes")
    base, imported = paired_times(lambda: _python(BASELINE), lambda: _python("import mddframes"),
                                  repeat=REPEAT)  # fmt: skip
    base_help, helped = paired_times(lambda: _python(BASELINE), _help, repeat=REPEAT)
    results = [
        median_at_most("import mddframes vs import pandas, requests", base, imported, 1.2),
        median_at_most("mddframes --help vs import pandas, requests", base_help, helped, 1.3),
    ]
    started = time.perf_counter()
    _python("import mddframes; mddframes.connect")
    first_use = time.perf_counter() - started
    print(
        f"context: import mddframes and the first use of connect: {first_use:.2f} s "
        f"(baseline median {sorted(base)[len(base) // 2]:.2f} s)",
        file=sys.stderr,
    )
    return results
