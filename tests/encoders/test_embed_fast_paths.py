"""The fast inference paths: token-budget batching, bundled:bf16 against the fp32 reference,
the ONNX export against torch, and which path `bundled` resolves to."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from tests.tiny_models import tiny_bert
from xlingua.encoders.batching import TokenBudgetMixin, token_batches
from xlingua.encoders.hf import TransformerEncoder


def test_token_batches_by_hand():
    # lengths by index; window 10; budget 20 padded tokens
    lengths = [3, 9, 4, 25, 5, 2]
    # sorted: 5(2) 0(3) 2(4) 4(5) 1(9) 3(25 -> 3 windows of <=10)
    # [5,0,2,4]: 4 rows x 5 = 20 ok; +1: 5 x 9 = 45 > 20 -> cut
    # [1]: then 3 needs 1+3=4 rows x 10 = 40 > 20 -> cut
    assert token_batches(lengths, window=10, budget=20) == [[5, 0, 2, 4], [1], [3]]
    assert token_batches([], window=10, budget=20) == []


@pytest.fixture(scope="module")
def tiny_dir(tmp_path_factory):
    words = "the cat sat on a mat dog ran far away hello world big small red".split()
    model, tok = tiny_bert(words, max_length=16)
    path = tmp_path_factory.mktemp("tiny_bert_budget")
    model.save_pretrained(path)
    tok.save_pretrained(path)
    return path


class TinyBudget(TokenBudgetMixin, TransformerEncoder):
    token_budget = 24


TEXTS = ["the cat sat on a mat", "dog", "", "hello world big red cat far away the end",
         " ".join(["big red dog"] * 10), "a", "small cat ran"]


def test_token_budget_encode_equals_plain_encode(tiny_dir):
    plain = TransformerEncoder(tiny_dir).encode(TEXTS, batch_size=1)
    budget = TinyBudget(tiny_dir)
    np.testing.assert_allclose(budget.encode(TEXTS), plain, atol=1e-5)
    np.testing.assert_allclose(budget.encode(TEXTS, batch_size=2), plain, atol=1e-5)  # ignored
    assert budget.encode([]).shape == (0, 32)


def test_onnx_export_matches_torch(tiny_dir, tmp_path):
    ort = pytest.importorskip("onnxruntime")
    pytest.importorskip("onnx")
    from xlingua.encoders.onnx import export_onnx

    enc = TransformerEncoder(tiny_dir)
    path = export_onnx(enc.model, tmp_path / "onnx" / "model.onnx")
    assert sorted(p.name for p in path.parent.iterdir()) == ["model.onnx"]  # no temp left
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    batch = enc.tokenize(["the cat sat on a mat", "dog ran", "hello world big small red cat"])
    got = session.run(None, {k: batch[k].numpy() for k in ("input_ids", "attention_mask")})[0]
    with torch.no_grad():
        want = enc.model(**batch).last_hidden_state.numpy()
    mask = batch["attention_mask"].numpy().astype(bool)
    np.testing.assert_allclose(got[mask], want[mask], atol=1e-4)


def test_bundled_resolves_to_a_measured_path(monkeypatch):
    from xlingua.encoders import bf16, loading

    made = []
    monkeypatch.setattr(bf16, "BundledBF16Encoder", lambda **o: made.append("bf16") or "bf16")
    monkeypatch.setattr("xlingua.encoders.bundled.BundledTorchEncoder",
                        lambda **o: made.append("torch") or "torch")
    monkeypatch.setattr(bf16, "native_bf16", lambda: True)
    assert loading.load_encoder("bundled") == "bf16"
    monkeypatch.setattr(bf16, "native_bf16", lambda: False)
    assert loading.load_encoder("bundled") == "torch"
    assert made == ["bf16", "torch"]


SAMPLE = ["The train leaves at seven.", "Der Zug fährt um sieben ab.", "Поезд уходит в семь.",
          "火车七点出发。", "يغادر القطار في السابعة.", "ट्रेन सात बजे निकलती है।", "東京は首都です。",
          "서울은 수도입니다.", "", "emoji 😀🎉", " ".join(["long text over many windows"] * 120)]


def test_bf16_cosine_to_fp32_reference():
    """bundled:bf16 against bundled:torch on 8 scripts, an empty text and a 1,000-token text."""
    from xlingua.encoders.bf16 import BundledBF16Encoder
    from xlingua.encoders.bundled import BundledTorchEncoder

    torch_enc = BundledTorchEncoder()
    ref = torch_enc.encode(SAMPLE)
    fast = BundledBF16Encoder()
    assert fast.name == "e5-small:bf16" and fast.fingerprint() != torch_enc.fingerprint()
    got = fast.encode(SAMPLE)
    cos = (got * ref).sum(axis=1)
    assert got.dtype == np.float32 and cos.min() >= 0.999, cos


def test_padding_batches_by_hand():
    from xlingua.encoders.batching import padding_batches

    # sorted: 2 2 3 | 10 10 | 40 costs 3*3+5 + 2*10+5 + 40+5 = 84; one batch would cost 6*40+5
    lengths = [10, 2, 40, 3, 10, 2]
    assert padding_batches(lengths, call_cost=5) == [[1, 5, 3], [0, 4], [2]]
    assert padding_batches(lengths, call_cost=1000) == [[1, 5, 3, 0, 4, 2]]
    assert padding_batches([7, 7], call_cost=0) == [[0, 1]] and padding_batches([], 5) == []
