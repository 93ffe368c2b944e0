"""Training a static encoder: batches without repeated English, the teacher's piece vectors,
SIF weights, learning on toy pairs, exact resume and the refusal of changed settings (the old
trainer's checkpoints: tests/training/test_legacy_resume.py)."""
import random

import numpy as np
import pytest
import torch

from xlingua.data.general import Pair
from xlingua.static.pieces import sif_weights, start_vectors, teacher_piece_vectors
from xlingua.static.train import Schedule, StaticConfig, to_rows, train, unique_batches
from tests.training.conftest import PAIRS, make_tiny_model_dir


@pytest.fixture(scope="module")
def teacher_dir(tmp_path_factory):
    return str(make_tiny_model_dir(tmp_path_factory.mktemp("static_teacher")))


def _pairs():
    return [Pair("de", de, en, "toy") for en, de in PAIRS]


def test_unique_batches_cover_every_pair_once_without_repeated_english():
    english = np.array([0, 0, 0, 1, 1, 2, 3, 4, 5, 5])
    batches = unique_batches(english, 4, random.Random(0))
    seen = np.concatenate(batches)
    assert sorted(seen.tolist()) == list(range(10))
    for b in batches:
        assert len(b) <= 4 and len(set(english[b].tolist())) == len(b)


def test_schedule_is_a_function_of_the_step():
    english = np.arange(50) % 7
    a, b = Schedule(english, 5, seed=3), Schedule(english, 5, seed=3)
    late = [b(s).tolist() for s in (40, 3, 17)]  # another order, other passes in between
    assert [a(s).tolist() for s in (40, 3, 17)] == late
    assert a(0).tolist() != Schedule(english, 5, seed=4)(0).tolist()


def test_to_rows_leaves_out_pieces_without_a_row():
    row = np.array([-1, 0, 1, -1, 2])
    texts = to_rows([[1, 2, 3], [], [0, 3], [4, 4]], row)
    assert texts.offsets.tolist() == [0, 2, 2, 2, 4]
    assert texts.flat.tolist() == [0, 1, 2, 2]


def test_sif_weight_is_a_over_a_plus_frequency():
    assert np.allclose(sif_weights(np.array([1, 3]), a=0.25), [0.25 / 0.5, 0.25 / 1.0])


def test_start_vectors_scale_each_piece_by_its_weight():
    rng = np.random.default_rng(0)
    teacher = rng.standard_normal((6, 4))
    counts = np.array([1, 1, 1, 1, 1, 95])
    v = start_vectors(teacher, counts, dim=3, sif=0.01)
    plain = start_vectors(teacher, counts, dim=3, sif=1e9)  # every weight ~1
    ratio = np.linalg.norm(v, axis=1) / np.linalg.norm(plain, axis=1)
    assert v.shape == (6, 3)
    assert np.allclose(ratio, sif_weights(counts, 0.01), rtol=1e-4)


def test_piece_vector_is_the_teachers_output_for_the_piece_alone(teacher_dir):
    from xlingua.encoders.loading import load_encoder

    enc = load_encoder(teacher_dir)
    cat = enc.tokenizer.content_ids(["cat"])[0][0]
    got = teacher_piece_vectors(enc, np.array([cat, cat + 1]), show_progress=False)
    batch = enc._pad([enc.tokenizer.wrap([cat])])
    with torch.no_grad():
        want = enc._pooled(batch, None, normalize=False)[0].numpy()
    assert np.allclose(got[0], want, atol=1e-5)
    assert not np.allclose(got[0], got[1])


def _config(teacher_dir, **kw):
    base = dict(teacher=teacher_dir, dim=8, min_count=1, batch_size=8, lr=0.05, max_steps=40, dev_every=20,
                scale=10.0)
    return StaticConfig(**{**base, **kw})


def test_training_learns_the_toy_pairs_and_writes_a_static_encoder(teacher_dir, tmp_path):
    import json

    from xlingua.encoders.static import StaticEncoder

    pairs = _pairs()
    result = train(_config(teacher_dir, max_steps=80), tmp_path / "run", show_progress=False, pairs=pairs, dev=pairs)
    log = [json.loads(l) for l in (tmp_path / "run" / "log.jsonl").read_text().splitlines()]
    devs = [r["eval"]["dev"] for r in log if "eval" in r]
    assert [r["step"] for r in log if "eval" in r] == [0, 20, 40, 60, 80]
    assert devs[-1] > devs[0] and result["best_dev"] >= 75.0 and result["best_dev"] == max(devs)
    enc = StaticEncoder(tmp_path / "run" / "model")
    assert enc.dim == 8
    x = enc.encode([p.text for p in pairs])
    y = enc.encode([p.english for p in pairs])
    assert float(np.mean((x @ y.T).argmax(1) == np.arange(len(pairs)))) >= 0.75


def test_resumed_run_ends_where_an_uninterrupted_one_does(teacher_dir, tmp_path):
    from safetensors.numpy import load_file

    pairs = _pairs()
    train(_config(teacher_dir, max_steps=40), tmp_path / "whole", show_progress=False, pairs=pairs, dev=pairs)
    train(_config(teacher_dir, max_steps=25), tmp_path / "cut", show_progress=False, pairs=pairs, dev=pairs)
    result = train(_config(teacher_dir, max_steps=40), tmp_path / "cut", show_progress=False, pairs=pairs, dev=pairs)
    whole = torch.load(tmp_path / "whole" / "checkpoint.pt", weights_only=False)
    cut = torch.load(tmp_path / "cut" / "checkpoint.pt", weights_only=False)
    assert cut["step"] == whole["step"] == result["step"] == 40
    assert torch.equal(cut["model"]["weight"], whole["model"]["weight"])
    assert load_file(str(tmp_path / "cut" / "model" / "vectors.safetensors"))["vectors"].shape[1] == 8


def test_resume_refuses_a_changed_setting_naming_it(teacher_dir, tmp_path):
    from xlingua.data.text import InputError

    pairs = _pairs()
    train(_config(teacher_dir, max_steps=5), tmp_path / "run", show_progress=False, pairs=pairs, dev=pairs)
    with pytest.raises(InputError, match=r"\(dim: 8 -> 4\)") as refused:
        train(_config(teacher_dir, max_steps=10, dim=4), tmp_path / "run", show_progress=False, pairs=pairs, dev=pairs)
    assert "\n" not in str(refused.value)
    # budgets and the rate may change: the run goes on
    result = train(_config(teacher_dir, max_steps=10, lr=0.01, dev_every=3), tmp_path / "run", show_progress=False,
                   pairs=pairs, dev=pairs)
    assert result["step"] == 10


def test_schedule_follows_passes_of_different_lengths():
    english = np.array([0, 0, 0, 1, 2])  # passes of 3 or 4 batches of 2, by the shuffle
    sched = Schedule(english, 2, seed=0)
    steps = [sched(s) for s in range(30)]
    lengths = np.diff(sched.starts)
    assert len(set(lengths.tolist())) > 1
    for p in range(len(lengths) - 1):  # every pass shows every pair exactly once
        seen = np.concatenate(steps[sched.starts[p]:sched.starts[p + 1]])
        assert sorted(seen.tolist()) == [0, 1, 2, 3, 4]
    fresh = Schedule(english, 2, seed=0)
    assert [fresh(s).tolist() for s in (29, 0, 17)] == [steps[s].tolist() for s in (29, 0, 17)]


def test_model2vec_start_gives_each_piece_model2vecs_weighted_row(teacher_dir, monkeypatch):
    """The rows model2vec's distill returns, matched to our pieces by piece string (a fake
    distill with a token mapping and weights, so the matching is what is tested)."""
    import sys
    import types

    from xlingua.encoders.loading import load_encoder
    from xlingua.static.pieces import model2vec_vectors
    from xlingua.static.train import content_tokenizer

    class Vocab:
        def get_vocab(self):
            return {"dog": 0, "cat": 1, "house": 2}

    calls = {}

    def distill(model_name, pca_dims):
        calls["args"] = (model_name, pca_dims)
        return types.SimpleNamespace(tokenizer=Vocab(), embedding=np.array([[1.0, 0], [0, 1.0], [2.0, 2.0]]),
                                     token_mapping=np.array([1, 0, 2]), weights=np.array([0.5, 2.0, 1.0]))

    fake = types.ModuleType("model2vec.distill")
    fake.distill = distill
    monkeypatch.setitem(sys.modules, "model2vec", types.ModuleType("model2vec"))
    monkeypatch.setitem(sys.modules, "model2vec.distill", fake)
    tok = content_tokenizer(load_encoder(teacher_dir))
    cat, dog = tok.content_ids(["cat dog"])[0]
    red = tok.content_ids(["red"])[0][0]  # a piece model2vec does not have
    got = model2vec_vectors(teacher_dir, tok, np.array([dog, cat, red]), dim=2)
    # dog: id 0 -> row 1 ([0, 1]) x weight 0.5; cat: id 1 -> row 0 ([1, 0]) x 2.0; red: zeros
    assert np.allclose(got, [[0, 0.5], [2.0, 0], [0, 0]]) and calls["args"] == (teacher_dir, 2)


def test_settings_from_the_command_line_are_typed_by_the_config():
    from xlingua.settings import parse_settings

    got = parse_settings(StaticConfig, ["exclude_langs=jv, af", "dim=128", "init=model2vec", "lr=0.002"])
    assert got == {"exclude_langs": ["jv", "af"], "dim": 128, "init": "model2vec", "lr": 0.002}
    assert StaticConfig(**got).exclude_langs == ["af", "jv"]
    with pytest.raises(ValueError, match="not NAME=VALUE"):
        parse_settings(StaticConfig, ["width=3"])
    with pytest.raises(ValueError, match="init must be teacher, model2vec or random"):
        StaticConfig(init="zeros")
    with pytest.raises(ValueError, match="dev_every must be at least 1"):
        StaticConfig(dev_every=0)
