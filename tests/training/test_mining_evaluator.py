"""Dev mining: F1 at the best threshold on toy vectors with a known answer, the general corpus's
mining sets (the same sets the two-stage benchmark measured, gold rows on translation pairs),
`select: mining` in a config and in a training run."""
import json
import random

import numpy as np
import pytest

from xlingua.data import general
from xlingua.data.general import general_mining_set, read_general
from xlingua.similarity.calibrate import best_pair_threshold
from xlingua.training.config import EvalConfig, config_from_dict
from xlingua.training.evaluate import DevMiningEvaluator
from xlingua.training.evaluators import MiningEvaluator, dev_mining_f1
from tests.gz_files import write_gz


class Lookup:
    """A model whose `encode` looks each text's vector up."""

    def __init__(self, vectors: dict):
        self.vectors = vectors

    def encode(self, texts):
        return np.stack([self.vectors[t] for t in texts])


def toy_vectors(n_dim: int, rows: dict, shared: float = 0.1) -> dict:
    """{text: unit vector of basis row `rows[text]`}, all tilted a little towards one common
    direction, so no vector is orthogonal to all (a ratio margin of 0 / 0) but every two apart
    have cosine t = shared^2 / (1 + shared^2)."""
    out = {}
    for text, i in rows.items():
        v = np.zeros(n_dim + 1, dtype=np.float32)
        v[i], v[n_dim] = 1.0, shared
        out[text] = v / np.linalg.norm(v)
    return out


def toy_set(found: int, missed: int = 0, false: int = 0, src_noise: int = 4, tgt_noise: int = 6, tag: str = ""):
    """Sources s*, targets t* (texts ending in `tag`): `found` gold pairs with one vector for both sides, `missed` gold
    pairs whose sides are apart, `false` pairs not in gold with one vector for both sides, and
    distractors apart from everything; shuffled rows."""
    rows, n = {}, 0
    src, tgt, gold_texts = [], [], []

    def new(*texts):
        nonlocal n
        rows.update(dict.fromkeys((t + tag for t in texts), n))
        n += 1

    for i in range(found):
        new(f"s found {i}", f"t found {i}")
        gold_texts.append((f"s found {i}{tag}", f"t found {i}{tag}"))
    for i in range(missed):
        new(f"s missed {i}")
        new(f"t missed {i}")
        gold_texts.append((f"s missed {i}{tag}", f"t missed {i}{tag}"))
    for i in range(false):
        new(f"s false {i}", f"t false {i}")
    for i in range(src_noise):
        new(f"s noise {i}")
    for i in range(tgt_noise):
        new(f"t noise {i}")
    src = [t for t in rows if t.startswith("s ")]
    tgt = [t for t in rows if t.startswith("t ")]
    rng = random.Random(1)
    rng.shuffle(src)
    rng.shuffle(tgt)
    gold = {(src.index(a), tgt.index(b)) for a, b in gold_texts}
    return (src, tgt, gold), Lookup(toy_vectors(n, rows))


def test_identical_gold_vectors_among_apart_distractors_mine_at_f1_100():
    sets, model = toy_set(found=3)
    metrics = MiningEvaluator({"xx": sets})(model)
    assert metrics == {"mining": pytest.approx(100.0), "mining xx": pytest.approx(100.0)}


def test_a_missed_gold_pair_and_a_false_pair_give_the_hand_computed_f1():
    # Gold pairs and the false pair score ratio margin 4 / (1 + 3t) > 1, everything else at
    # most 1: the best cut keeps the 3 found + 1 false pairs against 4 gold pairs,
    # P = 3/4, R = 3/4, F1 = 2 * 3 / (4 + 4) = 75; without the false pair P = 1, F1 = 6/7
    aa, model_aa = toy_set(found=3, missed=1, false=1, tag=" a")
    bb, model_bb = toy_set(found=3, missed=1, tag=" b")
    metrics = MiningEvaluator({"aa": aa, "bb": bb})(Lookup({**model_aa.vectors, **model_bb.vectors}))
    assert metrics["mining aa"] == pytest.approx(75.0)
    assert metrics["mining bb"] == pytest.approx(600 / 7)
    assert metrics["mining"] == pytest.approx((75.0 + 600 / 7) / 2)
    assert list(metrics) == ["mining", "mining aa", "mining bb"]
    src, tgt, gold = aa
    assert dev_mining_f1(model_aa.encode(src), model_aa.encode(tgt), gold) == pytest.approx(75.0)


def test_best_pair_threshold_sorts_candidates_and_counts_gold():
    # candidates in any order; the cut falls between scores, the gold pair (2, 2) never proposed
    scores, a, b = np.array([0.2, 0.9, 0.5]), np.array([0, 1, 2]), np.array([1, 1, 0])
    c = best_pair_threshold(scores, a, b, {(1, 1), (2, 0), (2, 2)})
    assert c["threshold"] == 0.5 and c["predicted"] == 2 and c["correct"] == 2
    assert c["f1"] == pytest.approx(2 * 2 / (2 + 3))


# -- the general corpus's mining sets -------------------------------------------------------------

@pytest.fixture
def corpus(tmp_path):
    """NTREX de (300 pairs: 200 in the dev slice) and a newstest file of 400 more pairs."""
    english = [f"English sentence number {i}." for i in range(300)]
    write_gz(tmp_path / "ntrex" / "de-en.tsv.gz", [f"Deutscher Satz {i}.\t{e}\n" for i, e in enumerate(english)])
    write_gz(tmp_path / "newstest" / "de-en.tsv.gz", [f"Nachricht {i}.\tNews {i}.\n" for i in range(400)])
    return tmp_path


def old_dev_set(lang: str, distractors: int, seed: int = 0):
    """The two-stage benchmark's set builder as it was before it moved into the library."""
    dev = read_general([lang], split="dev")
    train = read_general([lang], sources=("ntrex", "newstest", "flores-v1", "mlqe-pe"))
    rng = random.Random(seed)
    english = sorted({p.english for p in train})
    rng.shuffle(english)
    half = set(english[: len(english) // 2])
    xx_pool = sorted({p.text for p in train if p.english in half})
    en_pool = [e for e in english if e not in half]
    src = [p.text for p in dev] + rng.sample(xx_pool, min(distractors, len(xx_pool)))
    tgt = [p.english for p in dev] + rng.sample(en_pool, min(int(1.5 * distractors), len(en_pool)))
    rs, rt = list(range(len(src))), list(range(len(tgt)))
    rng.shuffle(rs)
    rng.shuffle(rt)
    src = [src[i] for i in rs]
    tgt = [tgt[j] for j in rt]
    gold = {(rs.index(i), rt.index(i)) for i in range(len(dev))}
    return src, tgt, gold


def test_general_mining_set_is_the_benchmarks_set(corpus, monkeypatch):
    monkeypatch.setattr(general, "general_root", lambda root=None: corpus if root is None else root)
    for distractors, seed in ((50, 0), (100, 3), (1000, 0)):
        assert general_mining_set("de", distractors, seed) == old_dev_set("de", distractors, seed)
    assert general_mining_set("de", 50, 1, root=corpus) == old_dev_set("de", 50, 1)


def test_gold_rows_are_translation_pairs_and_distractors_have_none(corpus):
    src, tgt, gold = general_mining_set("de", 120, root=corpus)
    dev = {p.text: p.english for p in read_general(["de"], split="dev", root=corpus)}
    train = {p.text: p.english for p in read_general(["de"], root=corpus)}
    assert len(gold) == len(dev) == 200 and len(src) == 200 + 120 and len(tgt) == 200 + 180
    assert {(src[i], tgt[j]) for i, j in gold} == set(dev.items())
    gold_src = {i for i, _ in gold}
    assert all(train[s] not in tgt for i, s in enumerate(src) if i not in gold_src)
    # a shorter dev list: the first `limit` dev pairs among as many distractors
    src, tgt, gold = general_mining_set("de", 120, root=corpus, limit=30)
    assert len(gold) == 30 and len(src) == 30 + 120
    assert {(src[i], tgt[j]) for i, j in gold} <= set(dev.items())


@pytest.mark.shared
def test_real_mining_set_gold_rows_are_dev_pairs(shared):
    src, tgt, gold = general_mining_set("sw", 300)
    dev = {(p.text, p.english) for p in read_general(["sw"], split="dev")}
    assert len(gold) == len(dev) == general.DEV_SENTENCES
    assert {(src[i], tgt[j]) for i, j in gold} == dev
    assert len(src) == len(dev) + 300 and len(tgt) == len(dev) + 450


def test_dev_mining_evaluator_names_its_metrics_as_the_config_does(corpus):
    config = EvalConfig(mining_langs=["de"], mining_distractors=40, limit=20, select="mining")
    evaluator = DevMiningEvaluator(config, root=corpus)
    src, tgt, gold = evaluator.sets["de"]
    assert len(gold) == 20 and len(src) == 60
    metrics = evaluator(Lookup(toy_vectors(len(src) + len(tgt), {t: i for i, t in enumerate(src + tgt)})))
    assert sorted(metrics) == sorted(config.metric_names()) == ["mining", "mining de"]
    with pytest.raises(ValueError, match=r"dev mining set\(s\) \['de'\] have fewer than 2 dev pairs"):
        DevMiningEvaluator(EvalConfig(mining_langs=["de"], limit=1), root=corpus)


# -- select ---------------------------------------------------------------------------------------

def config(eval_block: dict, **kw) -> object:
    return config_from_dict({"model": "m", "output_dir": "out", "eval_every": 10, **kw, "eval": eval_block,
                             "tasks": [{"name": "t", "objective": "translation_ranking", "data": {"type": "tsv", "path": "p"}}]},
                            where="mini.yaml")


def test_select_mining_is_accepted_and_an_unknown_name_refused():
    cfg = config({"general_langs": ["de"], "mining_langs": ["de", "sw"], "select": "mining"})
    assert cfg.eval.select == "mining" and cfg.eval.mining_distractors == 4000
    assert cfg.eval.metric_names() == ["general_de", "mean", "general", "mining", "mining de", "mining sw"]
    assert config({"mining_langs": ["de"], "select": "mining de"}).eval.select == "mining de"
    with pytest.raises(ValueError, match=r"mini\.yaml: eval: select 'minig' is not a dev metric of this eval block; "
                                         r"choose one of \['general_de', 'mean', 'general', 'mining', 'mining de'\]"):
        config({"general_langs": ["de"], "mining_langs": ["de"], "select": "minig"})
    with pytest.raises(ValueError, match=r"select 'mining' is not a dev metric.*\['general_de', 'mean', 'general'\]"):
        config({"general_langs": ["de"], "select": "mining"})  # no mining_langs
    with pytest.raises(ValueError, match="mining_distractors cannot be negative"):
        config({"mining_langs": ["de"], "mining_distractors": -1, "select": "mining"})
    # "mean" stays the retrieval sets' mean, the default; nothing to select without evaluations
    assert config({"general_langs": ["de"], "mining_langs": ["de"]}).eval.select == "mean"
    assert config({"mining_langs": ["de"], "select": "minig"}, eval_every=0).eval.select == "minig"


def test_a_training_run_logs_mining_beside_retrieval_and_selects_by_it(tiny_model_dir, pairs_file, corpus,
                                                                         monkeypatch, tmp_path):
    from xlingua.training.trainer import Trainer

    monkeypatch.setattr(general, "general_root", lambda root=None: corpus if root is None else root)
    cfg = config_from_dict({
        "model": str(tiny_model_dir), "output_dir": str(tmp_path / "run"), "max_steps": 2, "batch_size": 4,
        "max_seq_length": 16, "warmup_steps": 1, "log_every": 1, "eval_every": 1,
        "tasks": [{"name": "tr", "objective": "translation_ranking", "data": {"type": "tsv", "path": str(pairs_file)}}],
        "eval": {"general_langs": ["de"], "mining_langs": ["de"], "mining_distractors": 30, "limit": 10,
                 "select": "mining"}})
    trainer = Trainer(cfg)
    trainer.train(show_progress=False)
    records = [json.loads(l) for l in (tmp_path / "run" / "log.jsonl").read_text().splitlines()]
    evals = [r["eval"] for r in records if "eval" in r and "config" not in r]
    assert len(evals) == 3 and all(set(e) == {"general_de", "mean", "general", "mining", "mining de"} for e in evals)
    assert all(e["mean"] == e["general_de"] and e["mining"] == e["mining de"] for e in evals)
    best = max(range(3), key=lambda i: (evals[i]["mining"], -i))  # a tie keeps the earlier step
    assert trainer.best == pytest.approx(evals[best]["mining"]) and trainer.best_step == best


@pytest.mark.parametrize("recipe", ["train_mini.yaml", "train_mini_similarity.yaml"])
def test_the_mini_recipe_selects_by_l10n_dev_among_all_1000_pairs_and_logs_dev_mining(monkeypatch, recipe):
    from pathlib import Path

    from xlingua.encoders import cpu
    from xlingua.training.config import load_config

    monkeypatch.setattr(cpu, "native_bf16", lambda: False)
    cfg = load_config(Path(__file__).resolve().parents[2] / "configs" / recipe)
    assert cfg.eval.select == "l10n" and cfg.eval.l10n_limit == 1000
    assert cfg.eval.mining_langs == ["de", "zh", "ru", "hi", "sw"] and cfg.eval.mining_distractors == 4000
    assert "mining" in cfg.eval.metric_names() and all(t.data["type"] != "l10n" for t in cfg.tasks)


@pytest.mark.shared
def test_the_mini_recipe_scores_every_l10n_language_eval_scores(corpora, monkeypatch):
    from pathlib import Path

    from xlingua.encoders import cpu
    from xlingua.evaluation.tasks.retrieval import l10n_langs
    from xlingua.training.config import load_config

    monkeypatch.setattr(cpu, "native_bf16", lambda: False)
    cfg = load_config(Path(__file__).resolve().parents[2] / "configs" / "train_mini.yaml")
    assert cfg.eval.l10n_langs == l10n_langs(corpora)  # as `xlingua eval retrieval:l10n` reads them
