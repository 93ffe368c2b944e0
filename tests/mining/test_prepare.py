"""`prepare`: documents -> sentences for `mine`. Ids, counts, formats, resume, bad input."""
from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import time

import pytest
from typer.testing import CliRunner

from xlingua.cli import app
from xlingua.data.text import InputError
from xlingua.mining.prepare import PrepareConfig, prepare

DE = ["Der Bürgermeister eröffnete am Montag die neue Brücke über den Fluss.",
      "Viele Menschen aus der Stadt kamen zu der kleinen Feier am Ufer.",
      "Die Bauarbeiten hatten fast drei Jahre gedauert und viel Geld gekostet.",
      "Am Abend spielte eine Blaskapelle bekannte Lieder aus der Region."]
EN = "The weather was nice and everybody enjoyed the afternoon in the park."
BOILER = "Home | Impressum | Kontakt | Datenschutz | © 2024 | AGB | Login"


def _run(tmp_path, inputs, lang="de", **kw):
    out = tmp_path / "out"
    summary = prepare(inputs, out, PrepareConfig(lang, **kw), workdir=tmp_path / "wd",
                      show_progress=False)
    rows = [l.split("\t") for l in (out / f"{lang}.txt").read_text(encoding="utf-8").splitlines()]
    return summary, rows


def test_line_documents_ids_counts_and_dedup(tmp_path):
    doc = tmp_path / "crawl.txt"
    doc.write_text("\n".join([
        f"{DE[0]} {DE[1]} {BOILER}",     # two sentences + boilerplate
        "",                              # an empty document
        f"{EN} {DE[2]}",                 # an English sentence mixed in
        f"{DE[0]} {DE[3]} Kurz.",        # a duplicate and a too-short line
    ]) + "\n", encoding="utf-8")
    s, rows = _run(tmp_path, [doc])
    assert rows == [["crawl.txt:1:1", DE[0]], ["crawl.txt:1:2", DE[1]],
                    ["crawl.txt:3:2", DE[2]], ["crawl.txt:4:2", DE[3]]]
    f = s["files"][0]
    assert (f["documents"], f["empty_documents"], f["sentences"], f["kept"]) == (4, 1, 8, 4)
    dropped = {k: v for k, v in f["dropped"].items() if v}
    # the menu line is not clearly any language: below the identification threshold
    assert dropped == {"lid_threshold": 1, "lid_language": 1, "duplicate": 1, "too_short": 1}
    assert f["kept"] + sum(f["dropped"].values()) == f["sentences"]  # every sentence accounted for
    assert s["stage_items"] == {"read": 4, "split": 8, "filters": 8, "lid": 7, "dedup_write": 5}


def test_blank_and_tsv_formats_and_counts_per_file(tmp_path):
    blank = tmp_path / "a.txt"
    blank.write_text(f"{DE[0]}\n{DE[1]}\n\n\n{DE[2]}\n", encoding="utf-8")
    tsv = tmp_path / "b.tsv"
    tsv.write_text(f"doc-7\t{DE[3]} {DE[0]}\n", encoding="utf-8")
    s, rows = _run(tmp_path, [blank], format="blank")
    assert rows == [["a.txt:1:1", DE[0]], ["a.txt:1:2", DE[1]], ["a.txt:5:1", DE[2]]]
    s, rows = _run(tmp_path, [tsv], format="tsv")
    assert rows == [["doc-7:1", DE[3]], ["doc-7:2", DE[0]]]
    s, rows = _run(tmp_path, [blank, tsv], format="blank")  # tsv read as text: one paragraph
    assert [f["kept"] for f in s["files"]] == [3, 1] and s["files"][1]["dropped"]["duplicate"] == 1


def test_bad_input_is_an_error_naming_file_and_line_or_a_counted_drop(tmp_path):
    bad = tmp_path / "bad.txt"
    bad.write_bytes(f"{DE[0]}\n".encode() + b"Ung\xfcltig " + DE[1].encode() + b"\n")
    with pytest.raises(InputError, match=r"bad\.txt:2: invalid UTF-8"):
        _run(tmp_path, [bad])
    assert not (tmp_path / "out" / "de.txt").exists()
    s, rows = _run(tmp_path, [bad], errors="replace")
    assert [r[0] for r in rows] == ["bad.txt:1:1"] and s["dropped"]["replacement_char"] == 1
    nul = tmp_path / "nul.txt"
    nul.write_bytes(f"{DE[0]}\n{DE[1]}\x00\n".encode())
    with pytest.raises(InputError, match=r"nul\.txt:2: NUL byte"):
        _run(tmp_path, [nul])
    tsv = tmp_path / "dup.tsv"
    tsv.write_text(f"a\t{DE[0]}\na\t{DE[1]}\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"dup\.tsv:2: document id 'a' repeats"):
        _run(tmp_path, [tsv], format="tsv")


def test_one_megabyte_line_is_a_counted_drop_and_over_the_limit_an_error(tmp_path):
    big = tmp_path / "big.txt"
    big.write_text(f"{DE[0]}\n{'x' * 1_000_000}\n{DE[1]}\n", encoding="utf-8")
    s, rows = _run(tmp_path, [big])
    assert [r[0] for r in rows] == ["big.txt:1:1", "big.txt:3:1"]
    assert s["dropped"]["too_long"] == 1
    with pytest.raises(InputError, match=r"big\.txt:2: line .*over --max-chars"):
        _run(tmp_path, [big], max_doc_chars=500_000)


def test_cli_one_line_error_and_exit_2(tmp_path):
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"\xff\xfe broken\n")
    res = CliRunner().invoke(app, ["prepare", "--lang", "de", str(bad), "-o", str(tmp_path / "o"),
                                   "--workdir", str(tmp_path / "wd")])
    assert res.exit_code == 2
    assert "bad.txt:1: invalid UTF-8" in res.output and len(res.output.strip().splitlines()) == 1


def test_kill_9_then_rerun_gives_identical_output(tmp_path):
    docs = tmp_path / "docs.txt"
    docs.write_text("".join(f"{DE[i % 4]} Dokument Nummer {i} hat auch diesen Satz hier.\n"
                            for i in range(12)), encoding="utf-8")
    wd, out = tmp_path / "wd", tmp_path / "out"
    script = tmp_path / "run.py"
    script.write_text(textwrap.dedent(f"""
        import time
        import xlingua.mining.prepare as P
        import xlingua.mining.prepare_steps as steps

        real = steps.filter_shard
        def slow(*args):  # same output, just slow
            time.sleep(0.5)
            return real(*args)
        steps.filter_shard = slow
        P.prepare([{str(docs)!r}], {str(out)!r}, P.PrepareConfig("de", shard_docs=1),
                  workdir={str(wd)!r}, show_progress=False)
    """))
    proc = subprocess.Popen([sys.executable, str(script)])
    deadline = time.time() + 300
    while len(list(wd.glob("prepare_filter/*/counts_*.json"))) < 3 and time.time() < deadline:
        time.sleep(0.05)
    proc.kill()  # SIGKILL: no cleanup runs
    proc.wait()
    assert proc.returncode == -9
    assert 3 <= len(list(wd.glob("prepare_filter/*/counts_*.json"))) < 12
    assert not (out / "de.txt").exists()
    resumed = prepare([docs], out, PrepareConfig("de", shard_docs=1), workdir=wd, show_progress=False)
    clean = prepare([docs], tmp_path / "clean", PrepareConfig("de", shard_docs=1),
                    workdir=tmp_path / "wd2", show_progress=False)
    assert (out / "de.txt").read_bytes() == (tmp_path / "clean" / "de.txt").read_bytes()
    assert resumed["files"] == clean["files"]
    # 12 numbered sentences + the 4 sentences that repeat every 4 documents
    assert resumed["kept"] == 16 and resumed["dropped"]["duplicate"] == 8
    assert json.loads((out / "de.summary.json").read_text())["kept"] == 16


def test_mine_with_prepare_mines_the_prepared_sentences(tmp_path):
    import gzip

    from xlingua.mining import MineConfig, mine
    from xlingua.mining.toy import CharNgramEncoder

    src, tgt = tmp_path / "src.txt", tmp_path / "tgt.txt"
    src.write_text(f"{DE[0]} {DE[1]}\n{BOILER}\n{DE[2]}\n", encoding="utf-8")
    # the other side: the same sentences lightly edited, in other documents, with noise
    edit = [s.replace("die", "dir", 1) for s in DE]
    tgt.write_text(f"{EN}\n{edit[2]} {BOILER}\n{edit[1]} {edit[0]}\n{edit[1]}\n", encoding="utf-8")
    out = tmp_path / "pairs.tsv.gz"
    summary = mine(src, tgt, out, MineConfig("de", "de", mode="intersect"), workdir=tmp_path / "wd",
                   encoder=CharNgramEncoder(dim=256), show_progress=False, prepare_format="line")
    with gzip.open(out, "rt", encoding="utf-8") as f:
        pairs = {(r[3], r[4]) for r in (line.rstrip("\n").split("\t") for line in f)}
    assert pairs == {("src.txt:1:1", "tgt.txt:3:2"), ("src.txt:1:2", "tgt.txt:3:1"),
                     ("src.txt:3:1", "tgt.txt:2:1")}
    assert summary["prepare"]["tgt"]["dropped"]["duplicate"] == 1
    assert summary["prepare"]["src"]["kept"] == 3
