"""Extra training data for meaning embeddings: XNLI dev as parallel pairs, and
train_from_corpus mixing l10n with it (tiny files written in the test)."""
import gzip
import hashlib
import json

import numpy as np
import pytest

from xlingua.encoders.base import Encoder
from xlingua.data.benchmarks import BenchmarkFormatError
from xlingua.meaning.data import read_extra, read_multi30k_train_pairs, read_stsb_mt_train_pairs, read_xnli_dev_pairs
from xlingua.meaning.trainer import MeaningTrainConfig, train_from_corpus


def _write_xnli(root, langs=("en", "de", "fr")):
    d = root / "xnli"
    d.mkdir(parents=True)
    rows = {"en": [("P one.", "H a.", "neutral"), ("P one.", "H b.", "entailment"), ("P two.", "H c.", "contradiction")],
            "de": [("P eins.", "H a-de.", "neutral"), ("P eins.", "H b-de.", "entailment"), ("P zwei.", "H c-de.", "contradiction")],
            "fr": [("P un.", "H a-fr.", "neutral"), ("P un.", "H b-fr.", "entailment"), ("P deux.", "H c-fr.", "contradiction")]}
    for lang in langs:
        (d / f"dev-{lang}.tsv").write_text("".join(f"{p}\t{h}\t{l}\n" for p, h, l in rows[lang]))
        # A test file that must never be read as training data.
        (d / f"test-{lang}.tsv").write_text(f"TEST {lang}\tTEST\tneutral\n")
    return root


def test_xnli_dev_pairs_align_lines_and_keep_each_premise_once(tmp_path):
    root = _write_xnli(tmp_path)
    p = read_xnli_dev_pairs(["de", "fr"], data_dir=root)
    assert list(zip(p.src, p.tgt, p.langs))[:4] == [("P eins.", "P one.", "de"), ("H a-de.", "H a.", "de"),
                                                    ("H b-de.", "H b.", "de"), ("P zwei.", "P two.", "de")]
    assert len(p.src) == 10 and p.langs.count("fr") == 5
    assert not any("TEST" in s for s in p.src + p.tgt)
    only_fr, dropped = read_extra(["xnli-dev:fr"], data_dir=root)
    assert set(only_fr.langs) == {"fr"} and len(only_fr.src) == 5 and dropped == 0
    with pytest.raises(ValueError, match="unknown extra"):
        read_extra(["xnli-test"], data_dir=root)


def test_misaligned_xnli_dev_is_an_error(tmp_path):
    root = _write_xnli(tmp_path)
    with open(root / "xnli" / "dev-de.tsv", "a") as f:
        f.write("P extra.\tH extra.\tneutral\n")
    with pytest.raises(ValueError, match="not line-aligned"):
        read_xnli_dev_pairs(["de"], data_dir=root)


def _write_stsb_mt(root):
    d = root / "stsb_multi_mt"
    d.mkdir(parents=True)
    (d / "stsb-en-train.csv").write_text('A man runs.,"A man, running.",4.0\nA cat.,A dog.,1.0\n')
    (d / "stsb-de-train.csv").write_text('Ein Mann läuft.,"Ein Mann, laufend.",4.0\nEine Katze.,Ein Hund.,1.0\n')
    (d / "stsb-de-dev.csv").write_text("DEV.,DEV.,1.0\n")
    (d / "stsb-en-dev.csv").write_text("DEV.,DEV.,1.0\n")
    return d


def test_stsb_mt_train_pairs_take_both_sentences_of_each_row(tmp_path):
    _write_stsb_mt(tmp_path)
    p = read_stsb_mt_train_pairs(data_dir=tmp_path)
    assert list(zip(p.src, p.tgt)) == [("Ein Mann läuft.", "A man runs."), ("Ein Mann, laufend.", "A man, running."),
                                       ("Eine Katze.", "A cat."), ("Ein Hund.", "A dog.")]
    assert p.langs == ["de"] * 4


def test_stsb_mt_rows_out_of_step_are_an_error_naming_the_line(tmp_path):
    d = _write_stsb_mt(tmp_path)
    (d / "stsb-de-train.csv").write_text("Eine Katze.,Ein Hund.,1.0\nEin Mann läuft.,Ein Mann.,4.0\n")
    with pytest.raises(BenchmarkFormatError, match=r"stsb-de-train.csv:1: score 1.0 .*stsb-en-train.csv:1 has 4.0"):
        read_stsb_mt_train_pairs(data_dir=tmp_path)


def test_multi30k_train_pairs_and_length_mismatch(tmp_path):
    d = tmp_path / "multi30k"
    d.mkdir()
    (d / "train.en").write_text("A dog runs.\nTwo men.\n")
    (d / "train.de").write_text("Ein Hund rennt.\nZwei Männer.\n")
    p = read_multi30k_train_pairs(["de"], data_dir=tmp_path)
    assert list(zip(p.src, p.tgt, p.langs)) == [("Ein Hund rennt.", "A dog runs.", "de"), ("Zwei Männer.", "Two men.", "de")]
    (d / "train.fr").write_text("Un chien court.\n")
    with pytest.raises(BenchmarkFormatError, match="train.fr has 1 lines, train.en 2"):
        read_multi30k_train_pairs(["fr"], data_dir=tmp_path)


def test_extra_pairs_holding_an_evaluation_sentence_are_dropped(tmp_path):
    root = _write_xnli(tmp_path)
    sts = root / "sts17_extended"
    sts.mkdir()
    # One English hypothesis of XNLI dev is also an STS test sentence (case and spaces differ).
    (sts / "STS.en-de.txt").write_text(" h B. \tH b auf Deutsch.\t3.0\n")
    p, dropped = read_extra(["xnli-dev:de+fr"], data_dir=root)
    assert dropped == 2 and len(p.src) == 8  # its de and fr pairs
    assert "H b." not in p.tgt
    # QE dev chooses the model, so its sentences are held out of training too.
    qe = root / "mlqe" / "ro-en"
    qe.mkdir(parents=True)
    head = "index\toriginal\ttranslation\tz_mean\n"
    (qe / "test20.roen.df.short.tsv").write_text(head)
    (qe / "dev.roen.df.short.tsv").write_text(head + "0\tP doi.\tP two.\t0.3\n")
    p, dropped = read_extra(["xnli-dev:de+fr"], data_dir=root)
    assert dropped == 4 and "P two." not in p.tgt


class HashEncoder(Encoder):
    name, dim, normalized = "hash", 8, False

    def _encode_batch(self, texts, lang):
        return np.stack([np.random.default_rng(int(hashlib.md5(t.encode()).hexdigest()[:8], 16)).normal(size=8)
                         for t in texts]).astype(np.float32)

    def fingerprint(self):
        return "hash-test"


def test_train_from_corpus_adds_extra_pairs_and_hidden_width(tmp_path, monkeypatch):
    monkeypatch.setenv("XLINGUA_HOME", str(tmp_path / "home"))
    root = _write_xnli(tmp_path / "bench")
    corpus = tmp_path / "l10n"
    corpus.mkdir()
    with gzip.open(corpus / "de-en.train.tsv.gz", "wt") as f:
        f.write("".join(f"Datei {i}\tfile {i}\n" for i in range(6)))
    import xlingua.meaning.data as data

    monkeypatch.setitem(data.EXTRA_SOURCES, "xnli-dev",
                        lambda data_dir=None, langs=("de", "fr"): read_xnli_dev_pairs(list(langs), data_dir=data_dir))
    cfg = MeaningTrainConfig(max_epochs=2, patience=5, batch_size=4, hidden=12)
    log = train_from_corpus("hash", ["de"], 4, tmp_path / "out", config=cfg, corpus=str(corpus),
                            extra=["xnli-dev"], data_dir=root, encoder=HashEncoder(), show_progress=False)
    assert log["data"]["l10n_pairs"] == 4 and log["data"]["extra_pairs"] == 10
    assert log["data"]["extra_dropped_as_evaluation_sentences"] == 0
    assert log["n_train"] + log["n_val"] == 14
    assert log["langs"] == ["de", "en", "fr"]
    saved = json.loads((tmp_path / "out" / "train_log.json").read_text())
    assert saved["data"]["extra"] == ["xnli-dev"]
    from xlingua.encoders.meaning_mlp import MeaningModel

    model = MeaningModel.load(tmp_path / "out" / "model.pt")
    assert model.mlp_m[0].out_features == 12
    # Without l10n pairs the extra data alone is enough; with neither it is an error.
    assert train_from_corpus("hash", [], 0, tmp_path / "o2", config=cfg, extra=["xnli-dev"], data_dir=root,
                             encoder=HashEncoder(), show_progress=False)["n_val"] == 1
    with pytest.raises(ValueError, match="no training pairs"):
        train_from_corpus("hash", [], 0, tmp_path / "o3", config=cfg, encoder=HashEncoder(), show_progress=False)
