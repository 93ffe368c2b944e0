"""The trainer checks `select` against `EvalConfig.metric_names()` before training; these tests
hold that list to the names the evaluators really give, for every kind of dev set at once."""
import zlib

import numpy as np
import pytest

from xlingua.training.config import EvalConfig
from xlingua.training.evaluate import dev_evaluators


class Hashed:
    """A model whose vector of a text is a fixed random row seeded by the text."""

    def encode(self, texts):
        return np.stack([np.random.default_rng(zlib.crc32(t.encode())).standard_normal(8) for t in texts])


def metrics(config: EvalConfig) -> dict:
    out = {}
    for evaluator in dev_evaluators(config):
        out.update(evaluator(Hashed()))
    return out


def own_pairs(path, n: int = 30):
    path.write_text("".join(f"Satz {i}\tsentence {i}\n" for i in range(n)), encoding="utf-8")
    return path


@pytest.mark.shared
def test_every_kind_of_dev_metric_is_named_as_the_config_names_it(shared, tmp_path):
    config = EvalConfig(l10n_langs=["de"], tatoeba_langs=["deu"], general_langs=["sw"],
                        pair_files={"xx": str(own_pairs(tmp_path / "own.tsv"))}, qe_pairs=["en-de"],
                        mining_langs=["sw"], mining_distractors=30, limit=12)
    found = metrics(config)
    assert list(found) == config.metric_names() == [
        "l10n_de", "tatoeba_deu", "general_sw", "pairs_xx", "mean", "qe", "qe_en-de", "mining", "mining sw"]
    assert found["mean"] == pytest.approx(np.mean([found[k] for k in ("l10n_de", "tatoeba_deu", "general_sw", "pairs_xx")]))
    assert found["qe"] == found["qe_en-de"] and found["mining"] == found["mining sw"]


def test_an_eval_block_without_sets_gives_no_evaluator():
    assert dev_evaluators(EvalConfig()) == [] and EvalConfig().metric_names() == []
