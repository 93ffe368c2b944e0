"""`xlingua score`: one row per pair in order, cosine and margin on hand-computed toys, the
filtered corpus, and the bad-input rules of `xlingua embed`."""
from __future__ import annotations

import gzip

import numpy as np
import pytest
from typer.testing import CliRunner

from xlingua.cli import app
from xlingua.data.text import InputError
from xlingua.score import ScoreConfig, score_files, score_texts

VECS = {
    "one": [1.0, 0.0, 0.0], "eins": [0.8, 0.6, 0.0],
    "two": [0.0, 1.0, 0.0], "zwei": [0.0, 0.6, 0.8],
    "three": [0.0, 0.0, 2.0], "drei": [0.6, 0.0, 0.8],
    "": [1.0, 1.0, 1.0],
}


def toy_embed(texts, lang=None):
    return np.array([VECS[t] for t in texts], dtype=np.float32)


SRC = ["one", "two", "three", ""]
TGT = ["eins", "zwei", "drei", ""]


def _files(tmp_path, src=SRC, tgt=TGT):
    a, b = tmp_path / "src.txt", tmp_path / "tgt.txt"
    a.write_text("".join(f"{t}\n" for t in src), encoding="utf-8")
    b.write_text("".join(f"{t}\n" for t in tgt), encoding="utf-8")
    return str(a), str(b)


def _unit(v):
    v = np.asarray(v, dtype=np.float64)
    return v / np.linalg.norm(v)


def _hand_scores(k):
    """Cosine and ratio margin written out loop by loop."""
    xs, ys = [_unit(VECS[t]) for t in SRC], [_unit(VECS[t]) for t in TGT]
    cos = [float(x @ y) for x, y in zip(xs, ys)]
    margins = []
    for i in range(len(xs)):
        x_nn = sorted((float(xs[i] @ y) for y in ys), reverse=True)[:k]
        y_nn = sorted((float(ys[i] @ x) for x in xs), reverse=True)[:k]
        margins.append(cos[i] / ((sum(x_nn) / k + sum(y_nn) / k) / 2))
    return np.array(cos), np.array(margins)


def _rows(path) -> list[list[str]]:
    """The rows after the header, which names the columns."""
    header, *rows = path.read_text().splitlines()
    assert header.split("\t")[0] == "cosine"
    return [row.split("\t") for row in rows]


def test_rows_in_order_with_cosine_and_margin(tmp_path):
    src, tgt = _files(tmp_path)
    out = tmp_path / "scores.tsv"
    res = score_files(toy_embed, [src, tgt], str(out), ScoreConfig(margin=True, k=2, buffer_lines=3))
    assert out.read_text().splitlines()[0] == "cosine\tmargin"
    rows = _rows(out)
    assert res.pairs == 4 and len(rows) == 4
    cos, margin = _hand_scores(2)
    np.testing.assert_allclose([float(r[0]) for r in rows], cos, atol=1e-6)
    np.testing.assert_allclose([float(r[1]) for r in rows], margin, atol=1e-5)
    assert float(rows[0][0]) == pytest.approx(0.8, abs=1e-6)  # (1,0,0).(0.8,0.6,0)


def test_without_header_row_i_is_pair_i(tmp_path):
    src, tgt = _files(tmp_path)
    out = tmp_path / "scores.tsv"
    score_files(toy_embed, [src, tgt], str(out), ScoreConfig(header=False))
    cos, _ = _hand_scores(2)
    assert out.read_text() == "".join(f"{c:.6f}\n" for c in cos)
    score_files(toy_embed, [src, tgt], str(out), ScoreConfig())
    assert out.read_text() == "cosine\n" + "".join(f"{c:.6f}\n" for c in cos)


def test_score_texts_equals_the_file_job(tmp_path):
    got = score_texts(toy_embed, SRC, TGT, margin=True, k=2)
    cos, margin = _hand_scores(2)
    np.testing.assert_allclose(got["cosine"], cos, atol=1e-6)
    np.testing.assert_allclose(got["margin"], margin, atol=1e-5)
    with pytest.raises(ValueError, match="src has 2 items but tgt has 1"):
        score_texts(toy_embed, ["one", "two"], ["eins"])


def test_tsv_input_and_min_score_writes_the_filtered_corpus(tmp_path):
    tsv = tmp_path / "pairs.tsv.gz"
    tsv.write_bytes(gzip.compress("".join(f"{a}\t{b}\n" for a, b in zip(SRC, TGT)).encode()))
    out = tmp_path / "s.tsv"
    res = score_files(toy_embed, [str(tsv)], str(out), ScoreConfig(min_score=0.7))
    cos, _ = _hand_scores(2)
    assert res.kept == int((cos >= 0.7).sum()) == 3  # one 0.8, two 0.6 (no), three 0.8, "" 1.0
    assert (tmp_path / "s.kept.tsv").read_text() == "one\teins\nthree\tdrei\n\t\n"


def test_two_files_give_a_filtered_pair_of_files(tmp_path):
    src, tgt = _files(tmp_path)
    out = tmp_path / "s.tsv"
    score_files(toy_embed, [src, tgt], str(out), ScoreConfig(margin=True, k=2, min_score=1.0))
    _, margin = _hand_scores(2)
    keep = margin >= 1.0
    assert 0 < keep.sum() < 4
    assert (tmp_path / "s.kept.src").read_text() == "".join(f"{t}\n" for t, m in zip(SRC, keep) if m)
    assert (tmp_path / "s.kept.tgt").read_text() == "".join(f"{t}\n" for t, m in zip(TGT, keep) if m)


def test_mismatched_line_counts_name_both_files_and_write_nothing(tmp_path):
    src, tgt = _files(tmp_path, tgt=TGT[:3])
    out = tmp_path / "s.tsv"
    with pytest.raises(InputError, match=r"src.txt has 4 lines but .*tgt.txt has 3"):
        score_files(toy_embed, [src, tgt], str(out), ScoreConfig())
    assert sorted(p.name for p in tmp_path.iterdir()) == ["src.txt", "tgt.txt"]


def test_tsv_line_without_tab_names_file_and_line(tmp_path):
    tsv = tmp_path / "p.tsv"
    tsv.write_text("one\teins\ntwo zwei\n")
    with pytest.raises(InputError, match=r"p.tsv:2: expected src<TAB>tgt"):
        score_files(toy_embed, [str(tsv)], str(tmp_path / "s.tsv"), ScoreConfig())
    assert not (tmp_path / "s.tsv").exists()


def test_failure_while_embedding_leaves_no_output(tmp_path):
    src, tgt = _files(tmp_path)

    def broken(texts, lang=None):
        raise RuntimeError("killed")

    with pytest.raises(RuntimeError):
        score_files(broken, [src, tgt], str(tmp_path / "s.tsv"), ScoreConfig(min_score=0.1))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["src.txt", "tgt.txt"]


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory):
    from tests.training.conftest import make_tiny_model_dir

    return str(make_tiny_model_dir(tmp_path_factory.mktemp("tiny")))


def test_cli_scores_with_a_model_dir_and_fails_in_one_line(tmp_path, tiny_model):
    from xlingua.encoders.loading import load_encoder

    src, tgt = _files(tmp_path, ["the red cat", "a dog"], ["die rote katze", "der hund"])
    out = tmp_path / "s.tsv"
    run = CliRunner().invoke(app, ["score", src, tgt, "-o", str(out), "--model", tiny_model, "--margin"])
    assert run.exit_code == 0, run.output
    enc = load_encoder(tiny_model)
    x, y = enc.encode(["the red cat", "a dog"]), enc.encode(["die rote katze", "der hund"])
    assert out.read_text().splitlines()[0] == "cosine\tmargin"
    rows = [list(map(float, r)) for r in _rows(out)]
    np.testing.assert_allclose([r[0] for r in rows], (x * y).sum(1), atol=1e-5)

    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"ok\n\xff\xfe\n")
    run = CliRunner().invoke(app, ["score", src, str(bad), "-o", str(tmp_path / "t.tsv"), "--model", tiny_model])
    assert run.exit_code == 2
    assert run.output.strip().splitlines() == [f"error: {bad}:2: invalid UTF-8 at byte 0 of the line; "
                                               "pass --errors replace to substitute U+FFFD"]


def test_combined_spec_averages_the_encoders_cosines(tiny_model, tmp_path):
    from tests.training.conftest import make_tiny_model_dir
    from xlingua.encoders.loading import load_encoder

    other = str(make_tiny_model_dir(tmp_path / "other", seed=1))
    both = load_encoder(f"{tiny_model},{other}")
    a, b = ["the red cat", "a dog runs"], ["die rote katze", "der hund"]
    got = score_texts(lambda t, lang: both.encode(t), a, b)["cosine"]
    singles = [score_texts(lambda t, lang, e=load_encoder(m): e.encode(t), a, b)["cosine"] for m in (tiny_model, other)]
    assert both.dim == 64
    np.testing.assert_allclose(got, (singles[0] + singles[1]) / 2, atol=1e-5)


def test_cli_scores_with_a_trained_meaning_model(tmp_path, tiny_model):
    from xlingua.encoders.loading import load_encoder
    from xlingua.encoders.meaning import MeaningEncoder
    from xlingua.meaning.trainer import MeaningTrainConfig, train_meaning

    base = load_encoder(tiny_model)
    words = ["the red cat", "a dog", "the house", "one tree", "blue sky", "my car"]
    german = ["die rote katze", "der hund", "das haus", "ein baum", "blauer himmel", "mein auto"]
    run_dir = tmp_path / "meaning"
    train_meaning(base.encode(words * 4), base.encode(german * 4), ["de"] * 24, run_dir,
                  config=MeaningTrainConfig(max_epochs=2, batch_size=8), base_name=base.name,
                  base_fingerprint=base.fingerprint(), show_progress=False)
    src, tgt = _files(tmp_path, words[:3], german[1:4])
    out = tmp_path / "s.tsv"
    spec = f"{tiny_model}+meaning:{run_dir}"
    run = CliRunner().invoke(app, ["score", src, tgt, "-o", str(out), "--model", spec])
    assert run.exit_code == 0, run.output
    enc = MeaningEncoder(base, str(run_dir))
    expected = (enc.encode(words[:3]) * enc.encode(german[1:4])).sum(1)
    got = [float(r[0]) for r in _rows(out)]
    np.testing.assert_allclose(got, expected, atol=1e-5)
    plain = (base.encode(words[:3]) * base.encode(german[1:4])).sum(1)
    assert np.abs(np.array(got) - plain).max() > 1e-3  # the meaning MLP changed the scores
