"""Distillation and CoSENT tasks, language temperature sampling and bf16 training on a tiny
BERT; the shipped configs validate."""
import json
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
import torch

from tests.training.conftest import PAIRS, make_tiny_model_dir
from xlingua.training.config import config_from_dict, load_config
from xlingua.data.examples import LanguageSampler, make_sampler
from xlingua.training.model import SentenceModel
from xlingua.training.trainer import Trainer

ROOT = Path(__file__).resolve().parents[2]


def test_temperature_sampling_gives_expected_language_shares():
    # 900 examples of "big", 100 of "small": T=1 keeps 9:1, T=inf would be 1:1, T=2 is 3:1
    langs = ["big"] * 900 + ["small"] * 100
    keys = [str(i) for i in range(1000)]
    for temp, want in ((1.0, 0.9), (2.0, 0.75), (1e9, 0.5)):
        sampler = LanguageSampler(langs, keys, temp, seed=0)
        assert sampler.shares()["big"] == pytest.approx(want, abs=1e-6)
    sampler = LanguageSampler(langs, keys, 2.0, seed=0)
    drawn = Counter(langs[i] for _ in range(200) for i in sampler.next(20))
    assert drawn["big"] / 4000 == pytest.approx(0.75, abs=0.02)


def test_temperature_sampler_never_repeats_a_key_in_a_batch_and_resumes():
    # 50 English sentences, each translated into 4 languages: a batch holds each sentence once
    langs = [l for _ in range(50) for l in "abcd"]
    keys = [str(i) for i in range(50) for _ in "abcd"]
    sampler = LanguageSampler(langs, keys, 5.0, seed=1)
    for _ in range(20):
        batch = sampler.next(40)
        assert len({keys[i] for i in batch}) == 40
    state = sampler.state_dict()
    after = [sampler.next(8).tolist() for _ in range(3)]
    again = LanguageSampler(langs, keys, 5.0, seed=1)
    again.load_state_dict(state)
    assert [again.next(8).tolist() for _ in range(3)] == after
    with pytest.raises(ValueError, match="50 distinct"):
        sampler.next(51)


def test_make_sampler_needs_language_tags():
    with pytest.raises(ValueError, match="tagged with their language"):
        make_sampler([("a", "b"), ("c", "d")], 5.0, 0, 0)
    with pytest.raises(ValueError, match="give a temperature"):
        make_sampler([("a", "b", "x")], 0.0, 0, 0, one_language=True)


def test_one_language_batches_hold_one_language_at_the_temperature_shares():
    # 900 examples of "big", 100 of "small", T=2: three batches in four are "big"
    langs = ["big"] * 900 + ["small"] * 100
    keys = [str(i) for i in range(1000)]
    sampler = make_sampler(list(zip(keys, keys, langs)), 2.0, 0, 0, one_language=True)
    batches = [sampler.next(20) for _ in range(400)]
    kinds = [{langs[i] for i in b} for b in batches]
    assert all(len(k) == 1 for k in kinds)
    assert all(len({keys[i] for i in b}) == 20 for b in batches)
    assert sum(k == {"big"} for k in kinds) / 400 == pytest.approx(0.75, abs=0.05)
    state = sampler.state_dict()
    after = [sampler.next(8).tolist() for _ in range(3)]
    again = make_sampler(list(zip(keys, keys, langs)), 2.0, 0, 0, one_language=True)
    again.load_state_dict(state)
    assert [again.next(8).tolist() for _ in range(3)] == after
    with pytest.raises(ValueError, match=r"fewer in small \(100\)"):
        sampler.next(101)


def tagged_pairs(tmp_path):
    """The conftest pairs as a tsv plus a language tag: German and a fake 'xx' (reversed words)."""
    return [(de, en, "de") for en, de in PAIRS] + [(" ".join(en.split()[::-1]), en, "xx") for en, _ in PAIRS]


def test_distillation_moves_student_towards_teacher(tmp_path, monkeypatch):
    student_dir = make_tiny_model_dir(tmp_path / "student", seed=0)
    teacher_dir = make_tiny_model_dir(tmp_path / "teacher", seed=1)
    examples = tagged_pairs(tmp_path)
    monkeypatch.setattr("xlingua.training.tasks.load_examples", lambda spec, seed: examples)
    tasks = [{"name": "kd", "objective": "distillation", "data": {"type": "general"}, "temperature": 2.0,
              "options": {"teacher": str(teacher_dir), "teacher_cache": str(tmp_path / "cache")}}]
    cfg = config_from_dict({"model": str(student_dir), "output_dir": str(tmp_path / "run"), "tasks": tasks,
                            "max_steps": 40, "batch_size": 8, "max_seq_length": 16, "lr": 3e-3,
                            "warmup_steps": 1, "log_every": 1, "seed": 0, "schedule": "constant"})
    from xlingua.encoders.loading import load_encoder

    english = sorted({e[1] for e in examples})
    teacher = load_encoder(str(teacher_dir)).encode(english)
    cos_before = cosine_to(SentenceModel.load(str(student_dir)), english, teacher)
    trainer = Trainer(cfg)
    final = trainer.train(show_progress=False)
    losses = [json.loads(l)["loss"] for l in (tmp_path / "run" / "log.jsonl").read_text().splitlines()
              if "loss" in json.loads(l)]
    assert np.mean(losses[-5:]) < 0.5 * np.mean(losses[:5])
    cos_after = cosine_to(SentenceModel.load(str(final)), english, teacher)
    assert cos_after > cos_before + 0.2
    # the teacher's vectors were cached once: a second task build reads them from the cache
    assert any((tmp_path / "cache").glob("*.sqlite"))


def cosine_to(model, texts, target):
    x = model.encode(texts).numpy()
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    return float((x * target).sum(1).mean())


def test_distillation_teacher_dimension_must_match(tmp_path, monkeypatch, tiny_model_dir):
    from transformers import BertConfig, BertModel

    other = make_tiny_model_dir(tmp_path / "wide", seed=2)
    BertModel(BertConfig(vocab_size=200, hidden_size=48, num_hidden_layers=1, num_attention_heads=2,
                         intermediate_size=32, max_position_embeddings=64)).save_pretrained(other)
    monkeypatch.setattr("xlingua.training.tasks.load_examples", lambda spec, seed: tagged_pairs(tmp_path))
    tasks = [{"name": "kd", "objective": "distillation", "data": {"type": "general"},
              "options": {"teacher": str(other), "teacher_cache": str(tmp_path / "cache")}}]
    cfg = config_from_dict({"model": str(tiny_model_dir), "output_dir": str(tmp_path / "run"), "tasks": tasks})
    with pytest.raises(ValueError, match="48-d vectors, the student 32-d"):
        Trainer(cfg)


def test_cosent_task_and_bf16_precision(tmp_path, monkeypatch, tiny_model_dir):
    examples = [(a, b, float(i % 5)) for i, (a, b) in enumerate(PAIRS)]
    monkeypatch.setattr("xlingua.training.tasks.load_examples", lambda spec, seed: examples)
    tasks = [{"name": "sts", "objective": "cosent", "data": {"type": "stsb_multi_mt", "langs": ["en"]}}]
    cfg = config_from_dict({"model": str(tiny_model_dir), "output_dir": str(tmp_path / "run"), "tasks": tasks,
                            "max_steps": 3, "batch_size": 8, "max_seq_length": 16, "precision": "bf16",
                            "warmup_steps": 1, "log_every": 1})
    trainer = Trainer(cfg)
    texts = [a for a, _ in PAIRS[:4]]
    trainer.model.eval()
    with torch.no_grad():
        bf16 = trainer.model(texts)["embedding"]
        trainer.model.precision = "fp32"
        fp32 = trainer.model(texts)["embedding"]
        trainer.model.precision = "bf16"
    assert bf16.dtype == torch.float32  # pooled output back in fp32
    assert torch.nn.functional.cosine_similarity(bf16, fp32).min() > 0.99
    assert not torch.equal(bf16, fp32)  # it did run in bf16
    trainer.train(show_progress=False)
    losses = [json.loads(l) for l in (tmp_path / "run" / "log.jsonl").read_text().splitlines()]
    assert all(np.isfinite(r["loss"]) for r in losses if "loss" in r)


def test_precision_is_validated(tiny_model_dir, tmp_path):
    with pytest.raises(ValueError, match="precision must be one of"):
        config_from_dict({"model": "x", "output_dir": "y", "precision": "fp8",
                          "tasks": [{"name": "t", "objective": "cosent", "data": {"type": "tsv"}}]})


@pytest.mark.parametrize("path", sorted((ROOT / "configs").glob("train_*.yaml")), ids=lambda p: p.name)
def test_shipped_configs_validate(path):
    import yaml

    recipe = yaml.safe_load(path.read_text()).get("recipe", "encoder")
    if recipe == "laser":
        from xlingua.laser.config import recipe_config

        cfg, out, _ = recipe_config(yaml.safe_load(path.read_text()))
    elif recipe == "meaning":
        from xlingua.meaning.recipe import recipe_config

        _, cfg, out = recipe_config(yaml.safe_load(path.read_text()))
    elif recipe == "static":
        from xlingua.static.train import recipe_config

        cfg, out = recipe_config(yaml.safe_load(path.read_text()))
    else:
        cfg = load_config(path)
        assert cfg.tasks
        out = cfg.output_dir
    assert not Path(out).is_absolute()


def test_empty_dev_set_is_refused_before_training(tmp_path, monkeypatch):
    from xlingua.training.config import EvalConfig
    from xlingua.training.evaluate import DevEvaluator

    empty = tmp_path / "xx-en.dev.tsv"
    empty.write_text("")
    monkeypatch.setattr("xlingua.training.evaluate.l10n_path", lambda lang, split: empty)
    with pytest.raises(ValueError, match=r"\['l10n_xx'\] have fewer than 2 pairs"):
        DevEvaluator(EvalConfig(l10n_langs=["xx"]))
