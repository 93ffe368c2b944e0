import errno
import gzip

import pytest
from mining_toy import toy_corpus, write_lines

from xlingua.data.text import InputError
from xlingua.mining import MineConfig, mine
from xlingua.mining.cache import DiskFullError
from xlingua.mining.toy import CharNgramEncoder

ENC = CharNgramEncoder(dim=128)


def _mine(tmp_path, src, tgt, **kw):
    out = tmp_path / "o.tsv.gz"
    opts = {"workdir": tmp_path / "wd", "encoder": ENC, "show_progress": False, "calibrate": kw.pop("calibrate", None)}
    summary = mine(src, tgt, out, MineConfig(kw.pop("src_lang", "en"), kw.pop("tgt_lang", "en"), **kw), **opts)
    with gzip.open(out, "rt", encoding="utf-8") as f:
        return summary, [line.rstrip("\n").split("\t") for line in f]


def test_empty_corpus_is_an_error_naming_the_file(tmp_path):
    empty = write_lines(tmp_path / "empty.txt", ["", "  "])
    other = write_lines(tmp_path / "t.txt", ["a sentence"])
    with pytest.raises(ValueError, match=r"empty\.txt: no sentences \(2 lines, 2 blank\)"):
        _mine(tmp_path, empty, other)
    assert not (tmp_path / "o.tsv.gz").exists()


def test_one_line_corpora_give_one_pair(tmp_path):
    s, rows = _mine(tmp_path, write_lines(tmp_path / "s.txt", ["hello world"]),
                    write_lines(tmp_path / "t.txt", ["hello world!"]))
    assert [r[1:] for r in rows] == [["hello world", "hello world!"]]
    assert s["index"]["fwd"]["k"] == 1  # k is capped by the corpus size


def test_identical_lines_without_and_with_dedup(tmp_path):
    src = write_lines(tmp_path / "s.txt", ["same line here"] * 5 + ["another one"])
    tgt = write_lines(tmp_path / "t.txt", ["same line here"] * 3 + ["another one"])
    s, rows = _mine(tmp_path, src, tgt, mode="union")
    assert s["src"]["sentences"] == 6 and s["src"]["duplicates_removed"] == 0
    # copies are distinct rows: the same text pair may appear more than once
    assert sum(r[1] == "same line here" for r in rows) >= 2
    s, rows = _mine(tmp_path, src, tgt, mode="union", dedup=True)
    assert s["src"]["duplicates_removed"] == 4 and s["tgt"]["duplicates_removed"] == 2
    assert sorted((r[1], r[2]) for r in rows) == [("another one", "another one"),
                                                  ("same line here", "same line here")]


def test_long_lines_are_kept_whole(tmp_path):
    long = "word " * 5000 + "end"
    s, rows = _mine(tmp_path, write_lines(tmp_path / "s.txt", [long, "short one"]),
                    write_lines(tmp_path / "t.txt", [long + "!", "short one"]))
    assert {r[1] for r in rows} == {long, "short one"}
    assert s["src"]["longest_chars"] == len(long)


def test_corpus_not_in_the_given_language(tmp_path):
    src, tgt, _ = toy_corpus()
    sp, tp = write_lines(tmp_path / "s.txt", src), write_lines(tmp_path / "t.txt", tgt)
    with pytest.raises(ValueError, match=r"s\.txt: only 0% of the letters are in the cjk script"):
        _mine(tmp_path, sp, tp, src_lang="zh")
    _mine(tmp_path, sp, tp, src_lang="zh", check_lang=False)  # the documented way out


def test_unequal_id_formats(tmp_path):
    with_ids = write_lines(tmp_path / "s.tsv", ["a b c", "d e f"], ids=["s1", "s2"])
    without = write_lines(tmp_path / "t.txt", ["a b c", "d e f"])
    with pytest.raises(ValueError, match=r"unequal id formats: src file .*s\.tsv has id<TAB>sentence"):
        _mine(tmp_path, with_ids, without)


def test_mixed_id_formats_in_one_file_name_the_line(tmp_path):
    bad = tmp_path / "s.tsv"
    bad.write_text("s1\tfirst\nsecond without id\n")
    with pytest.raises(InputError, match=r"s\.tsv:2: expected id<TAB>sentence"):
        _mine(tmp_path, bad, write_lines(tmp_path / "t.txt", ["x"]))
    bad.write_text("first\nsecond\twith a tab\n")
    with pytest.raises(InputError, match=r"s\.tsv:2: expected a sentence without TAB"):
        _mine(tmp_path, bad, write_lines(tmp_path / "t.txt", ["x"]))


def test_full_disk_while_writing_leaves_no_output(tmp_path, monkeypatch):
    src, tgt, _ = toy_corpus()
    sp, tp = write_lines(tmp_path / "s.txt", src), write_lines(tmp_path / "t.txt", tgt)
    _, good = _mine(tmp_path, sp, tp)
    (tmp_path / "o.tsv.gz").unlink()

    def full(self, data):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(gzip.GzipFile, "write", full)
    with pytest.raises(DiskFullError, match=r"no space left on device while writing .*o\.tsv\.gz"):
        _mine(tmp_path, sp, tp)
    assert list(tmp_path.glob("*o.tsv.gz*")) == []  # neither the output nor a temp file
    monkeypatch.undo()
    _, again = _mine(tmp_path, sp, tp)  # space freed: rerun from the cache
    assert again == good


def test_bad_settings():
    with pytest.raises(ValueError, match="unknown score"):
        MineConfig("en", "de", margin="cosine").validate()
    with pytest.raises(ValueError, match="unknown mode"):
        MineConfig("en", "de", mode="best").validate()


def test_cli_reports_bad_input_with_exit_code_2(tmp_path):
    from typer.testing import CliRunner

    from xlingua.cli import app

    src = write_lines(tmp_path / "s.txt", ["a b"])
    result = CliRunner().invoke(app, ["mine", "--src-lang", "english", "--tgt-lang", "en",
                                      str(src), str(src), "-o", str(tmp_path / "o.tsv.gz")])
    assert result.exit_code == 2
    assert "unknown language code 'english'" in result.output
    assert not (tmp_path / "o.tsv.gz").exists()


def test_full_disk_while_writing_the_summary_leaves_no_output(tmp_path, monkeypatch):
    import xlingua.mining.pipeline as pipeline

    src, tgt, _ = toy_corpus()
    sp, tp = write_lines(tmp_path / "s.txt", src), write_lines(tmp_path / "t.txt", tgt)
    real = pipeline.save_json

    def full(path, obj):
        if str(path).endswith(".summary.json"):
            raise DiskFullError(errno.ENOSPC, f"no space left on device while writing {path}")
        real(path, obj)

    monkeypatch.setattr(pipeline, "save_json", full)
    with pytest.raises(DiskFullError, match=r"o\.tsv\.gz\.summary\.json"):
        _mine(tmp_path, sp, tp)
    assert list(tmp_path.glob("*o.tsv.gz*")) == []  # the pairs went with their summary


@pytest.mark.parametrize("gold, message", [
    ("1\t3\n13\t1\n", r"gold\.tsv:2: src '13' is not a line number of .*s\.txt \(1 to 12\)"),
    ("1\t3\nabc\t1\n", r"gold\.tsv:2: src 'abc' is not a line number"),
    ("1\t3\n2\t0\n", r"gold\.tsv:2: tgt '0' is not a line number of .*t\.txt \(1 to 16\)"),
    ("1\t3\n2\n", r"gold\.tsv:2: expected src-id<TAB>tgt-id"),
    ("1\t3\n\xff\t1\n", r"gold\.tsv:2: invalid UTF-8 at byte 0 of the line$"),
])
def test_invalid_gold_lines_name_file_and_line(tmp_path, gold, message):
    src, tgt, _ = toy_corpus()
    sp, tp = write_lines(tmp_path / "s.txt", src), write_lines(tmp_path / "t.txt", tgt)
    (tmp_path / "gold.tsv").write_bytes(gold.encode("utf-8").replace(b"\xc3\xbf", b"\xff"))
    with pytest.raises(InputError, match=message):
        _mine(tmp_path, sp, tp, calibrate=tmp_path / "gold.tsv")
    assert not (tmp_path / "o.tsv.gz").exists()


def test_gold_ids_must_be_in_the_corpora(tmp_path):
    sp = write_lines(tmp_path / "s.txt", ["a red house", "a blue car"], ids=["s1", "s2"])
    tp = write_lines(tmp_path / "t.txt", ["a blue car", "a red house"], ids=["t1", "t2"])
    (tmp_path / "gold.tsv").write_text("s1\tt2\ns9\tt1\n")
    with pytest.raises(InputError, match=r"gold\.tsv:2: src id 's9' is not in .*s\.txt"):
        _mine(tmp_path, sp, tp, calibrate=tmp_path / "gold.tsv")
    (tmp_path / "gold.tsv").write_text("s1\tt2\ns2\tt1\n")
    summary, _ = _mine(tmp_path, sp, tp, calibrate=tmp_path / "gold.tsv")
    assert summary["calibration"]["f1"] == 1.0


def test_utf8_error_names_no_option_mine_lacks(tmp_path):
    bad = tmp_path / "s.txt"
    bad.write_bytes(b"fine\nbroken \xff\n")
    with pytest.raises(InputError, match=r"s\.txt:2: invalid UTF-8 at byte 7 of the line$"):
        _mine(tmp_path, bad, write_lines(tmp_path / "t.txt", ["x"]))
