"""TransformerEncoder on a tiny BERT built here: pooling, layers, windows, saving, errors."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from tests.tiny_models import tiny_bert
from xlingua.encoders.hf import TransformerEncoder
from xlingua.encoders.loading import load_encoder
from xlingua.encoders.pooling import pool

WORDS = "the cat sat on a mat dog ran far away hello world big small red".split()


@pytest.fixture(scope="module")
def tiny_dir(tmp_path_factory):
    model, tok = tiny_bert(WORDS, max_length=64)
    path = tmp_path_factory.mktemp("tiny_bert")
    model.save_pretrained(path)
    tok.save_pretrained(path)
    return path


def _reference(enc, texts, layer=-1, mode="mean"):
    """Each text run alone through the raw model, pooled by hand."""
    out = []
    for t in texts:
        b = enc.tokenize([t])
        with torch.no_grad():
            hs = enc.model(**b, output_hidden_states=True).hidden_states[layer]
        out.append(pool(hs, b["attention_mask"], mode)[0].numpy())
    return np.stack(out)


TEXTS = ["the cat sat on a mat", "dog ran", "hello world big red cat", "", "unknownword the"]


@pytest.mark.parametrize("mode", ["mean", "cls", "max"])
def test_pooling_modes_match_hand_pooling(tiny_dir, mode):
    enc = TransformerEncoder(tiny_dir, pooling=mode, normalize=False)
    got = enc.encode(TEXTS, batch_size=2)
    np.testing.assert_allclose(got, _reference(enc, TEXTS, mode=mode), atol=1e-5)
    assert not enc.normalized


def test_max_pooling_ignores_padding():
    hidden = torch.tensor([[[1.0, -5.0], [2.0, -6.0], [9.0, 9.0]]])
    mask = torch.tensor([[1, 1, 0]])
    assert pool(hidden, mask, "max").tolist() == [[2.0, -5.0]]
    assert pool(hidden, mask, "mean").tolist() == [[1.5, -5.5]]
    assert pool(hidden, mask, "cls").tolist() == [[1.0, -5.0]]


def test_layer_index_and_normalization(tiny_dir):
    enc = TransformerEncoder(tiny_dir, layer=1)
    ref = _reference(enc, TEXTS, layer=1)
    ref /= np.linalg.norm(ref, axis=1, keepdims=True)
    np.testing.assert_allclose(enc.encode(TEXTS), ref, atol=1e-5)
    last = TransformerEncoder(tiny_dir).encode(TEXTS)
    assert not np.allclose(last, ref, atol=1e-3)  # layer 1 of 2 is not the last layer


def test_long_text_is_windowed_not_truncated(tiny_dir):
    enc = TransformerEncoder(tiny_dir, max_length=6, normalize=False)  # windows of 4 words
    words = "the cat sat on a mat dog ran far away".split()  # 10 words: windows 4 + 4 + 2
    text = " ".join(words)
    chunks = [" ".join(words[i : i + 4]) for i in (0, 4, 8)]
    parts = enc.encode(chunks)
    expected = (4 * parts[0] + 4 * parts[1] + 2 * parts[2]) / 10
    np.testing.assert_allclose(enc.encode([text])[0], expected, atol=1e-5)
    tokens = enc.encode_tokens([text])[0]
    assert tokens.shape == (3 * 2 + 10, 32)  # each window carries [CLS] and [SEP]
    assert enc.tokenize([text])["input_ids"].shape == (1, 6)  # training batches truncate


def test_encode_tokens_excludes_padding(tiny_dir):
    enc = TransformerEncoder(tiny_dir)
    pairs = enc.encode_tokens(["the cat", "hello world big red cat"], return_ids=True)
    (ids0, a0), (ids1, a1) = pairs
    assert ids0[0] == 2 and ids0[-1] == 3 and len(ids0) == 4 and a0.shape == (4, 32)
    assert a1.shape == (7, 32)
    alone = enc.encode_tokens(["the cat"])[0]
    np.testing.assert_allclose(a0, alone, atol=1e-5)


def test_forward_has_gradients(tiny_dir):
    enc = TransformerEncoder(tiny_dir)
    enc.model.train()
    vec = enc.forward(enc.tokenize(["the cat", "a dog"]))
    assert vec.shape == (2, 32) and vec.requires_grad
    (vec[0] @ vec[1]).backward()
    assert enc.model.embeddings.word_embeddings.weight.grad is not None
    enc.encode(["the cat"])
    assert enc.model.training  # encoding restores the training flag


def test_save_round_trip_xlingua_and_sentence_transformers(tiny_dir, tmp_path):
    st = pytest.importorskip("sentence_transformers")
    enc = TransformerEncoder(tiny_dir, pooling="cls", layer=1, prefix="hello ")
    want = enc.encode(TEXTS)
    out = enc.save(tmp_path / "saved")
    again = load_encoder(str(out))
    assert (again.pooling, again.normalize, again.prefix) == ("cls", True, "hello ")
    np.testing.assert_allclose(again.encode(TEXTS), want, atol=1e-5)
    model = st.SentenceTransformer(str(out), device="cpu")
    np.testing.assert_allclose(model.encode(TEXTS, convert_to_numpy=True), want, atol=1e-5)


def test_offline_hub_name_fails_with_one_line(monkeypatch):
    import huggingface_hub.constants as hub_constants

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr(hub_constants, "HF_HUB_OFFLINE", True)
    with pytest.raises(OSError) as info:
        load_encoder("xlingua-test-org/no-such-model-4f2a")
    message = str(info.value)
    assert "\n" not in message and "local path" in message
    assert "xlingua-test-org/no-such-model-4f2a" in message
    assert info.value.__cause__ is None


def test_missing_local_directory_is_named(tmp_path):
    with pytest.raises(FileNotFoundError, match="no_such_dir"):
        load_encoder(str(tmp_path / "no_such_dir"))


@pytest.mark.parametrize("pooling_cfg,expected", [
    ({"embedding_dimension": 8, "pooling_mode": "max"}, "max"),  # sentence-transformers >= 6
    ({"word_embedding_dimension": 8, "pooling_mode_cls_token": True,
      "pooling_mode_mean_tokens": False}, "cls"),  # classic
])
def test_reads_sentence_transformers_settings(tmp_path, pooling_cfg, expected):
    import json

    from xlingua.encoders.pooling import read_st_settings

    (tmp_path / "modules.json").write_text(json.dumps([
        {"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
        {"idx": 1, "name": "1", "path": "1_Pooling", "type": "x.Pooling"}]))
    (tmp_path / "1_Pooling").mkdir()
    (tmp_path / "1_Pooling" / "config.json").write_text(json.dumps(pooling_cfg))
    (tmp_path / "sentence_bert_config.json").write_text(json.dumps({"max_seq_length": 128}))
    (tmp_path / "config_sentence_transformers.json").write_text(json.dumps(
        {"prompts": {"query": "query: ", "passage": "passage: "}, "default_prompt_name": "query"}))
    got = read_st_settings(tmp_path)
    assert (got.pooling, got.normalize, got.max_length, got.prefix) == \
        (expected, False, 128, "query: ")


def test_unsupported_sentence_transformers_pooling_is_an_error(tmp_path):
    import json

    from xlingua.encoders.pooling import read_st_settings

    (tmp_path / "modules.json").write_text(json.dumps(
        [{"idx": 1, "name": "1", "path": "p", "type": "x.Pooling"}]))
    (tmp_path / "p").mkdir()
    (tmp_path / "p" / "config.json").write_text(json.dumps({"pooling_mode": "lasttoken"}))
    with pytest.raises(ValueError, match="lasttoken"):
        read_st_settings(tmp_path)


def test_bf16_spec_of_a_model_directory(tiny_dir):
    """`bf16:DIR`: the same vectors as fp32 up to bf16 rounding, under its own fingerprint,
    in input order although batched by token count."""
    fp32 = load_encoder(str(tiny_dir))
    bf16 = load_encoder(f"bf16:{tiny_dir}")
    assert bf16.name == f"bf16:{tiny_dir}" and bf16.fingerprint() != fp32.fingerprint()
    assert next(bf16.model.parameters()).dtype == torch.bfloat16
    texts = TEXTS + ["the cat " * 40]  # one longer than max_length: windowed in bf16 too
    ref, got = fp32.encode(texts), bf16.encode(texts)
    assert got.dtype == np.float32
    cos = (ref * got).sum(axis=1)
    assert cos.min() > 0.99, cos
    # rows in input order: each bf16 vector is nearest to its own fp32 vector
    assert ((ref @ got.T).argmax(axis=0) == np.arange(len(texts))).all()


def test_encode_tokens_content_only_drops_specials_of_every_window_and_the_prefix(tiny_dir):
    enc = TransformerEncoder(tiny_dir, max_length=6, normalize=False)  # windows of 4 words
    text = "the cat sat on a mat dog ran far away"
    (ids, full), = enc.encode_tokens([text], return_ids=True)
    (cids, content), = enc.encode_tokens([text], return_ids=True, content_only=True)
    assert len(ids) == 16 and len(cids) == 10 and 2 not in cids and 3 not in cids
    keep = [1, 2, 3, 4, 7, 8, 9, 10, 13, 14]  # [CLS] w w w w [SEP] x3 windows
    np.testing.assert_allclose(content, full[keep])
    prefixed = TransformerEncoder(tiny_dir, prefix="hello world ")
    (pids, _), = prefixed.encode_tokens(["the cat"], return_ids=True, content_only=True)
    assert pids == [4, 5]  # "the cat": neither the prefix's two words nor [CLS]/[SEP]
    (eids, _), = enc.encode_tokens([""], return_ids=True, content_only=True)
    assert eids == [2]  # no content token: the first token stands in
