"""The recorder: every request and answer of a session, scrubbed, into a HAR 1.2 file.

:class:`Recorder` is an :attr:`HttpSession.interceptor <mddframes.http.session.HttpSession>`:
it lets requests send the call, then puts a tee on the answer's body, which copies each
piece the client reads, scrubbed, into a spool as it passes (a text answer into a
:class:`~.spool.TextSpool`: memory up to 1 MiB, past that escaped into a private
temporary file; a binary one into a :class:`~.spool.BinarySpool`, the same way, but
an export's zip held in memory as it came, to be rebuilt scrubbed). When the body is read to
its end, or the answer is closed, the recorder's writer thread writes the entry: its
headers and URL scrubbed (:mod:`.scrub`), its body copied from the spool a piece at a
time, so a 31 MB answer is never held.

Nothing reaches the named file before :meth:`Recorder.close`: the entries go to a
private temporary file next to it (``0600``, :mod:`mddframes.disk_modes`) after room
left for the header; the close writes the header (what was scrubbed, counted) into that
room and renames the file onto the name, atomically.
"""

from __future__ import annotations

import base64
import codecs
import json
import os
import queue
import tempfile
import threading
import time
import zipfile
from collections.abc import Callable, Iterable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any
from urllib.parse import urlsplit

import orjson
import requests

from mddframes._version import __version__
from mddframes.disk_modes import open_private
from mddframes.recording.har import ENCODED_MARK, har_entry, is_text
from mddframes.recording.redact import Redactor, redacts
from mddframes.recording.scrub import CREDENTIAL_HEADERS, HOST_PLACEHOLDER, Scrubber
from mddframes.recording.spool import BinarySpool, TextSpool, escaped

__all__ = ["Recorder"]

_SPOOL_IN_MEMORY = 1 << 20
_HEADER_ROOM = 1 << 16
_QUEUED = 64  # finished calls waiting for the writer thread at most
# the writer thread's piece of a large body: large pieces, so that it takes the GIL
# from the threads reading and parsing a few dozen times a body, not thousands
_CHUNK = 1 << 18


class Recorder:
    """Record every call of the sessions it is attached to into ``path`` (HAR 1.2).

    Parameters
    ----------
    path : path
        The HAR file to write (replaced atomically when the recorder is closed).
    redact_values : bool
        Also replace every string and number of table, mapping, element and raw-data
        bodies by a stable placeholder of the same type (:mod:`.redact`).
    spool_in_memory : int
        How many bytes of an answer are kept in memory before the rest goes to a
        private temporary file (scrubbed first, whatever the size; a zip stays in
        memory).

    Notes
    -----
    Safe to share between threads (bulk reads record from several at once). The
    entries are in the order their answers ended.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        redact_values: bool = False,
        spool_in_memory: int = _SPOOL_IN_MEMORY,
    ) -> None:
        self.path = Path(path)
        if self.path.is_dir():
            raise IsADirectoryError(f"the recording {self.path} is a folder, not a file")
        folder = self.path.parent
        if not folder.is_dir():
            raise FileNotFoundError(f"the folder of the recording {self.path} does not exist")
        #: Where a large answer's spool goes (the recording's folder: the same disk).
        self.spool_folder = str(folder)
        self.spool_in_memory = spool_in_memory
        self._scrubber: Scrubber | None = None
        self._redactor = Redactor() if redact_values else None
        self._lock = threading.Lock()
        # one private temporary file, renamed onto the name at the close: the header's
        # room is kept free at its start (filled in at the close, when the counts are
        # known), so the entries are never copied
        self._temporary = folder / f".{self.path.name[:40]}.{os.getpid()}.{id(self)}.har.tmp"
        self._entries = open_private(self._temporary, "wb", buffering=_CHUNK)
        self._entries.write(b" " * _HEADER_ROOM)
        self._count = 0
        self._pending: set[_Tee] = set()
        self._closed = False
        self._started = datetime.now(UTC)
        # the entries are written by one thread of the recorder's own, in the order the
        # answers ended: the calling threads only hand them over (the writer works while
        # they wait on the network), and a bounded queue keeps a slow disk from piling
        # up spools
        self._queue: queue.Queue[_Tee | None] = queue.Queue(maxsize=_QUEUED)
        self._writer: threading.Thread | None = None
        self._failure: BaseException | None = None

    def __repr__(self) -> str:
        return f"<Recorder {str(self.path)!r}: {self._count} entries>"

    @property
    def entries(self) -> int:
        """How many calls were written so far."""
        return self._count

    # -- attaching --------------------------------------------------------------------

    def attach(self, http: Any) -> None:
        """Record the calls of ``http`` (an :class:`~mddframes.http.session.HttpSession`)."""
        settings = http.settings
        host = urlsplit(settings.base_url).netloc
        with self._lock:
            if self._scrubber is None:
                self._scrubber = Scrubber(settings.client_secret.reveal(), settings.client_id, host)
            else:
                self._scrubber.add("client secret", settings.client_secret.reveal())
        http.interceptor = self.send

    @property
    def scrubber(self) -> Scrubber:
        """The scrubber (the first attached session's secrets and host)."""
        if self._scrubber is None:
            raise RuntimeError("the recorder is attached to no session")
        return self._scrubber

    # -- the interceptor ----------------------------------------------------------------

    def send(
        self,
        send: Callable[..., requests.Response],
        entry: Any,
        prepared: requests.PreparedRequest,
        **kwargs: Any,
    ) -> requests.Response:
        """Send ``prepared`` with ``send`` and tee its answer's body into the recording."""
        started = datetime.now(UTC)
        clock = time.perf_counter()
        response = send(prepared, **kwargs)
        waited = time.perf_counter() - clock
        # learned before the body is read: the tee scrubs it on its way to the spool
        self.scrubber.learn_headers(prepared.headers)
        self.scrubber.learn_headers(response.headers)
        tee = _Tee(response.raw, self, prepared, response, entry.operation, started, waited)
        with self._lock:
            self._pending.add(tee)
        response.raw = tee
        return response

    # -- writing ----------------------------------------------------------------------

    def _write(self, tee: _Tee) -> None:
        """Write one finished call (its body in ``tee.text`` or ``tee.binary``) to the
        entries file."""
        scrubber = self.scrubber
        if (
            tee.operation == "getToken"
            and 200 <= tee.response.status_code < 300
            and tee.text is not None
        ):
            scrubber.learn_token_answer(tee.text.raw())
        redactor = self._redactor if self._redactor and redacts(tee.operation) else None
        # orjson: an entry's JSON in a tenth of json.dumps's time (recording adds at most
        # 10 % to a session of many small calls)
        head, _, tail = orjson.dumps(har_entry(tee, scrubber, redactor)).partition(ENCODED_MARK)
        with self._lock:
            out = self._entries
            out.write(b",\n" if self._count else b"\n")
            out.write(head)
            out.write(b'"')
            _write_body(tee, out, scrubber, redactor)
            out.write(b'"')
            out.write(tail)
            self._count += 1
            self._pending.discard(tee)

    def _hand_over(self, tee: _Tee) -> None:
        """Queue a finished call for the writer thread (started with the first one)."""
        with self._lock:
            if self._writer is None:
                self._writer = threading.Thread(
                    target=self._write_queued, name="mddframes-recorder", daemon=True
                )
                self._writer.start()
        self._queue.put(tee)

    def _write_queued(self) -> None:
        while (tee := self._queue.get()) is not None:
            try:
                if self._failure is None:
                    self._write(tee)
            except BaseException as exc:  # reported by close(), never lost
                self._failure = exc
            finally:
                tee.close_spool()

    def close(self) -> Path:
        """Write the file (header, then the entries) atomically, owner-only.

        Calls whose answers were never read or closed are written with what was read.

        Returns
        -------
        pathlib.Path
            The recording.

        Raises
        ------
        RuntimeError
            An entry could not be written (the recording is then not written either).
        """
        with self._lock:
            if self._closed:
                return self.path
            pending = list(self._pending)
        for tee in pending:
            tee.finish(complete=False)
        if self._writer is not None:
            self._queue.put(None)
            self._writer.join()
        if self._failure is not None:
            self._entries.close()
            self._temporary.unlink(missing_ok=True)
            with self._lock:
                self._closed = True
            raise RuntimeError(
                f"the recording {self.path} could not be written: {self._failure}"
            ) from self._failure
        with self._lock:
            self._closed = True
            out = self._entries
        try:
            header = self._header().encode("utf-8")
            out.write(b"\n]}}\n")
            if len(header) > _HEADER_ROOM:  # never in practice: the header is ~1.5 KB
                raise RuntimeError(f"the recording's header outgrew its room ({len(header)})")
            out.seek(0)
            out.write(header)  # the rest of the room stays spaces: JSON whitespace
            out.close()
            os.replace(self._temporary, self.path)
        finally:
            out.close()
            self._temporary.unlink(missing_ok=True)
        return self.path

    def _header(self) -> str:
        counts = self._scrubber.counts if self._scrubber else {}
        scrubbed: dict[str, Any] = {
            "clientSecret": bool(counts.get("client secret")),
            "accessTokens": counts.get("token", 0),
            "cookieValues": counts.get("cookie", 0),
            "headers": sorted(CREDENTIAL_HEADERS),
            "host": HOST_PLACEHOLDER,
            "where": "request and answer URLs, query strings, headers and bodies",
        }
        comment = (
            f"Recorded by mddframes {__version__}; scrubbed before writing: the client "
            f"secret, {scrubbed['accessTokens']} access token(s) and "
            f"{scrubbed['cookieValues']} cookie value(s) wherever they appear (URLs, "
            "query strings, headers, bodies, files in zip answers), the value of the "
            + ", ".join(scrubbed["headers"])
            + f" headers, and the tenant's host (now {HOST_PLACEHOLDER}). "
            + (
                "Every string and number of table, mapping, element and raw-data bodies "
                "is replaced by a stable placeholder (--redact-values)."
                if self._redactor
                else "Table, mapping and element contents are kept as served "
                "(record with redact_values=True / --redact-values to replace them)."
            )
            + " Not scrubbed: the client id, the realm, the API prefix."
        )
        log = {
            "version": "1.2",
            "creator": {"name": "mddframes", "version": __version__},
            "comment": comment,
            "_mddframes": {
                "recorded": self._started.isoformat(),
                "entries": self._count,
                "scrubbed": scrubbed,
                "redactedValues": self._redactor is not None,
            },
            "pages": [],
        }
        text = json.dumps({"log": log}, ensure_ascii=False, indent=1)
        return text[: text.rindex("}")].rstrip().rstrip("}").rstrip() + ',\n"entries": ['


class _Tee:
    """``response.raw`` copying what the client reads into a spool for the recorder."""

    def __init__(
        self,
        raw: Any,
        recorder: Recorder,
        request: requests.PreparedRequest,
        response: requests.Response,
        operation: str,
        started: datetime,
        waited: float,
    ) -> None:
        self._raw = raw
        self._recorder = recorder
        self.request = request
        self.response = response
        self.operation = operation
        self.started = started
        self.waited = waited
        self.receiving = 0.0
        self.size = 0
        self.complete = False
        # Every answer is scrubbed as it is spooled (with what is known when it
        # arrives), so one larger than the spool's memory reaches its temporary file
        # scrubbed; the writer scrubs it again only if a secret was learned since. A
        # zip cannot be scrubbed in passing (its members are compressed): its spool
        # keeps it in memory for the writer to rebuild scrubbed. A token answer is
        # kept in memory too: its tokens are learned only once it is whole.
        textual = is_text(response.headers.get("Content-Type", ""))
        folder, in_memory = recorder.spool_folder, recorder.spool_in_memory
        if operation == "getToken":
            in_memory = 1 << 62
        self._scrub = recorder.scrubber.stream()
        self.scrubbed_at = self._scrub.generation
        self.text: TextSpool | None = TextSpool(folder, in_memory) if textual else None
        self.binary: BinarySpool | None = (
            None if textual else BinarySpool(folder, recorder.scrubber.stream(), in_memory)
        )
        self._done = False
        self._guard = threading.Lock()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._raw, name)

    def stream(
        self, amt: int | None = 2**16, decode_content: bool | None = None
    ) -> Iterator[bytes]:
        """The body's pieces, each copied to the spool as it passes."""
        clock = time.perf_counter()
        text, binary = self.text, self.binary
        scrub = self._scrub.feed_into
        for chunk in self._raw.stream(amt, decode_content=decode_content):
            if text is not None:
                scrub(chunk, text.write)
            elif binary is not None:  # (it scrubs what it keeps, a zip excepted)
                binary.write(chunk)
            self.size += len(chunk)
            yield chunk
        self.receiving += time.perf_counter() - clock
        self.finish(complete=True)

    def close(self) -> None:
        """Close the answer; the entry is written with what was read."""
        try:
            self._raw.close()
        finally:
            self.finish(complete=False)

    def release_conn(self) -> None:
        """Return the connection; the entry is written with what was read."""
        try:
            self._raw.release_conn()
        finally:
            self.finish(complete=False)

    def close_spool(self) -> None:
        """Drop what was kept of the body (once its entry is written)."""
        if self.text is not None:
            self.text.close()
        if self.binary is not None:
            self.binary.close()

    def finish(self, *, complete: bool) -> None:
        """Write the entry, once."""
        with self._guard:
            if self._done:
                return
            self._done = True
            self.complete = complete
            if self.text is not None:
                self.text.write(self._scrub.finish())
                self.text.finish()
            if self.binary is not None:
                self.binary.finish()
        self._recorder._hand_over(self)


def _write_body(tee: _Tee, out: IO[bytes], scrubber: Scrubber, redactor: Redactor | None) -> None:
    """The answer's body, as the inside of the entry's JSON string, from its spool."""
    if tee.text is not None:
        _write_text_body(tee, tee.text, out, scrubber, redactor)
    elif tee.binary is not None:
        spooled = tee.binary.file
        if tee.binary.zipped and redactor is not None:
            spooled = redactor.archive(spooled)
        elif tee.binary.zipped:
            spooled = _scrubbed_zip(spooled, scrubber)
        _copy_base64(spooled, out, scrubber)


def _write_text_body(
    tee: _Tee, text: TextSpool, out: IO[bytes], scrubber: Scrubber, redactor: Redactor | None
) -> None:
    """A text body: scrubbed on its way into the spool, so scrubbed again only if a
    secret was learned since (``known``: nothing was)."""
    known = tee.scrubbed_at == scrubber.generation
    if redactor is not None:
        # (a script's text names the data: it is replaced whole)
        json_answer = "json" in tee.response.headers.get("Content-Type", "").lower()
        data = redactor.body(text.raw()) if json_answer else redactor.script(tee.size)
        out.write(escaped(scrubber.bytes(data)))
    elif not text.escaped:  # small: in one piece
        body = text.raw()
        out.write(escaped(body if known else scrubber.bytes(body)))
    elif known:  # large, escaped on its way in: copied
        text.copy_escaped(out)
    else:
        _copy_text(text.raw_pieces(), out, scrubber)


def _copy_text(pieces: Iterable[bytes], out: IO[bytes], scrubber: Scrubber) -> None:
    """The text of ``pieces`` as a JSON string's inside, scrubbed a piece at a time."""
    scrub = scrubber.stream()
    decoder = codecs.getincrementaldecoder("utf-8")("replace")
    for piece in pieces:
        text = decoder.decode(scrub.feed(piece))
        if text:
            out.write(escaped(text))
    text = decoder.decode(scrub.finish(), final=True)
    if text:
        out.write(escaped(text))


def _copy_base64(spool: IO[bytes], out: IO[bytes], scrubber: Scrubber) -> None:
    scrub = scrubber.stream()
    carry = b""
    while chunk := spool.read(_CHUNK):
        data = carry + scrub.feed(chunk)
        whole = len(data) - len(data) % 3
        out.write(base64.b64encode(data[:whole]))
        carry = data[whole:]
    out.write(base64.b64encode(carry + scrub.finish()))


def _scrubbed_zip(spool: IO[bytes], scrubber: Scrubber) -> IO[bytes]:
    """A zip answer with every member's content (and name) scrubbed, in a new spool.

    A secret echoed into a generated script would otherwise survive, compressed.
    """
    rebuilt: IO[bytes] = tempfile.SpooledTemporaryFile(_SPOOL_IN_MEMORY)  # noqa: SIM115
    try:
        with zipfile.ZipFile(spool) as source, zipfile.ZipFile(rebuilt, "w") as target:
            for info in source.infolist():
                name = scrubber.text(info.filename)
                with (
                    source.open(info) as member,
                    target.open(zipfile.ZipInfo(name, info.date_time), "w") as copy,
                ):
                    scrub = scrubber.stream()
                    while chunk := member.read(_CHUNK):
                        copy.write(scrub.feed(chunk))
                    copy.write(scrub.finish())
    except (zipfile.BadZipFile, OSError, ValueError):
        spool.seek(0)
        rebuilt.close()
        return spool  # not a zip after all: scrubbed as bytes
    rebuilt.seek(0)
    return rebuilt
