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
        "l10n_de", "tatoeba_deu", "general_sw", "pairs_xx", "mean", "l10n", "tatoeba", "general", "pairs",
        "qe", "qe_en-de", "mining", "mining sw"]
    assert found["mean"] == pytest.approx(np.mean([found[k] for k in ("l10n_de", "tatoeba_deu", "general_sw", "pairs_xx")]))
    assert found["qe"] == found["qe_en-de"] and found["mining"] == found["mining sw"]
    assert [found[k] for k in ("l10n", "tatoeba", "general", "pairs")] == [
        found[k] for k in ("l10n_de", "tatoeba_deu", "general_sw", "pairs_xx")]


@pytest.mark.shared
def test_a_kind_of_set_gives_the_mean_of_its_sets_and_l10n_takes_its_own_limit(shared):
    config = EvalConfig(l10n_langs=["de", "fr"], general_langs=["sw"], limit=12, l10n_limit=40, select="l10n")
    (evaluator,) = dev_evaluators(config.check())
    assert [len(evaluator.sets[k][0]) for k in ("l10n_de", "l10n_fr", "general_sw")] == [40, 40, 12]
    found = evaluator(Hashed())
    assert found["l10n"] == pytest.approx((found["l10n_de"] + found["l10n_fr"]) / 2)
    assert found["general"] == found["general_sw"] and evaluator.main_score == "l10n"
    assert found["mean"] == pytest.approx((found["l10n_de"] + found["l10n_fr"] + found["general_sw"]) / 3)


def test_dev_retrieval_among_all_1000_pairs_is_the_eval_tasks_figure():
    # l10n dev sets hold 1,000 pairs: retrieval among all of them is `xlingua eval retrieval:l10n`'s
    # top-1 among the other 999, both directions averaged
    from xlingua.evaluation.tasks.retrieval import precision_at_1
    from xlingua.training.evaluators import dev_accuracy

    rng = np.random.default_rng(0)
    x = rng.standard_normal((1000, 16))
    y = x + 1.1 * rng.standard_normal((1000, 16))
    both = (precision_at_1(x, y, 999) + precision_at_1(y, x, 999)) / 2
    assert 20 < both < 95 and dev_accuracy(x, y) == pytest.approx(both)


@pytest.mark.parametrize("bad", [1, 0, 2.5, "all"])
def test_an_l10n_limit_below_two_pairs_or_not_whole_is_refused(bad):
    with pytest.raises(ValueError, match=rf"cfg: eval: l10n_limit must be a whole number of pairs from 2, "
                                         rf"or left out for limit \(got {bad!r}\)"):
        EvalConfig(l10n_langs=["de"], l10n_limit=bad).check("cfg")


def test_an_eval_block_without_sets_gives_no_evaluator():
    assert dev_evaluators(EvalConfig()) == [] and EvalConfig().metric_names() == []


def test_lowres_sets_are_chosen_on_their_non_bible_pairs_and_logged_whole(tmp_path, monkeypatch):
    from tests.gz_files import write_gz
    from xlingua.training.evaluators import dev_accuracy, lowres_dev_pairs

    root = tmp_path / "shared" / "corpora" / "lowres"
    write_gz(root / "bible" / "ee-en.tsv.gz", [f"ee verse {i}\tverse {i}\n" for i in range(60)])
    write_gz(root / "mafand" / "ee-fr.tsv.gz", [f"ee nyati {i}\tphrase {i}\n" for i in range(40)])
    write_gz(root / "bible" / "kab-en.tsv.gz", [f"kab verse {i}\tverse {i}\n" for i in range(50)])
    monkeypatch.setenv("XLINGUA_SHARED", str(tmp_path / "shared"))
    config = EvalConfig(lowres_langs=["kab", "ee"], select="lowres").check()
    found = metrics(config)
    assert list(found) == config.metric_names() == [
        "lowres_kab", "lowres_ee", "mean", "lowres", "lowres all", "lowres_kab all", "lowres_ee all"]
    xs, ys, rows = lowres_dev_pairs(["ee"])["ee"]
    assert (len(xs), len(rows)) == (10, 4) and all(ys[i].startswith("phrase") for i in rows)
    x, y = Hashed().encode(xs), Hashed().encode(ys)
    assert found["lowres_ee"] == dev_accuracy(x[rows], y[rows]) and found["lowres_ee all"] == dev_accuracy(x, y)
    assert found["lowres_kab"] == found["lowres_kab all"]  # Bible alone: the whole slice
    assert found["mean"] == found["lowres"] == pytest.approx((found["lowres_kab"] + found["lowres_ee"]) / 2)
    assert found["lowres all"] == pytest.approx((found["lowres_kab all"] + found["lowres_ee all"]) / 2)


def test_with_strip_harakat_an_arabic_script_set_is_also_scored_without_its_marks(tmp_path):
    from xlingua.data.arabic import strip_harakat

    marked = tmp_path / "knc.tsv"
    marked.write_text("".join(f"كَتَبَ {i} بَيْتٌ\tsentence {i}\n" for i in range(30)), encoding="utf-8")
    config = EvalConfig(pair_files={"knc-Arab": str(marked), "xx": str(own_pairs(tmp_path / "own.tsv"))}, limit=12,
                        strip_harakat=True)
    (evaluator,) = dev_evaluators(config.check())
    xs, ys = evaluator.sets["pairs_knc-Arab"]
    # the Latin-script set has no twin; the Arabic one is read again without its harakat, beside the same English
    assert set(evaluator.sets) == {"pairs_knc-Arab", "pairs_xx", "pairs_knc-Arab stripped"}
    assert evaluator.sets["pairs_knc-Arab stripped"] == ([strip_harakat(x) for x in xs], ys)
    assert all(a != b for a, b in zip(xs, evaluator.sets["pairs_knc-Arab stripped"][0]))
    found = evaluator(Hashed())
    assert list(found) == config.metric_names()
    assert found["mean"] == pytest.approx(np.mean([found[k] for k in ("pairs_knc-Arab", "pairs_xx", "pairs_knc-Arab stripped")]))
    # without the option nothing is added
    (plain,) = dev_evaluators(EvalConfig(pair_files={"knc-Arab": str(marked)}, limit=12))
    assert set(plain.sets) == {"pairs_knc-Arab"} and "pairs_knc-Arab stripped" not in plain.config.metric_names()
