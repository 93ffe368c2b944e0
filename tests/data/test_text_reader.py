"""Line readers: every kind of bad input has a defined, tested behaviour."""
from __future__ import annotations

import gzip
import os

import pytest

from xlingua.data.text import InputError, count_lines, read_lines


def _texts(*args, **kw):
    return [line.text for line in read_lines(*args, **kw)]


def test_plain_and_gzip_read_the_same(tmp_path):
    data = "Hallo Welt\n\nこんにちは\r\nlast line without newline".encode()
    plain = tmp_path / "a.txt"
    plain.write_bytes(data)
    packed = tmp_path / "b.txt.gz"
    packed.write_bytes(gzip.compress(data))
    expected = ["Hallo Welt", "", "こんにちは", "last line without newline"]
    assert _texts(str(plain)) == expected
    assert _texts(str(packed)) == expected
    # gzip is recognised by content, not name
    renamed = tmp_path / "c.txt"
    renamed.write_bytes(gzip.compress(data))
    assert _texts(str(renamed)) == expected


def test_several_files_keep_order_and_line_numbers(tmp_path):
    (tmp_path / "1.txt").write_text("a\nb\n")
    (tmp_path / "2.txt").write_text("c\n")
    lines = list(read_lines([str(tmp_path / "1.txt"), str(tmp_path / "2.txt")]))
    assert [(os.path.basename(l.path), l.number, l.text) for l in lines] == [
        ("1.txt", 1, "a"), ("1.txt", 2, "b"), ("2.txt", 1, "c")]


def test_empty_lines_are_kept(tmp_path):
    (tmp_path / "e.txt").write_text("\n\nx\n\n")
    assert _texts(str(tmp_path / "e.txt")) == ["", "", "x", ""]
    assert count_lines([str(tmp_path / "e.txt")]) == 4


def test_bom_is_dropped_only_at_start(tmp_path):
    (tmp_path / "bom.txt").write_bytes(b"\xef\xbb\xbfone\n\xef\xbb\xbftwo\n")
    assert _texts(str(tmp_path / "bom.txt")) == ["one", "\ufefftwo"]


def test_invalid_utf8_names_file_and_line(tmp_path):
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"fine\nalso fine\nbroken \xff\xfe here\nafter\n")
    with pytest.raises(InputError, match=r"bad\.txt:3: invalid UTF-8 at byte 7 of the line$"):
        list(read_lines(str(bad)))  # no hint: the caller names its own option, if it has one
    with pytest.raises(InputError, match=r"bad\.txt:3: invalid UTF-8 at byte 7 of the line; use X$"):
        list(read_lines(str(bad), hint="use X"))
    assert _texts(str(bad), errors="replace") == ["fine", "also fine", "broken \ufffd\ufffd here", "after"]


def test_nul_byte_is_an_error_even_with_replace(tmp_path):
    bad = tmp_path / "nul.txt"
    bad.write_bytes(b"ok\nbin\x00ary\n")
    for errors in ("strict", "replace"):
        with pytest.raises(InputError, match=r"nul\.txt:2: NUL byte"):
            list(read_lines(str(bad), errors=errors))


def test_long_line_is_kept_whole_under_the_limit(tmp_path):
    long = "ab " * 33_334  # 100,002 characters
    (tmp_path / "long.txt").write_text(f"short\n{long}\nend\n")
    assert _texts(str(tmp_path / "long.txt")) == ["short", long, "end"]


def test_line_over_max_chars_is_an_error(tmp_path):
    (tmp_path / "long.txt").write_text("short\n" + "é" * 101 + "\n")
    with pytest.raises(InputError, match=r"long\.txt:2: line has 101 characters, over --max-chars 100"):
        list(read_lines(str(tmp_path / "long.txt"), max_chars=100))
    # far over the limit: caught while reading, without loading the whole line
    (tmp_path / "huge.txt").write_text("x" * 5000)
    with pytest.raises(InputError, match=r"huge\.txt:1: line is over --max-chars 100"):
        list(read_lines(str(tmp_path / "huge.txt"), max_chars=100))
    assert _texts(str(tmp_path / "long.txt"), max_chars=101)[1] == "é" * 101


def test_missing_and_unreadable_files(tmp_path, monkeypatch):
    with pytest.raises(InputError, match=r"^.*nope\.txt: no such file$"):
        list(read_lines(str(tmp_path / "nope.txt")))
    with pytest.raises(InputError, match="is a directory"):
        list(read_lines(str(tmp_path)))
    locked = tmp_path / "locked.txt"
    locked.write_text("x\n")
    locked.chmod(0)
    try:
        if os.access(locked, os.R_OK):  # root reads anything: make the check say no
            real = os.access
            monkeypatch.setattr(os, "access", lambda p, m: False if str(p) == str(locked) else real(p, m))
        with pytest.raises(InputError, match=r"locked\.txt: permission denied"):
            list(read_lines(str(locked)))
    finally:
        locked.chmod(0o644)


def test_missing_file_fails_before_reading_the_others(tmp_path):
    (tmp_path / "ok.txt").write_text("a\n")
    reader = read_lines([str(tmp_path / "ok.txt"), str(tmp_path / "missing.txt")])
    with pytest.raises(InputError, match="missing.txt: no such file"):
        next(reader)


def test_corrupt_gzip_names_file(tmp_path):
    packed = gzip.compress(("line\n" * 1000).encode())
    (tmp_path / "cut.gz").write_bytes(packed[: len(packed) // 2])
    with pytest.raises(InputError, match=r"cut\.gz:\d+: cannot read"):
        list(read_lines(str(tmp_path / "cut.gz")))


def test_ids_column(tmp_path):
    (tmp_path / "ids.tsv").write_text("s1\tHello\ts2 tab kept\ns2\t\n")
    lines = list(read_lines(str(tmp_path / "ids.tsv"), ids=True))
    assert [(l.id, l.text) for l in lines] == [("s1", "Hello\ts2 tab kept"), ("s2", "")]
    (tmp_path / "noid.tsv").write_text("s1\tok\nno tab\n")
    with pytest.raises(InputError, match=r"noid\.tsv:2: expected id<TAB>sentence"):
        list(read_lines(str(tmp_path / "noid.tsv"), ids=True))


def test_reader_is_lazy(tmp_path):
    (tmp_path / "late.txt").write_bytes(b"a\nb\n\xff\n")
    reader = read_lines(str(tmp_path / "late.txt"))
    assert next(reader).text == "a"  # the bad third line has not been read yet
    assert next(reader).text == "b"
    with pytest.raises(InputError):
        next(reader)
