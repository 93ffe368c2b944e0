"""Dev signals of meaning training (QE dev Pearson, general-corpus dev retrieval) on hand-made
vectors, and train_from_corpus on a toy general corpus with QE dev selection."""
import json

import numpy as np
import pytest
import torch
from scipy.stats import pearsonr

from xlingua.meaning.data import read_general_pairs
from xlingua.meaning.dev import QEDev, RetrievalDev
from xlingua.encoders.meaning_mlp import MeaningConfig, MeaningModel
from xlingua.meaning.trainer import MeaningTrainConfig, train_from_corpus
from tests.meaning.test_meaning_data import HashEncoder
from tests.gz_files import write_gz


def identity_model(dim=4) -> MeaningModel:
    """MLP_M(x) = x for x >= 0 (ReLU between two identity layers)."""
    model = MeaningModel(MeaningConfig(dim=dim, langs=["de", "en"]))
    with torch.no_grad():
        for layer in (model.mlp_m[0], model.mlp_m[2]):
            layer.weight.copy_(torch.eye(dim))
            layer.bias.zero_()
    return model


def test_qe_dev_is_the_pearson_of_pair_cosines_averaged_over_pairs():
    rng = np.random.default_rng(0)
    a, b = rng.random((20, 4)), rng.random((20, 4))
    z = rng.normal(size=20)
    cos = (a * b).sum(1) / np.linalg.norm(a, axis=1) / np.linalg.norm(b, axis=1)
    signal = QEDev({"en-de": (a, b, z), "ro-en": (a, b, cos)})
    got = signal(identity_model())
    assert got["en-de"] == pytest.approx(pearsonr(cos, z).statistic, abs=1e-5)
    assert got["ro-en"] == pytest.approx(1.0, abs=1e-5)  # the gold is the cosine itself
    assert got["mean"] == pytest.approx((got["en-de"] + 1.0) / 2, abs=1e-6)


def test_retrieval_dev_counts_translations_found_first():
    a = np.eye(4) + 0.01
    signal = RetrievalDev({"de": (a, a + 0.001), "fr": (a, a[[1, 0, 2, 3]])})  # fr: two of four swapped
    got = signal(identity_model())
    assert got == {"mean": 75.0, "de": 100.0, "fr": 50.0}


@pytest.fixture
def toy(tmp_path):
    general = tmp_path / "general"
    english = [f"English sentence number {i}." for i in range(260)]
    write_gz(general / "ntrex" / "de-en.tsv.gz", [f"Deutscher Satz {i}.\t{e}\n" for i, e in enumerate(english)])
    # mlqe-pe: 30 ro-en pairs; one of them holds a QE dev sentence and must be dropped.
    write_gz(general / "mlqe-pe" / "ro-en.tsv.gz",
             [f"Propozitia {i}.\tWiki sentence {i}.\n" for i in range(29)] + ["Sursa dev.\tA dev source.\n"])
    bench = tmp_path / "bench"
    qe = bench / "mlqe" / "ro-en"
    qe.mkdir(parents=True)
    head = "index\toriginal\ttranslation\tz_mean\n"
    (qe / "test20.roen.df.short.tsv").write_text(head + "0\tTest ro.\tTest en.\t0.1\n")
    rows = [("Sursa dev.", "A dev source.")] + [(f"Ro {i}.", f"En {i}.") for i in range(7)]
    (qe / "dev.roen.df.short.tsv").write_text(
        head + "".join(f"{i}\t{s}\t{t}\t{0.1 * i}\n" for i, (s, t) in enumerate(rows)))
    return general, bench


def test_general_pairs_sampled_per_source_and_language_without_evaluation_sentences(toy):
    general, bench = toy
    pairs, counts, dropped = read_general_pairs(["mlqe-pe", "ntrex"], None, 40, root=general, data_dir=bench)
    assert counts == {"mlqe-pe:ro": 30, "ntrex:de": 40}  # ntrex de: 60 train pairs (200 held out), sampled to 40
    assert dropped == 1 and "A dev source." not in pairs.tgt
    assert pairs.langs.count("ro") == 29 and pairs.langs.count("de") == 40
    again, _, _ = read_general_pairs(["mlqe-pe", "ntrex"], None, 40, root=general, data_dir=bench)
    assert again.src == pairs.src  # the sample is seeded


def test_train_from_corpus_on_general_sources_selects_on_qe_dev(toy, tmp_path, monkeypatch):
    monkeypatch.setenv("XLINGUA_HOME", str(tmp_path / "home"))
    general, bench = toy
    cfg = MeaningTrainConfig(max_epochs=3, patience=5, batch_size=8, select_on="qe-dev")
    log = train_from_corpus("hash", [], 0, tmp_path / "out", config=cfg, general=["mlqe-pe", "ntrex"],
                            general_root=general, dev=["retrieval-dev"], qe_pairs=["ro-en"], data_dir=bench,
                            encoder=HashEncoder(), show_progress=False)
    data = log["data"]
    assert data["general_pairs"] == 29 + 60 and data["general_dropped_as_evaluation_sentences"] == 1
    assert data["dev"] == ["retrieval-dev", "qe-dev"] and data["qe_dev_pairs"] == ["ro-en"]
    hist = log["history"]
    assert {"qe-dev", "qe-dev ro-en", "retrieval-dev", "retrieval-dev de"} <= set(hist[0])
    assert log["best_epoch"] == 1 + int(np.argmax([h["qe-dev"] for h in hist]))
    assert json.loads((tmp_path / "out" / "train_log.json").read_text())["select_on"] == "qe-dev"
    with pytest.raises(ValueError, match=r"unknown dev signal\(s\) \['sts-test'\]"):
        train_from_corpus("hash", [], 0, tmp_path / "o2", config=MeaningTrainConfig(select_on="sts-test"),
                          general=["mlqe-pe"], general_root=general, data_dir=bench, encoder=HashEncoder(),
                          show_progress=False)


def test_sts_dev_is_the_spearman_of_meaning_cosines_cross_lingual_pairs_averaged():
    from scipy.stats import spearmanr

    from xlingua.meaning.dev import StsDev

    rng = np.random.default_rng(1)
    a, b = rng.random((30, 4)), rng.random((30, 4))
    cos = (a * b).sum(1) / np.linalg.norm(a, axis=1) / np.linalg.norm(b, axis=1)
    gold = rng.random(30)
    signal = StsDev({"de-en": (a, b, cos), "fr-en": (a, b, gold)}, {"de": (a, b, -cos)})
    got = signal(identity_model())
    fr = 100 * spearmanr(cos, gold).statistic
    assert got["de-en"] == pytest.approx(100.0) and got["fr-en"] == pytest.approx(fr, abs=1e-3)
    assert got["mean"] == pytest.approx((100.0 + fr) / 2, abs=1e-3)
    assert got["mono"] == pytest.approx(-100.0)


def test_sts_dev_pairs_each_language_with_the_english_second_sentences(tmp_path, monkeypatch):
    monkeypatch.setenv("XLINGUA_HOME", str(tmp_path / "home"))
    from xlingua.meaning.dev import StsDev

    root = tmp_path / "stsb_multi_mt"
    root.mkdir()
    rows = [("A man is running.", "A man runs.", "5.0"), ("A cat sleeps.", "A dog barks.", "0.5"),
            ("Two kids play.", "Children are playing.", "4.0")]
    (root / "stsb-en-dev.csv").write_text("".join(f"{a},{b},{s}\n" for a, b, s in rows))
    (root / "stsb-de-dev.csv").write_text("".join(f"de {a},de {b},{s}\n" for a, b, s in rows))
    signal = StsDev.from_benchmarks(HashEncoder(), data_dir=tmp_path)
    assert sorted(signal.cross) == ["de-en"] and sorted(signal.mono) == ["de", "en"]
    enc = HashEncoder()
    a, b, gold = signal.cross["de-en"]
    np.testing.assert_allclose(a, enc.encode(["de " + r[0] for r in rows]), atol=1e-6)
    np.testing.assert_allclose(b, enc.encode([r[1] for r in rows]), atol=1e-6)
    assert list(gold) == [5.0, 0.5, 4.0]
    (root / "stsb-de-dev.csv").write_text("de x,de y,1.0\n")
    with pytest.raises(ValueError, match="stsb_multi_mt de dev has 1 rows, English 3"):
        StsDev.from_benchmarks(HashEncoder(), data_dir=tmp_path)
