"""Pipes, FIFOs and stdin as files: a checked copy on disk that readers may read as often as
they need.

`xlingua embed <(zcat big.gz) -o out.npy` hands the command /dev/fd/63, a pipe that can be read
once and not sought, and `-` is stdin. Commands read their inputs more than once (count and
check, then embed), so `Spool` copies each such input, once, as it arrives, into a hidden file
of a work directory (or of a temporary one) and gives the readers that copy instead:

- every line is checked as it passes, with data.text's checks (NUL bytes, invalid UTF-8, a line
  over max_chars, ids): the error names the argument as typed and the line
  (`/dev/fd/63:2: NUL byte in line (binary file?)`), and so do later reads of the copy;
- gzip content is copied as it comes (the checks read it gunzipped);
- the copy stops with an error when it would leave less than MIN_FREE (1 GiB) of disk free;
- the copies are removed when the block ends, after success or error (a killed run's copy
  keeps a partial name, `.spool-N.partial-PID`, which the next run there removes);
- several streams are copied at the same time, so that one program writing two of them in
  turn (`tee >(cut -f1) ...`) never waits on a pipe nobody reads;
- regular files pass through untouched; `-` may stand for one input only.

Each copy's size and hash (`Copy`) let a job know the same bytes again on a rerun.
"""
from __future__ import annotations

import hashlib
import io
import itertools
import os
import shutil
import stat
import sys
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

from xlingua.data.text import DEFAULT_MAX_CHARS, InputError, check_lines, check_readable, gunzipped, show_as, shown
from xlingua.io import remove_stale_partials

#: a copy stops when it would leave less free disk than this
MIN_FREE = 1 << 30
_CHUNK = 1 << 20
_SERIAL = itertools.count()


def is_stream(path: str) -> bool:
    """True for `-` and for anything that is neither a regular file nor a directory (a pipe,
    a FIFO, /dev/fd/N, a character device): what cannot be read twice."""
    if path == "-":
        return True
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return False
    return not (stat.S_ISREG(mode) or stat.S_ISDIR(mode))


@dataclass(frozen=True)
class Copy:
    """A stream copied to disk: as typed, where its copy is, its size and content hash."""
    typed: str
    path: str
    size: int
    blake2b: str  # the hash io.file_fingerprint gives the copy

    def record(self) -> dict:
        """What a job records of this input to know the same bytes on a rerun."""
        return {"stream": True, "size": self.size, "blake2b": self.blake2b}


class Spool:
    """Context manager: `paths` with every stream replaced by a checked copy on disk (see the
    module docstring), as `.paths`; `.copies` maps an input's position to its Copy. `folder`:
    where copies go (default: a new temporary directory); the other arguments are the checks
    of data.text.read_lines."""

    def __init__(self, paths: Iterable, folder=None, errors: str = "strict",
                 max_chars: int | None = DEFAULT_MAX_CHARS, ids: bool = False, hint: str = ""):
        self.typed = [os.fspath(p) for p in paths]
        self.folder = Path(folder) if folder is not None else None
        self.checks = {"errors": errors, "max_chars": max_chars, "ids": ids, "hint": hint}
        self.paths: list[str] = []
        self.copies: dict[int, Copy] = {}
        self._tmpdir: str | None = None

    def __enter__(self) -> Spool:
        self.paths = check_readable(self.typed)
        streams = [i for i, p in enumerate(self.paths) if is_stream(p)]
        if not streams:
            return self
        try:
            folder = self._where()
            results: dict[int, Copy | BaseException] = {}

            def copy(i: int) -> None:
                try:
                    results[i] = _copy(self.paths[i], folder / _name(i), self.checks)
                except BaseException as exc:  # reported below, in input order
                    results[i] = exc

            threads = [threading.Thread(target=copy, args=(i,), daemon=True) for i in streams[1:]]
            for t in threads:
                t.start()
            copy(streams[0])
            for t in threads:
                t.join()
            for i in streams:
                if isinstance(results[i], Copy):
                    self.copies[i] = results[i]
            failed = [results[i] for i in streams if not isinstance(results[i], Copy)]
            if failed:
                raise failed[0]
            for i, c in self.copies.items():
                self.paths[i] = c.path
                show_as(c.path, shown(c.typed))
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc) -> bool:
        self.close()
        return False

    def close(self) -> None:
        """Remove the copies (and the temporary directory)."""
        for c in self.copies.values():
            show_as(c.path, None)
            Path(c.path).unlink(missing_ok=True)
        self.copies = {}
        if self._tmpdir is not None:
            shutil.rmtree(self._tmpdir, ignore_errors=True)
            self._tmpdir = None

    def _where(self) -> Path:
        if self.folder is None:
            self._tmpdir = tempfile.mkdtemp(prefix="xlingua-spool-")
            return Path(self._tmpdir)
        self.folder.mkdir(parents=True, exist_ok=True)
        remove_stale_partials(self.folder)  # copies a killed run left
        return self.folder


def _name(i: int) -> str:
    return f".spool-{i}-{next(_SERIAL)}.partial-{os.getpid()}"


def _copy(typed: str, dest: Path, checks: dict) -> Copy:
    """Copy one stream to `dest`, checking its lines on the way; `dest` is gone after an error."""
    src = sys.stdin.buffer if typed == "-" else open(typed, "rb", buffering=0)
    try:
        with open(dest, "wb") as out:
            tee = _Tee(src, out, typed, dest.parent)
            reader = io.BufferedReader(tee, buffer_size=_CHUNK)
            for _ in check_lines(gunzipped(reader), shown(typed), **checks):
                pass
            while reader.read(_CHUNK):  # what follows the end of gzip content, if anything
                pass
        return Copy(typed, str(dest), tee.size, tee.hash.hexdigest())
    except BaseException:
        dest.unlink(missing_ok=True)
        raise
    finally:
        if typed != "-":
            src.close()


class _Tee(io.RawIOBase):
    """A raw reader of `src` that writes every byte it reads to `out`, counting and hashing
    them, and first makes sure the disk keeps MIN_FREE."""

    def __init__(self, src, out, typed: str, folder: Path):
        self.src, self.out, self.typed, self.folder = src, out, typed, folder
        self.size = 0
        self.hash = hashlib.blake2b(digest_size=16)
        self._read = getattr(src, "readinto1", src.readinto)  # one read: lines are checked as they come

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        n = self._read(buffer) or 0
        if n:
            data = memoryview(buffer)[:n]
            self._room(n)
            try:
                self.out.write(data)
            except OSError as exc:  # an InputError, which the line checks do not take for bad gzip
                raise InputError(f"{shown(self.typed)}: cannot copy it to {self.folder}: "
                                 f"{exc.strerror or exc}") from None
            self.hash.update(data)
            self.size += n
        return n

    def _room(self, n: int) -> None:
        st = os.statvfs(self.folder)
        free = st.f_bavail * st.f_frsize
        if free - n < MIN_FREE:
            raise InputError(f"{shown(self.typed)}: copying it to {self.folder} would leave less than "
                             f"{MIN_FREE / (1 << 30):g} GiB of disk free (stopped after {self.size:,} bytes); "
                             "free space there and rerun")


__all__ = ["MIN_FREE", "Copy", "Spool", "is_stream"]
