"""data.spool: a stream (FIFO, `-`) copied once, checked as it passes, named as typed in every
error, removed afterwards; files pass through; the disk keeps its reserve."""
from __future__ import annotations

import gzip
import io
import os
import subprocess
import sys

import pytest

from tests.fifo import fifos
from xlingua.data import spool as spool_module
from xlingua.data.spool import Spool, is_stream
from xlingua.data.text import InputError, read_lines, read_pairs
from xlingua.io import file_fingerprint

DATA = "Hallo Welt\n\nこんにちは\r\nlast line\n".encode()


def _texts(path, **kw):
    return [line.text for line in read_lines(path, **kw)]


def test_a_fifo_is_copied_once_and_read_twice_from_the_copy(tmp_path):
    (tmp_path / "f").mkdir()
    with fifos(tmp_path / "f", DATA) as (fifo,):
        with Spool([str(fifo)]) as spool:
            copy = spool.paths[0]
            assert copy != str(fifo) and os.path.isfile(copy)
            first, second = _texts(copy), _texts(copy)
            c = spool.copies[0]
            assert (c.typed, c.size, c.blake2b) == (str(fifo), len(DATA), file_fingerprint(copy))
        assert not os.path.exists(copy) and not os.path.exists(os.path.dirname(copy))
    assert first == second == ["Hallo Welt", "", "こんにちは", "last line"]


def test_files_pass_through_untouched(tmp_path):
    path = tmp_path / "a.txt"
    path.write_bytes(DATA)
    with Spool([str(path)]) as spool:
        assert spool.paths == [str(path)] and spool.copies == {}
    assert path.read_bytes() == DATA


def test_is_stream(tmp_path):
    os.mkfifo(tmp_path / "p")
    (tmp_path / "f").write_text("x")
    assert [is_stream(p) for p in ("-", str(tmp_path / "p"), "/dev/null")] == [True, True, True]
    assert [is_stream(str(p)) for p in (tmp_path / "f", tmp_path, tmp_path / "missing")] == [False, False, False]


def test_stdin_is_copied_and_named_stdin(tmp_path, monkeypatch):
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BufferedReader(io.BytesIO(b"one\ntwo\n"))))
    with Spool(["-"], tmp_path) as spool:
        assert _texts(spool.paths[0]) == ["one", "two"]
        with pytest.raises(InputError) as err:
            list(read_lines(spool.paths[0], ids=True))
    assert str(err.value) == "<stdin>:1: expected id<TAB>sentence (no tab found)"
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("data, kw, message", [
    (b"ok\nb\x00ad\n", {}, "{}:2: NUL byte in line (binary file?)"),
    (b"ok\ncaf\xe9\n", {"hint": "pass --errors replace"}, "{}:2: invalid UTF-8 at byte 3 of the line; pass --errors replace"),
    (b"ok\n" + b"x" * 30 + b"\n", {"max_chars": 10},
     "{}:2: line has 30 characters, over --max-chars 10; raise --max-chars to embed it whole"),
    (b"a\tone\ntwo\n", {"ids": True}, "{}:2: expected id<TAB>sentence (no tab found)"),
    (gzip.compress(b"ok\nb\x00ad\n"), {}, "{}:2: NUL byte in line (binary file?)"),
])
def test_bad_lines_name_the_argument_as_typed_and_leave_nothing(tmp_path, data, kw, message):
    work = tmp_path / "work"
    with fifos(tmp_path, data) as (fifo,):
        with pytest.raises(InputError) as err:
            with Spool([str(fifo)], work, **kw):
                pass
    assert str(err.value) == message.format(fifo)
    assert list(work.iterdir()) == []


def test_gzip_is_copied_as_it_came_and_read_gunzipped(tmp_path):
    packed = gzip.compress(DATA, mtime=0)
    with fifos(tmp_path, packed) as (fifo,):
        with Spool([str(fifo)]) as spool:
            with open(spool.paths[0], "rb") as f:
                assert f.read() == packed
            assert _texts(spool.paths[0]) == ["Hallo Welt", "", "こんにちは", "last line"]


def test_errors_of_a_later_read_name_the_argument_too(tmp_path):
    with fifos(tmp_path, b"one\ntwo\nthree\n") as (fifo,):
        other = tmp_path / "b.txt"
        other.write_text("eins\nzwei\n")
        with Spool([str(fifo), str(other)]) as spool:
            with pytest.raises(InputError) as err:
                list(read_pairs(spool.paths))
    assert str(err.value) == f"{fifo} and {other} have different line counts"


def test_stdin_may_stand_for_one_input_only(tmp_path):
    with pytest.raises(InputError) as err:
        Spool(["-", "-"]).__enter__()
    assert str(err.value) == ("- (stdin) can stand for one input only, and is given 2 times; "
                              "give the others as files or as <(command)")


def test_the_copy_stops_before_the_disk_keeps_less_than_the_reserve(tmp_path, monkeypatch):
    monkeypatch.setattr(spool_module, "MIN_FREE", 1 << 60)  # more than any disk has
    work = tmp_path / "work"
    with fifos(tmp_path, DATA) as (fifo,):
        with pytest.raises(InputError) as err:
            Spool([str(fifo)], work).__enter__()
    assert str(err.value).startswith(f"{fifo}: copying it to {work} would leave less than ")
    assert "GiB of disk free (stopped after 0 bytes); free space there and rerun" in str(err.value)
    assert list(work.iterdir()) == []


def test_two_fifos_written_in_turn_by_one_writer_are_both_copied(tmp_path):
    """As `tee >(cut -f1) | cut -f2` writes them: copying one to its end before reading the
    other would wait forever on a full pipe (here the writer gives up and cuts both short)."""
    a = b"".join(b"source line %d\n" % i for i in range(20_000))  # far over a pipe's 64 KiB
    b = b"".join(b"target line %d\n" % i for i in range(20_000))
    with fifos(tmp_path, a, b, chunk=4096) as paths:
        with Spool([str(p) for p in paths]) as spool:
            got = [open(p, "rb").read() for p in spool.paths]
    assert got == [a, b]


def test_a_killed_runs_copy_is_removed_by_the_next_run(tmp_path):
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    stale = tmp_path / f".spool-0-0.partial-{int(dead.stdout)}"
    stale.write_text("left by a kill -9")
    with fifos(tmp_path, DATA, names=["in"]) as (fifo,):
        with Spool([str(fifo)], tmp_path) as spool:
            assert not stale.exists()
            assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["in", os.path.basename(spool.paths[0])])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in"]
