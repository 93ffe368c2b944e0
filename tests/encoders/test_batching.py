"""The batching rule every encoder's `encode` and the server share: batches worked out by hand,
the padding it reports, and encoders that follow it giving the rows of one text at a time."""
from __future__ import annotations

import numpy as np
import pytest

from tests.encoders.test_hf_encoder import TEXTS, tiny_dir  # noqa: F401  (fixture)
from tests.laser.test_laser_ship import run_dir  # noqa: F401  (fixture)
from xlingua.encoders.base import Encoder
from xlingua.encoders.batching import plan_batches
from xlingua.encoders.hf import TransformerEncoder
from xlingua.encoders.laser import LaserEncoder

# by index: 0:9 1:2 2:30 3:3 4:8 5:3 6:9; sorted: 2 3 3 | 8 9 9 | 30
LENGTHS = [9, 2, 30, 3, 8, 3, 9]


def test_budget_forces_a_cut_that_the_call_cost_alone_would_not_make():
    # no budget to speak of: [2 3 3 8 9 9] padded to 9 costs 54+20, cut after the 3s 9+20+27+20
    plan = plan_batches(LENGTHS, budget=1000, call_cost=20)
    assert plan.batches == [[1, 3, 5, 4, 0, 6], [2]]
    assert (plan.tokens, plan.padded) == (64, 6 * 9 + 30)
    assert plan.padding_fraction == pytest.approx(20 / 84)
    # budget 27: six texts padded to 9 (54) no longer fit; [2 3 3] [8 9 9] (27) [30] is best
    plan = plan_batches(LENGTHS, budget=27, call_cost=20)
    assert plan.batches == [[1, 3, 5], [4, 0, 6], [2]]
    assert (plan.tokens, plan.padded) == (64, 9 + 27 + 30)
    assert plan.padding_fraction == pytest.approx(2 / 66)


def test_max_texts_caps_a_batch():
    # four batches of at most two: [2 3] [3 8] [9 9] [30] pads least (6+16+18+30)
    plan = plan_batches(LENGTHS, budget=1000, call_cost=20, max_texts=2)
    assert plan.batches == [[1, 3], [5, 4], [0, 6], [2]]
    assert plan.padded == 70


def test_cuts_where_padding_costs_more_than_a_call():
    lengths = [10, 2, 40, 3, 10, 2]  # sorted 2 2 3 | 10 10 | 40: 3*3+5 + 2*10+5 + 40+5 = 84
    assert plan_batches(lengths, call_cost=5).batches == [[1, 5, 3], [0, 4], [2]]
    assert plan_batches(lengths, call_cost=1000).batches == [[1, 5, 3, 0, 4, 2]]
    assert plan_batches([7, 7], call_cost=0).batches == [[0, 1]]  # a tie: fewer calls
    empty = plan_batches([])
    assert empty.batches == [] and empty.padding_fraction == 0.0


def test_long_texts_run_as_windows_and_a_text_over_the_budget_runs_alone():
    # 25 tokens in windows of 10: 3 rows of 10, so with the 5 the batch is 4 rows x 10
    plan = plan_batches([5, 25], budget=100, window=10, call_cost=20)
    assert plan.batches == [[0, 1]] and plan.padded == 40 and plan.padding_fraction == 0.25
    plan = plan_batches([5, 25], budget=30, window=10, call_cost=20)
    assert plan.batches == [[0], [1]] and plan.padded == 5 + 30
    assert plan_batches([50, 3], budget=20, call_cost=0).batches == [[1], [0]]


def _one_at_a_time(enc, texts):
    return np.concatenate([enc.encode([t]) for t in texts])


def _recording(enc, monkeypatch):
    """Record the rows of every batch `encode` runs."""
    ran = []
    real = enc._encode_items

    def run(items, lang):
        ran.append(len(items))
        return real(items, lang)

    monkeypatch.setattr(enc, "_encode_items", run)
    return ran


def test_transformer_encode_follows_the_rule_and_matches_one_text_at_a_time(tiny_dir, monkeypatch):  # noqa: F811
    enc = TransformerEncoder(tiny_dir)
    texts = TEXTS + ["the cat " * 40]  # longer than max_length (64): two windows
    want = _one_at_a_time(enc, texts)
    enc.token_budget = 24  # several batches out of these texts
    plan = enc.plan(enc.lengths(texts))
    assert len(plan.batches) > 2
    ran = _recording(enc, monkeypatch)
    got = enc.encode(texts, batch_size=1)  # a count is ignored: batches are cut by tokens
    assert ran == [len(b) for b in plan.batches]
    np.testing.assert_allclose(got, want, atol=1e-5)
    assert enc.encode([]).shape == (0, enc.dim)


def test_laser_encode_follows_the_rule_and_matches_one_text_at_a_time(run_dir, monkeypatch):  # noqa: F811
    enc = LaserEncoder(str(run_dir))
    texts = ["eins zwei drei", "", "the cat sleeps on the sofa and the cat sleeps", "one",
             "das Parlament nahm den Haushalt an", "the budget"]
    want = _one_at_a_time(enc, texts)
    enc.token_budget = 20
    plan = enc.plan(enc.lengths(texts))
    assert len(plan.batches) > 2
    ran = _recording(enc, monkeypatch)
    np.testing.assert_allclose(enc.encode(texts), want, atol=1e-5)
    assert ran == [len(b) for b in plan.batches]


class Chars(Encoder):
    """No tokenizer: lengths estimated at 4 characters a token; rows say which text they are."""

    name, dim = "chars", 2

    def __init__(self):
        self.batches = []

    def _encode_batch(self, texts, lang):
        self.batches.append(list(texts))
        return np.array([[len(t), ord(t[0])] for t in texts], dtype=np.float32)


def test_an_encoder_batched_by_count_caps_the_rule_at_batch_size():
    texts = ["a" * 36, "b" * 4, "c" * 156, "d" * 8, "e" * 36, "f" * 4]  # tokens 10 2 40 3 10 2
    enc = Chars()
    enc.call_cost = 5
    assert enc.lengths(texts) == [10, 2, 40, 3, 10, 2]
    out = enc.encode(texts, batch_size=2)
    assert [[t[0] for t in b] for b in enc.batches] == [["b", "f"], ["d"], ["a", "e"], ["c"]]
    np.testing.assert_array_equal(out[:, 1], [ord(t[0]) for t in texts])
