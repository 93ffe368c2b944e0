"""Training an encoder for quality estimation: WMT20 QE train pairs as graded examples (the
train split only), a dev evaluator giving the Pearson of cosine with the z-scores per pair and
their mean, a run that is chosen on it, and the shipped recipe that reads as a valid config."""
import json
from pathlib import Path

import numpy as np
import pytest

from tests.qe.test_qe_train import PAIRS, ToyEncoder, write_toy_mlqe
from tests.training.test_training_trainer import base_config
from xlingua.data.examples import load_examples
from xlingua.training.config import load_config
from xlingua.training.evaluators import QEEvaluator
from xlingua.training.trainer import Trainer

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def toy_mlqe(tmp_path, monkeypatch):
    enc = ToyEncoder()
    write_toy_mlqe(tmp_path, enc, n=(20, 12))
    monkeypatch.setenv("XLINGUA_DATA", str(tmp_path))
    return tmp_path, enc


def test_mlqe_examples_are_the_train_split_graded(toy_mlqe):
    root, _ = toy_mlqe
    out = load_examples({"type": "mlqe", "pairs": ["en-de", "si-en"], "limit": 5})
    assert len(out) == 10 and out[0][0] == "en-de train source 0" and out[0][1] == "en-de train translation 0"
    assert out[5][0] == "si-en train source 0" and isinstance(out[0][2], float)
    with pytest.raises(ValueError, match=r"data type 'mlqe': unknown key\(s\) \['split'\]"):
        load_examples({"type": "mlqe", "pairs": ["en-de"], "split": "dev"})


class Graded:
    """Cosine of a pair's two sides = 0.5 + 0.1 z for en-de (Pearson +1) and 0.5 - 0.1 z for
    the others (-1), from the dev files' gold."""

    def __init__(self, root):
        from xlingua.data.benchmarks import read_mlqe

        self.vectors = {}
        for pair in PAIRS:
            d = read_mlqe(pair, "dev", root)
            sign = 1 if pair == "en-de" else -1
            for s, t, z in zip(d.s1, d.s2, d.score):
                c = 0.5 + sign * 0.1 * z
                self.vectors[s] = np.array([1.0, 0.0])
                self.vectors[t] = np.array([c, np.sqrt(1 - c * c)])

    def encode(self, texts):
        return np.stack([self.vectors[t] for t in texts])


def test_qe_evaluator_is_the_pearson_of_cosine_per_pair_and_their_mean(toy_mlqe):
    root, _ = toy_mlqe
    found = QEEvaluator(PAIRS)(Graded(root))
    assert found["qe_en-de"] == pytest.approx(100.0) and found["qe_ro-en"] == pytest.approx(-100.0)
    assert found["qe"] == pytest.approx((100 - 100 - 100) / 3)
    assert QEEvaluator.main_score == "qe" and not QEEvaluator([])

    class Constant:
        def encode(self, texts):
            return np.ones((len(texts), 2))

    assert QEEvaluator(PAIRS[:1])(Constant()) == {"qe": 0.0, "qe_en-de": 0.0}  # no ranking, not nan


def test_a_run_on_graded_pairs_is_chosen_on_qe_dev(toy_mlqe, tiny_model_dir, tmp_path):
    tasks = [{"name": p, "objective": "cosent", "data": {"type": "mlqe", "pairs": [p]}} for p in PAIRS[:2]]
    cfg = base_config(tiny_model_dir, tmp_path / "run", tasks, max_steps=4, eval_every=2,
                      eval={"qe_pairs": list(PAIRS[:2]), "select": "qe"})
    trainer = Trainer(cfg)
    trainer.train(show_progress=False)
    records = [json.loads(l) for l in (tmp_path / "run" / "log.jsonl").read_text().splitlines()]
    evals = [r["eval"] for r in records if "eval" in r]
    assert evals and set(evals[-1]) == {"qe", "qe_en-de", "qe_ro-en"}
    assert (tmp_path / "run" / "best").is_dir()


def test_the_shipped_recipe_is_a_valid_config():
    cfg = load_config(REPO / "configs" / "train_qe_cosent.yaml")
    assert [t.name for t in cfg.tasks] == ["en-de", "en-zh", "et-en", "ne-en", "ro-en", "si-en"]
    assert cfg.eval.select == "qe" and cfg.eval.qe_pairs == [t.name for t in cfg.tasks]
