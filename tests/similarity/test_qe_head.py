"""The QE head: a known answer recovered, numpy prediction equal to scikit-learn's, dev choice and
calibration, the WMT20 mean Pearson on a hand-made case, routes, and the save/load round trip."""
from __future__ import annotations

import numpy as np
import pytest

from xlingua.similarity.qe_head import (ANY, Features, QEModel, Split, fit_qe_head, mean_pearson)


def toy(n: int, seed: int, pairs=("en-de", "ro-en")) -> Split:
    """Gold is 3 * cosine - 1 plus a little noise: a head with the cosine feature can find it."""
    rng = np.random.default_rng(seed)
    u = rng.normal(size=(n, 8)).astype(np.float32)
    v = (u + rng.normal(scale=rng.uniform(0.2, 2.0, size=(n, 1)), size=(n, 8))).astype(np.float32)
    cos = (u * v).sum(1) / np.linalg.norm(u, axis=1) / np.linalg.norm(v, axis=1)
    gold = 3 * cos - 1 + rng.normal(scale=0.01, size=n)
    src = ["a" * int(k) for k in rng.integers(1, 30, n)]
    return Split(u, v, src, list(src), gold, [pairs[i % len(pairs)] for i in range(n)])


def test_mean_pearson_is_the_mean_of_the_pairs_figures():
    pred = np.array([1.0, 2.0, 3.0, 1.0, 2.0, 3.0])
    gold = np.array([2.0, 4.0, 6.0, 3.0, 2.0, 1.0])
    mean, per = mean_pearson(pred, gold, ["a", "a", "a", "b", "b", "b"])
    assert per == pytest.approx({"a": 1.0, "b": -1.0}) and mean == pytest.approx(0.0)


def test_ridge_with_the_cosine_feature_recovers_a_known_answer_in_gold_units():
    head = fit_qe_head(toy(600, 0), toy(300, 1), "ridge", Features(cosine=True, lengths=False))
    test = toy(300, 2)
    pred = head.predict(test.u, test.v, test.src, test.tgt)
    assert mean_pearson(pred, test.gold, test.groups)[0] > 0.99
    # calibrated on dev: the predictions are in the gold's units, not only correlated with them
    assert np.abs(pred - test.gold).mean() < 0.05
    assert set(head.dev) == {1.0, 10.0, 100.0, 1000.0, 10000.0} and head.setting == max(head.dev, key=head.dev.get)


@pytest.mark.parametrize("kind", ["ridge", "mlp"])
def test_numpy_prediction_equals_scikit_learns(kind, monkeypatch):
    import sklearn.linear_model
    import sklearn.neural_network

    fitted = []
    for cls in (sklearn.linear_model.Ridge, sklearn.neural_network.MLPRegressor):
        original = cls.fit
        monkeypatch.setattr(cls, "fit", lambda self, *a, _o=original, **k: fitted.append(self) or _o(self, *a, **k))
    train, dev = toy(300, 0), toy(100, 1)
    head = fit_qe_head(train, dev, kind, Features(), grid=(0.1,))
    x = Features().make(dev.u, dev.v, dev.src, dev.tgt)
    z = (x - head.arrays["mean"]) / head.arrays["scale"]
    np.testing.assert_allclose(head.raw(x), fitted[-1].predict(z), rtol=1e-4, atol=1e-4)


def test_the_length_features_see_what_the_vectors_cannot():
    """Gold that follows the length ratio (a dropped half of a sentence): only a head with the
    length features finds it."""
    def lengths_toy(seed):
        d = toy(400, seed)
        rng = np.random.default_rng(seed + 10)
        tgt = ["b" * int(k) for k in rng.integers(1, 30, len(d.src))]
        gold = np.log1p([len(t) for t in tgt]) - np.log1p([len(s) for s in d.src])
        return Split(d.u, d.v, d.src, tgt, gold, d.groups)

    train, dev, test = lengths_toy(0), lengths_toy(1), lengths_toy(2)
    r = {}
    for name, f in {"len": Features(False, True), "plain": Features(False, False)}.items():
        head = fit_qe_head(train, dev, "ridge", f)
        r[name] = mean_pearson(head.predict(test.u, test.v, test.src, test.tgt), test.gold, test.groups)[0]
    assert r["len"] > 0.99 and r["plain"] < 0.3


def test_routes_and_the_save_load_round_trip(tmp_path):
    train, dev = toy(300, 0), toy(100, 1)
    own = fit_qe_head(train.only(lambda g: g == "en-de"), dev.only(lambda g: g == "en-de"), "ridge")
    every = fit_qe_head(train, dev, "mlp", grid=(0.01,))
    model = QEModel({"en-de": own, ANY: every}, "tiny", "fp", "cosine", (2.0, 0.5),
                    {"pairs": ["en-de", "ro-en"]})
    assert [model.route(p) for p in ("en-de", "ro-en", "fr-en", None)] == ["en-de", ANY, "cosine", "cosine"]
    model.unseen = "head"
    assert [model.route(p) for p in ("fr-en", None)] == [ANY, ANY]
    model.unseen = "cosine"

    model.save(tmp_path)
    back = QEModel.load(tmp_path)
    for pair in ("en-de", "ro-en", "fr-en"):
        np.testing.assert_allclose(back.predict(dev.u, dev.v, dev.src, dev.tgt, pair),
                                   model.predict(dev.u, dev.v, dev.src, dev.tgt, pair), rtol=1e-6)
    cos = (dev.u * dev.v).sum(1) / np.linalg.norm(dev.u, axis=1) / np.linalg.norm(dev.v, axis=1)
    np.testing.assert_allclose(back.predict(dev.u, dev.v, dev.src, dev.tgt, "fr-en"), 2.0 * cos + 0.5, rtol=1e-5)
    with pytest.raises(FileNotFoundError, match="is not a QE model: qe.safetensors is missing"):
        QEModel.load(tmp_path / "nothing")


def test_unequal_inputs_and_unknown_kinds_are_refused():
    d = toy(10, 0)
    with pytest.raises(ValueError, match="equal counts"):
        Features().make(d.u, d.v, d.src[:-1], d.tgt)
    with pytest.raises(ValueError, match="unknown QE head"):
        fit_qe_head(d, d, "forest")
