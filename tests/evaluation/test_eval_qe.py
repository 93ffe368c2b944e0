"""The `qe` task's scorers on tiny WMT20 QE files: cosine and in-batch on lookup vectors with
known answers, BERTScore over a tiny BERT's tokens, the supervised regressor fitted on train
and chosen on dev, and the `sts` task with the same scorers."""
import numpy as np
import pytest
from scipy.stats import pearsonr

from eval_toys import LookupEncoder
from tests.encoders.test_hf_encoder import tiny_dir  # noqa: F401  (fixture)
from xlingua.evaluation import runner
from xlingua.evaluation.base import EvalContext
from xlingua.evaluation.scoring import pair_scores
from xlingua.similarity.bertscore import bertscore_paired
from xlingua.similarity.pair_regressor import GRID, fit_pair_regressor, pair_features

HEAD = "index\toriginal\ttranslation\tz_mean\n"


def _qe_file(root, pair, split, rows):
    src, tgt = pair.split("-")
    path = root / "mlqe" / pair / f"{split}.{src}{tgt}.df.short.tsv"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(HEAD + "".join(f"{i}\t{s}\t{t}\t{z}\n" for i, (s, t, z) in enumerate(rows)), encoding="utf-8")


def _cos(enc, a, b):
    u, v = enc.encode(a), enc.encode(b)
    return (u * v).sum(1) / np.linalg.norm(u, axis=1) / np.linalg.norm(v, axis=1)


@pytest.fixture
def toy(tmp_path):
    """ro-en: z = cos(source, MT) + noise for hash vectors, on train (300), dev and test20 (60)."""
    enc = LookupEncoder({}, dim=6)
    rng = np.random.default_rng(0)
    root = tmp_path / "bench"
    gold = {}
    for split, n in (("train", 300), ("dev", 60), ("test20", 60)):
        s1 = [f"{split} sursa {i}" for i in range(n)]
        s2 = [f"{split} target {i}" for i in range(n)]
        z = _cos(enc, s1, s2) + 0.05 * rng.normal(size=n)
        _qe_file(root, "ro-en", split, list(zip(s1, s2, z)))
        gold[split] = (s1, s2, z)
    return root, enc, gold


def _qe(enc, root, **opts):
    res = runner.run(enc, ["qe:ro-en"], data_dir=str(root), options=[f"qe.{k}={v}" for k, v in opts.items()],
                     show_progress=False, echo=lambda *_: None)
    return res["tasks"]["qe:ro-en"]


def test_cosine_on_test20_and_dev(toy):
    root, enc, gold = toy
    for split in ("test20", "dev"):
        s1, s2, z = gold[split]
        t = _qe(enc, root, split=split)
        assert t["config"]["split"] == split
        assert t["rows"]["ro-en"]["pearson"] == pytest.approx(pearsonr(_cos(enc, s1, s2), z).statistic, abs=1e-6)
    with pytest.raises(ValueError, match="qe split must be test20 or dev"):
        _qe(enc, root, split="train")
    with pytest.raises(ValueError, match="unknown qe scorer 'bleu'"):
        _qe(enc, root, scorer="bleu")


def test_inbatch_subtracts_each_sides_mean_similarity_to_the_set():
    # s1 = e0, e0, e1; s2 = e0, e1, e1: cosine matrix rows [1 0 0], [1 0 0], [0 1 1]
    e = np.eye(2, dtype=np.float32)
    enc = LookupEncoder({"a": e[0], "b": e[0], "c": e[1], "x": e[0], "y": e[1], "z": e[1]}, dim=2)
    ctx = EvalContext(enc, show_progress=False)
    got = pair_scores(ctx, ["a", "b", "c"], ["x", "y", "z"], scorer="inbatch", alpha=0.5)
    # f_ii - (row mean + column mean) / 2: 1 - (1/3 + 2/3)/2, 0 - (1/3 + 1/3)/2, 1 - (2/3 + 1/3)/2
    np.testing.assert_allclose(got, [0.5, -1 / 3, 0.5], atol=1e-6)
    with pytest.raises(ValueError, match="gives no token embeddings"):
        pair_scores(ctx, ["a"], ["x"], scorer="bertscore")


def test_bertscore_scorer_uses_content_tokens(tmp_path, tiny_dir):  # noqa: F811
    from xlingua.encoders.hf import TransformerEncoder

    enc = TransformerEncoder(tiny_dir)
    s1 = ["the cat sat", "a dog ran far", "hello world", "big red cat", "the mat"]
    s2 = ["the cat sat on a mat", "dog ran", "small world", "red cat", "a big dog"]
    z = [0.9, 0.5, 0.2, 0.7, -0.3]
    _qe_file(tmp_path, "ro-en", "test20", list(zip(s1, s2, z)))
    t = _qe(enc, tmp_path, scorer="bertscore", layer=1)
    x = enc.encode_tokens(s1, layer=1, content_only=True)
    y = enc.encode_tokens(s2, layer=1, content_only=True)
    assert t["config"]["layer"] == 1
    assert t["rows"]["ro-en"]["pearson"] == pytest.approx(pearsonr(bertscore_paired(x, y), z).statistic, abs=1e-5)
    inb = _qe(enc, tmp_path, scorer="bertscore-inbatch", layer=1, alpha=0.5)
    assert inb["config"]["alpha"] == 0.5 and -1 <= inb["rows"]["ro-en"]["pearson"] <= 1
    # the same scorer on STS
    sts = tmp_path / "sts17_extended" / "STS.en-de.txt"
    sts.parent.mkdir()
    sts.write_text("".join(f"{a}\t{b}\t{i + 1}\n" for i, (a, b) in enumerate(zip(s1, s2))))
    res = runner.run(enc, ["sts:sts17_extended"], data_dir=str(tmp_path), options=["sts.scorer=bertscore", "sts.layer=1"],
                     show_progress=False, echo=lambda *_: None)["tasks"]["sts:sts17_extended"]
    expected = pearsonr(bertscore_paired(x, y), [1, 2, 3, 4, 5]).statistic * 100
    assert res["config"]["similarity"] == "bertscore"
    assert res["rows"]["sts17_extended.en-de"]["pearson"] == pytest.approx(expected, abs=1e-4)


def test_regressor_fits_train_chooses_on_dev_scores_test20(toy):
    root, enc, gold = toy
    t = _qe(enc, root, scorer="regressor")
    row = t["rows"]["ro-en"]
    # z is the cosine plus noise; cosine of normalized vectors is sum(u * v), linear in the features
    assert row["pearson"] > 0.95 and row["n"] == 60
    assert row["setting"] in GRID["ridge"] and row["dev_pearson"] > 0.95
    assert any("train split" in n for n in t["notes"])


def test_pair_regressor_keeps_the_setting_with_the_best_dev_pearson():
    rng = np.random.default_rng(3)
    u, v = rng.normal(size=(200, 4)), rng.normal(size=(200, 4))
    feats = pair_features(u, v)
    assert feats.shape == (200, 16)
    un = u / np.linalg.norm(u, axis=1, keepdims=True)
    vn = v / np.linalg.norm(v, axis=1, keepdims=True)
    np.testing.assert_allclose(feats[:, 8:12], np.abs(un - vn), atol=1e-6)
    y = (un * vn).sum(1)
    model = fit_pair_regressor((u[:150], v[:150], y[:150]), (u[150:], v[150:], y[150:]))
    assert model.dev_pearson[model.setting] == max(model.dev_pearson.values())
    assert model.setting == 0.1  # the least penalty fits an exactly linear target best
    with pytest.raises(ValueError, match="unknown regressor 'svm'"):
        fit_pair_regressor((u, v, y), (u, v, y), kind="svm")
