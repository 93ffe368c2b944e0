"""Training without dropout: the rate reaches every dropout, and bf16 training then runs eager
attention, which gives what the fused attention gives and is put back after each pass."""
from __future__ import annotations

import torch
from torch import nn

from tests.training.conftest import PAIRS


def _model(tiny_model_dir):
    from xlingua.training.model import SentenceModel

    return SentenceModel.load(str(tiny_model_dir))


def test_set_dropout_reaches_every_dropout_and_leaves_the_config(tiny_model_dir):
    model = _model(tiny_model_dir)
    model.set_dropout(0.0)
    rates = [m.p for m in model.model.modules() if isinstance(m, nn.Dropout)]
    assert rates and all(p == 0.0 for p in rates)
    assert model.model.config.hidden_dropout_prob == 0.1  # the saved model's config is its own


def test_bf16_training_without_dropout_runs_eager_attention_and_puts_it_back(tiny_model_dir):
    model = _model(tiny_model_dir)
    model.precision = "bf16"
    model.train()
    seen = []
    first_layer = model.model.encoder.layer[0].attention.self
    first_layer.register_forward_pre_hook(lambda m, a: seen.append(m.config._attn_implementation))
    before = model.model.config._attn_implementation
    texts = [a for a, _ in PAIRS]

    model(texts)  # dropout on: the fused attention
    model.set_dropout(0.0)
    eager = model(texts)["embedding"]
    assert seen == [before, "eager"] and before != "eager"
    assert model.model.config._attn_implementation == before

    model.model.config._attn_implementation = before
    with torch.no_grad():  # inference keeps the fused attention, and gives the same vectors
        fused = model(texts)["embedding"]
    assert seen[-1] == before
    torch.testing.assert_close(eager.detach(), fused, atol=0.05, rtol=0.05)


def test_fp32_training_keeps_the_fused_attention(tiny_model_dir):
    model = _model(tiny_model_dir)
    model.set_dropout(0.0)
    model.train()
    seen = []
    model.model.encoder.layer[0].attention.self.register_forward_pre_hook(
        lambda m, a: seen.append(m.config._attn_implementation))
    model([a for a, _ in PAIRS])
    assert seen == [model.model.config._attn_implementation] != ["eager"]
