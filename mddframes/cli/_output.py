"""How the command line talks: frames on stdout, one message per problem on stderr.

- A frame prints as a text table on a terminal, else CSV; ``--format csv|json|text``
  forces one, ``-o FILE`` writes it to a file (``.json`` -> JSON, else CSV).
- A closed stdout (``| head -1``) raises :class:`StdoutClosed`, which ``main`` turns
  into exit code 141 (128 + SIGPIPE, what a shell reports for a process killed by a
  closed pipe) without a traceback.
- Progress bars only on a terminal (``--progress/--no-progress`` force it).
- Messages: the library logs a problem and may also warn about it (a partial
  failure does both); :class:`Messages` prints each text once, as ``warning: ...``
  without a source line. ``-q`` keeps only errors.
"""

from __future__ import annotations

import argparse
import logging
import re
import sys
import warnings
from pathlib import Path
from typing import Any, TextIO

import pandas as pd

from mddframes.config import SETTINGS

#: The exit code after stdout was closed by its reader.
EXIT_STDOUT_CLOSED = 141


class StdoutClosed(Exception):
    """The reader of stdout went away (a broken pipe)."""


def write_stdout(text: str) -> None:
    """Write to stdout; a closed pipe becomes :class:`StdoutClosed`."""
    try:
        sys.stdout.write(text)
        sys.stdout.flush()
    except BrokenPipeError as exc:
        raise StdoutClosed from exc


def frame_format(args: argparse.Namespace) -> str:
    """The format a frame is printed in: --format, else by -o's suffix, else by terminal."""
    chosen = getattr(args, "format", None)
    if chosen:
        return str(chosen)
    output = getattr(args, "output", None)
    if output is not None:
        return "json" if Path(output).suffix.lower() == ".json" else "csv"
    return "text" if _isatty(sys.stdout) else "csv"


def frame_text(frame: pd.DataFrame, fmt: str) -> str:
    """A frame as CSV, JSON records or a text table."""
    if fmt == "json":
        return (
            frame.to_json(orient="records", force_ascii=False, indent=1, date_format="iso") + "\n"
        )
    if fmt == "text":
        if frame.empty:
            return "(no rows)\n" if len(frame.columns) else "\n"
        width = terminal_width()
        # lists and records as text, so that the column width cuts them like any text
        nested = [c for c in frame.columns if frame[c].dtype == object]
        if nested:
            frame = frame.assign(**{
                str(c): frame[c].map(lambda v: str(v) if isinstance(v, list | dict | tuple) else v)
                for c in nested
            })  # fmt: skip
        cut = max(20, min(80, width - 4))
        return frame.to_string(index=False, line_width=width, max_colwidth=cut) + "\n"
    return frame.to_csv(index=False)


def emit(frame: pd.DataFrame, args: argparse.Namespace) -> None:
    """Print or write ``frame`` as the arguments say."""
    fmt = frame_format(args)
    if "error" in frame.columns and frame["error"].notna().any():
        frame = frame.assign(error=frame["error"].map(in_command_words, na_action="ignore"))
    text = frame_text(frame, fmt)
    output = getattr(args, "output", None)
    if output is not None:
        output_file(output).write_text(text, "utf-8")
    else:
        write_stdout(text)


def output_file(path: str | Path) -> Path:
    """A file the command writes (``-o``, ``--out``, ``--dest``), its folder made if missing.

    Every output path goes through here, so ``-o new/hubs.csv`` works as ``pull`` and
    ``snapshot`` do with a new folder.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    return path


def terminal_width() -> int:
    """The terminal's width in columns (``COLUMNS`` wins; 80 when not a terminal)."""
    import shutil

    return max(40, shutil.get_terminal_size((80, 24)).columns)


def progress_wanted(args: argparse.Namespace) -> bool:
    """--progress/--no-progress, else whether stderr is a terminal (never when quiet)."""
    chosen = getattr(args, "progress", None)
    if chosen is not None:
        return bool(chosen)
    return not getattr(args, "quiet", False) and _isatty(sys.stderr)


def _isatty(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


#: A setting with an option: "pass NAME=... to connect()" and "argument NAME=" (where a
#: bad value came from) in the option's words.
_SETTING_OPTION_WORDS = tuple(
    pair
    for setting in SETTINGS
    if setting.option
    for pair in (
        (rf"pass {setting.name}=\.\.\. to connect\(\)", f"pass {setting.option}"),
        (rf"\bargument {setting.name}=", f"option {setting.option}"),
    )
)

#: The library speaks to a Python caller; the command line names its commands and
#: options instead. (pattern, replacement) in order; the one place that translates.
_IN_COMMAND_WORDS: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(pattern), replacement)
    for pattern, replacement in (
        *_SETTING_OPTION_WORDS,
        (r"pass profile=\.\.\. to connect\(\)", "pass --profile"),
        (r"pass \w+=\.\.\. to connect\(\), ", ""),  # no option: the variable or profile
        (r"see pending_writes\(\)", "see 'mddframes writes'"),
        (r"pending_writes\(\)", "'mddframes writes'"),
        (r"the same backup_dir", "the same --backup-dir"),
        (r"\bbackup_dir=", "--backup-dir="),
        (r"\bresume\('([^']*)'\)", r"'mddframes resume \1'"),
        (r"\broll_back\('([^']*)'\)", r"'mddframes roll-back \1'"),
        (r"\(details in the failures frame\)", "(the error column of the printed result)"),
        (r" Pass errors='skip' to collect all failures\.", ""),
        (r"write with allow_deletes=True", "pass --allow-deletes"),
        (r"allow_deletes=True", "--allow-deletes"),
        (r"read_object_types\(\) lists them", "'mddframes object-types' lists them"),
        # the refused payload's problems are printed with it (plan) or in the error
        (r" Nothing was sent; see \.report\.", " Nothing was sent."),
        (
            r"later with client\.export_task\('([^']*)'\)",
            r"later with the export command's --task \1",
        ),
    )
)


def in_command_words(text: str) -> str:
    """A library message with its Python calls put as the command line's commands/options."""
    for pattern, replacement in _IN_COMMAND_WORDS:
        text = pattern.sub(replacement, text)
    return text


class Messages(logging.Handler):
    """Warnings and log records on stderr, each distinct text once.

    Installed by :meth:`install` on the ``mddframes`` logger and as the warnings hook
    for one run of ``main``; :meth:`remove` puts both back (``main`` may run in-process,
    e.g. in tests).
    """

    def __init__(self, level: int) -> None:
        super().__init__(level)
        self.seen: set[str] = set()
        self._logger = logging.getLogger("mddframes")
        self._saved: tuple[Any, ...] = ()

    def say(self, label: str | None, text: str) -> None:
        """Print ``label: text`` (or the bare text) on stderr, unless already printed."""
        text = in_command_words(text)
        if text in self.seen:
            return
        self.seen.add(text)
        try:
            print(f"{label}: {text}" if label else text, file=sys.stderr)
        except (BrokenPipeError, ValueError):
            pass  # nowhere left to say it

    def note(self, text: str) -> None:
        """A line of the command's own (a summary, a file written), unless ``-q``."""
        if self.level <= logging.WARNING:
            self.say(None, text)

    def emit(self, record: logging.LogRecord) -> None:
        self.say(record.levelname.lower(), record.getMessage())

    def _warning(self, message: Any, category: Any, *args: Any, **kwargs: Any) -> None:
        if self.level <= logging.WARNING:
            self.say("warning", str(message))

    def install(self) -> Messages:
        self._saved = (self._logger.level, self._logger.propagate, warnings.showwarning)
        self._logger.addHandler(self)
        self._logger.setLevel(self.level)
        self._logger.propagate = False
        warnings.showwarning = self._warning
        return self

    def remove(self) -> None:
        self._logger.removeHandler(self)
        level, propagate, showwarning = self._saved
        self._logger.setLevel(level)
        self._logger.propagate = propagate
        warnings.showwarning = showwarning


def log_level(args: argparse.Namespace) -> int:
    """-q: errors only; default warnings; -v info; -vv debug."""
    if getattr(args, "quiet", False):
        return logging.ERROR
    return {0: logging.WARNING, 1: logging.INFO}.get(getattr(args, "verbose", 0), logging.DEBUG)
