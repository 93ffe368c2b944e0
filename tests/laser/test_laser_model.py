"""LASER network pieces: shapes, max-pooling over valid steps, batching by tokens."""
import random

import torch

from xlingua.laser.data import Direction, Schedule, collate, token_batches
from xlingua.encoders.laser_model import BiLSTMEncoder, LaserConfig, LaserModel, max_pool
from xlingua.encoders.laser_vocab import BOS, EOS, PAD


def test_max_pool_ignores_padding_hand_case():
    states = torch.tensor([[[1.0, -5.0], [3.0, -2.0], [9.0, 9.0]],  # length 2: the 9s are padding
                           [[-1.0, -4.0], [-3.0, -1.0], [-2.0, -7.0]]])  # length 3: all negative
    out = max_pool(states, torch.tensor([2, 3]))
    assert out.tolist() == [[3.0, -2.0], [-1.0, -1.0]]


def test_forward_shapes_and_padding_invariance():
    torch.manual_seed(0)
    cfg = LaserConfig(vocab_size=50, embed_dim=8, hidden=6, layers=2, dec_hidden=10, lang_dim=3)
    model = LaserModel(cfg).eval()
    src = torch.tensor([[5, 6, 7, PAD], [8, 9, 10, 11]])
    lengths = torch.tensor([3, 4])
    tin = torch.tensor([[BOS, 5, 6], [BOS, 7, PAD]])
    logits = model(src, lengths, tin, torch.tensor([0, 1]))
    assert logits.shape == (2, 3, 50)
    emb = model.encoder(src, lengths)
    assert emb.shape == (2, 12)
    # The first sentence alone (no padding) has the same embedding as inside the padded batch.
    alone = model.encoder(torch.tensor([[5, 6, 7]]), torch.tensor([3]))
    torch.testing.assert_close(alone[0], emb[0])


def test_token_batches_respect_budget_and_cover_everything():
    lengths = [random.Random(i).randint(1, 30) for i in range(200)]
    batches = token_batches(lengths, 120, random.Random(0))
    assert sorted(i for b in batches for i in b) == list(range(200))
    assert all(len(b) * max(lengths[i] for i in b) <= 120 for b in batches)


def test_collate_shifts_target_and_schedule_alternates():
    d = Direction("de", "en", [[5, 6], [7]], [[8], [9, 10]])
    src, lengths, tin, tout, lang = collate(d, [0, 1], 0)
    assert src.tolist() == [[5, 6], [7, PAD]] and lengths.tolist() == [2, 1]
    assert tin.tolist() == [[BOS, 8, PAD], [BOS, 9, 10]]
    assert tout.tolist() == [[8, EOS, PAD], [9, 10, EOS]]
    e = Direction("en", "fr", [[5]], [[6]])
    sched = Schedule([d, e], max_tokens=100)
    assert [sched(s)[0] for s in range(4)] == [0, 1, 0, 1]
    assert sched(2) == Schedule([d, e], max_tokens=100)(2)  # a pure function of the step
