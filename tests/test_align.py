"""`xlingua align`: paragraphs split into sentences, overlaps embedded once, the TSV written
whole; bad input in one line; the bundled model on a short real document pair."""
from __future__ import annotations

import numpy as np
import pytest
from typer.testing import CliRunner

from xlingua.align import HEADER, align_files, align_sentences, embed_spans
from xlingua.cli import app

RNG = np.random.default_rng(1)
WORDS = {}


def bag_embed(texts, lang=None):
    """Sum of word vectors, words lower-cased and stripped of stops ("Ab." == "ab")."""
    calls.append(list(texts))
    out = []
    for t in texts:
        words = [w.strip(".!?").lower() for w in t.split()]
        out.append(np.sum([WORDS.setdefault(w, RNG.standard_normal(32)) for w in words], axis=0))
    return np.array(out, dtype=np.float32)


calls: list[list[str]] = []


def test_overlaps_are_embedded_once():
    calls.clear()
    one, two = embed_spans(bag_embed, ["x y", "z", "x y", "z"], None)
    assert len(calls) == 1 and sorted(calls[0]) == sorted(["x y", "z", "x y z", "z x y"])
    assert one.shape == (4, 32) and two.shape == (3, 32)
    np.testing.assert_array_equal(one[0], one[2])
    np.testing.assert_array_equal(two[0], two[2])


def test_align_files_splits_paragraphs_and_writes_the_table(tmp_path):
    a = tmp_path / "a.txt"
    b = tmp_path / "b.txt"
    a.write_text("Alpha beta. Gamma!\n\nDelta epsilon. Zeta eta.\nTheta.\n", encoding="utf-8")
    b.write_text("Alpha. Beta. Gamma.\nDelta epsilon zeta eta.\nTheta.\n", encoding="utf-8")
    out = tmp_path / "out.tsv"
    res = align_files(bag_embed, str(a), str(b), str(out))
    assert res.a == ["Alpha beta.", "Gamma!", "Delta epsilon.", "Zeta eta.", "Theta."]
    assert res.b == ["Alpha.", "Beta.", "Gamma.", "Delta epsilon zeta eta.", "Theta."]
    lines = out.read_text(encoding="utf-8").splitlines(keepends=True)
    assert lines[0] == HEADER
    rows = [line.rstrip("\n").split("\t") for line in lines[1:]]
    assert [r[:4] for r in rows] == [["0", "1", "0", "2"], ["1", "2", "2", "3"], ["2", "4", "3", "4"],
                                     ["4", "5", "4", "5"]]
    assert rows[0][5:] == ["Alpha beta.", "Alpha. Beta."] and float(rows[0][4]) == pytest.approx(1.0, abs=1e-5)
    assert res.similarity.shape == (5, 5)
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


def test_cli_bad_input_is_one_line_and_exit_2(tmp_path):
    a = tmp_path / "a.txt"
    a.write_text("ok\n")
    run = CliRunner().invoke(app, ["align", str(a), str(tmp_path / "missing.txt"), "-o", str(tmp_path / "o.tsv")])
    assert run.exit_code == 2
    assert run.output.strip().splitlines() == [f"error: {tmp_path / 'missing.txt'}: no such file"]
    assert not (tmp_path / "o.tsv").exists()


def test_bundled_model_aligns_a_real_paragraph_with_a_merge():
    from xlingua.encoders.loading import load_encoder

    enc = load_encoder("bundled:torch")
    en = ["The museum opens at nine in the morning.", "Tickets cost twelve euros.",
          "Children under six enter for free.", "The café on the top floor serves lunch.",
          "Photography is allowed without flash."]
    de = ["Das Museum öffnet um neun Uhr morgens.",
          "Der Eintritt kostet zwölf Euro, Kinder unter sechs Jahren sind frei.",
          "Das Café im obersten Stock serviert Mittagessen.", "Fotografieren ohne Blitz ist erlaubt."]
    res = align_sentences(lambda t, lang: enc.encode(t), en, de)
    assert [(bd.a, bd.b) for bd in res.beads] == [((0, 1), (0, 1)), ((1, 3), (1, 2)), ((3, 4), (2, 3)),
                                                  ((4, 5), (3, 4))]
