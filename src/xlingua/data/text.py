"""Reading sentences from text files, one a line, as a stream.

Inputs are plain or gzip files (detected by their magic bytes, not the name) or `-` for
stdin; a pipe or FIFO is read as it comes (data.spool copies one to disk for the readers that
pass over their input twice, and errors then name the argument as typed: `shown`). Each line is one sentence, or `id<TAB>sentence` when `ids=True`. Defined behaviour for
bad input, so that lines and output rows never drift apart:

- invalid UTF-8: an error naming file and line, unless errors="replace" (U+FFFD substituted);
- a NUL byte: always an error naming file and line (usually a binary file given by mistake);
- empty lines: kept, as empty strings, so row i is always line i;
- very long lines: kept whole (the encoder's window policy applies); above `max_chars` an
  error naming file and line (raise `max_chars` to accept them);
- missing or unreadable files: a one-line error before anything is read;
- a line ending: "\\n" or "\\r\\n" is removed; a UTF-8 byte-order mark at the start is dropped.
"""
from __future__ import annotations

import gzip
import io
import os
import sys
from dataclasses import dataclass
from itertools import zip_longest
from pathlib import Path
from typing import IO, Iterable, Iterator

#: above this many characters a line is an error (100k-character lines are fine by default)
DEFAULT_MAX_CHARS = 1_000_000
ERRORS = ("strict", "replace")
_GZIP_MAGIC = b"\x1f\x8b"
_BOM = b"\xef\xbb\xbf"
#: the end of the invalid-UTF-8 message for commands that have an --errors option
ERRORS_HINT = "pass --errors replace to substitute U+FFFD"


class InputError(ValueError):
    """Bad input, with the file and line it was found at."""


@dataclass(frozen=True)
class Line:
    path: str
    number: int  # 1-based, within its file
    text: str
    id: str | None = None


def check_readable(paths: Iterable[str]) -> list[str]:
    """Fail early, with one line, on inputs that do not exist or cannot be read."""
    paths = list(paths)
    if not paths:
        raise InputError("no input given (use - for stdin)")
    for path in paths:
        if path == "-":
            continue
        if not os.path.exists(path):
            raise InputError(f"{path}: no such file")
        if os.path.isdir(path):
            raise InputError(f"{path}: is a directory, not a text file")
        if not os.access(path, os.R_OK):
            raise InputError(f"{path}: permission denied")
    if paths.count("-") > 1:
        raise InputError(f"- (stdin) can stand for one input only, and is given {paths.count('-')} times; "
                         "give the others as files or as <(command)")
    return paths


#: the copy of a stream on disk -> the argument as typed (data.spool fills it)
_SHOWN: dict[str, str] = {}


def shown(path) -> str:
    """How messages name an input: `<stdin>` for -, the argument as typed for a stream's copy
    on disk (data.spool), else the path itself."""
    path = os.fspath(path)
    return "<stdin>" if path == "-" else _SHOWN.get(path, path)


def show_as(path, name: str | None) -> None:
    """Name `path` `name` in messages from now on (None: by itself again)."""
    if name is None:
        _SHOWN.pop(os.fspath(path), None)
    else:
        _SHOWN[os.fspath(path)] = name


def gunzipped(f: IO[bytes]) -> IO[bytes]:
    """`f` (a buffered reader), gunzipped when it starts with the gzip magic. It peeks, never
    seeks, so that a pipe works as a file does."""
    if not hasattr(f, "peek"):
        f = io.BufferedReader(f)
    return gzip.GzipFile(fileobj=f, mode="rb") if f.peek(2)[:2] == _GZIP_MAGIC else f


def open_binary(path: str) -> IO[bytes]:
    """Open a file (or `-`, a pipe, a FIFO) for reading bytes, gunzipping gzip content."""
    if path == "-":
        return gunzipped(sys.stdin.buffer)
    try:
        f = open(path, "rb")
    except OSError as e:
        raise InputError(f"{shown(path)}: {e.strerror or e}") from None
    return gunzipped(f)


def read_lines(
    paths: Iterable[str] | str,
    errors: str = "strict",
    max_chars: int | None = DEFAULT_MAX_CHARS,
    ids: bool = False,
    hint: str = "",
) -> Iterator[Line]:
    """Yield every line of every input in order, one at a time (never the whole file).
    `hint` ends the invalid-UTF-8 message (e.g. the option that accepts such input)."""
    if isinstance(paths, (str, os.PathLike)):
        paths = [os.fspath(paths)]
    if errors not in ERRORS:
        raise ValueError(f"errors must be one of {ERRORS}, got {errors!r}")
    for path in check_readable([os.fspath(p) for p in paths]):
        yield from _read_one(path, errors, max_chars, ids, hint)


def _read_one(path: str, errors: str, max_chars: int | None, ids: bool, hint: str) -> Iterator[Line]:
    f = open_binary(path)
    try:
        yield from check_lines(f, shown(path), errors, max_chars, ids, hint)
    finally:
        if path != "-":
            f.close()


def check_lines(f: IO[bytes], name: str, errors: str = "strict", max_chars: int | None = DEFAULT_MAX_CHARS,
                ids: bool = False, hint: str = "") -> Iterator[Line]:
    """The lines of an open binary file, checked as the module docstring says; errors name
    `name` and the line."""
    number = 0
    # A line can't hold more than 4 bytes per character: reading at most that much keeps a
    # newline-free multi-gigabyte "line" out of memory.
    limit = -1 if max_chars is None else 4 * max_chars + 3
    while True:
        try:
            raw = f.readline(limit)
        except (OSError, EOFError, gzip.BadGzipFile) as e:
            raise InputError(f"{name}:{number + 1}: cannot read (corrupt gzip?): {e}") from None
        if not raw:
            return
        number += 1
        if number == 1 and raw.startswith(_BOM):
            raw = raw[len(_BOM):]
        if raw.endswith(b"\n"):
            raw = raw[:-2] if raw.endswith(b"\r\n") else raw[:-1]
        elif len(raw) == limit:
            raise InputError(f"{name}:{number}: line is over --max-chars {max_chars:,}; "
                             "raise --max-chars to embed it whole")
        if b"\x00" in raw:
            raise InputError(f"{name}:{number}: NUL byte in line (binary file?)")
        try:
            text = raw.decode("utf-8", errors=errors)
        except UnicodeDecodeError as e:
            raise InputError(f"{name}:{number}: invalid UTF-8 at byte {e.start} of the line"
                             + (f"; {hint}" if hint else "")) from None
        if max_chars is not None and len(text) > max_chars:
            raise InputError(
                f"{name}:{number}: line has {len(text):,} characters, over --max-chars "
                f"{max_chars:,}; raise --max-chars to embed it whole"
            )
        key = None
        if ids:
            key, sep, text = text.partition("\t")
            if not sep:
                raise InputError(f"{name}:{number}: expected id<TAB>sentence (no tab found)")
        yield Line(name, number, text, key)


def read_texts(path: str | os.PathLike, max_chars: int | None = None) -> Iterator[str]:
    """The lines of one data file (benchmark, training pairs) as strings, with the same checks
    and error format as `read_lines`."""
    return (line.text for line in read_lines(path, max_chars=max_chars))


def read_whole(path: str | os.PathLike) -> str:
    """A small file (a config, a result) as text; invalid UTF-8 names file and line."""
    data = Path(path).read_bytes()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        column = e.start - data.rfind(b"\n", 0, e.start) - 1
        raise InputError(f"{shown(path)}:{line}: invalid UTF-8 at byte {column} of the line") from None


def count_lines(paths: Iterable[str], errors: str = "strict", max_chars: int | None = DEFAULT_MAX_CHARS,
                ids: bool = False, hint: str = "") -> int:
    """Count (and so validate) all lines; bad input fails here, before any model runs."""
    return sum(1 for _ in read_lines(paths, errors=errors, max_chars=max_chars, ids=ids, hint=hint))


def read_pairs(paths: list[str], errors: str = "strict",
               max_chars: int | None = DEFAULT_MAX_CHARS) -> Iterator[tuple[Line, Line]]:
    """Translation pairs, in order: from two line-aligned files (SRC, TGT), or from one file of
    `src<TAB>tgt` lines. Call `count_pairs` first: it checks that two files have equal line
    counts (here a shorter file is an error too, but only when it is reached). Each input is read
    once, so one of them may be `-` or a pipe."""
    paths = check_readable(paths)
    if len(paths) == 1:
        for line in read_lines(paths, errors=errors, max_chars=max_chars, hint=ERRORS_HINT):
            src, sep, tgt = line.text.partition("\t")
            if not sep:
                raise InputError(f"{line.path}:{line.number}: expected src<TAB>tgt (no tab found)")
            yield Line(line.path, line.number, src), Line(line.path, line.number, tgt)
        return
    if len(paths) != 2:
        raise InputError(f"give one src<TAB>tgt file or two line-aligned files, got {len(paths)}")
    end = Line("", 0, "")
    src_lines = read_lines(paths[0], errors=errors, max_chars=max_chars, hint=ERRORS_HINT)
    tgt_lines = read_lines(paths[1], errors=errors, max_chars=max_chars, hint=ERRORS_HINT)
    for a, b in zip_longest(src_lines, tgt_lines, fillvalue=end):
        if a is end or b is end:
            raise InputError(f"{shown(paths[0])} and {shown(paths[1])} have different line counts")
        yield a, b


def count_pairs(paths: list[str], errors: str = "strict", max_chars: int | None = DEFAULT_MAX_CHARS) -> int:
    """Count (and so validate) all pairs; two files with different line counts are an error
    naming both files and both counts, before any model runs. This reads every input, so a
    caller that reads them again gives streams through data.spool first."""
    paths = check_readable(paths)
    if len(paths) == 2 and "-" not in paths:
        n_src, n_tgt = (count_lines([p], errors=errors, max_chars=max_chars, hint=ERRORS_HINT) for p in paths)
        if n_src != n_tgt:
            raise InputError(f"{shown(paths[0])} has {n_src:,} lines but {shown(paths[1])} has {n_tgt:,}; "
                             "the files must be line-aligned")
        return n_src
    return sum(1 for _ in read_pairs(paths, errors=errors, max_chars=max_chars))


def two_columns(line: Line, expected: str, error: type[ValueError] = InputError) -> tuple[str, str]:
    """The two tab-separated columns of `line`, both non-empty; otherwise `error` naming file:line
    and what was `expected`."""
    cols = line.text.split("\t")
    if len(cols) != 2 or not cols[0].strip() or not cols[1].strip():
        raise error(f"{line.path}:{line.number}: expected {expected}, got {line.text[:80]!r}")
    return cols[0], cols[1]


def read_gold(path) -> list[tuple[int, str, str]]:
    """Gold pairs `src-id<TAB>tgt-id`, one a line (ids, or 1-based line numbers when the
    corpora have no ids), as (line number in the gold file, src id, tgt id); blank lines skipped.
    Whether each id exists is for the caller to check against its corpora."""
    pairs = []
    for line in read_lines(path, max_chars=None):
        if not line.text.strip():
            continue
        src, tgt = two_columns(line, "src-id<TAB>tgt-id")
        pairs.append((line.number, src.strip(), tgt.strip()))
    if not pairs:
        raise InputError(f"{shown(path)}: no gold pairs")
    return pairs


__all__ = ["DEFAULT_MAX_CHARS", "ERRORS", "ERRORS_HINT", "InputError", "Line", "check_lines", "check_readable",
           "count_lines", "count_pairs", "gunzipped", "open_binary", "read_gold", "read_lines", "read_pairs",
           "read_texts", "read_whole", "show_as", "shown", "two_columns"]

