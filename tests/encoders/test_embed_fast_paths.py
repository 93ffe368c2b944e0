"""The fast inference paths: bundled:bf16 against the fp32 reference, the ONNX export against
torch, CTranslate2 against torch (which engine `bundled` runs: test_engines.py)."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from tests.tiny_models import tiny_bert
from xlingua.encoders.hf import TransformerEncoder


@pytest.fixture(scope="module")
def tiny_dir(tmp_path_factory):
    words = "the cat sat on a mat dog ran far away hello world big small red".split()
    model, tok = tiny_bert(words, max_length=16)
    path = tmp_path_factory.mktemp("tiny_bert_budget")
    model.save_pretrained(path)
    tok.save_pretrained(path)
    return path


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


SAMPLE = ["The train leaves at seven.", "Der Zug fährt um sieben ab.", "Поезд уходит в семь.",
          "火车七点出发。", "يغادر القطار في السابعة.", "ट्रेन सात बजे निकलती है।", "東京は首都です。",
          "서울은 수도입니다.", "", "emoji 😀🎉", " ".join(["long text over many windows"] * 120)]


def test_bf16_cosine_to_fp32_reference():
    """bundled:bf16 against bundled:torch on 8 scripts, an empty text and a 1,000-token text."""
    from xlingua.encoders.bf16 import BundledBF16Encoder
    from xlingua.encoders.e5 import BundledTorchEncoder

    torch_enc = BundledTorchEncoder()
    ref = torch_enc.encode(SAMPLE)
    fast = BundledBF16Encoder()
    assert fast.name == "e5-small:bf16" and fast.fingerprint() != torch_enc.fingerprint()
    got = fast.encode(SAMPLE)
    cos = (got * ref).sum(axis=1)
    assert got.dtype == np.float32 and cos.min() >= 0.999, cos


def test_ct2_states_match_torch(tiny_dir, tmp_path):
    """CTranslate2 fp32 gives torch's hidden states; int8 stays close; the conversion is written
    once beside the model, with no temporary left."""
    pytest.importorskip("ctranslate2")
    import shutil

    from xlingua.encoders.ct2 import CT2States

    model_dir = tmp_path / "model"
    shutil.copytree(tiny_dir, model_dir)
    texts = ["the cat sat on a mat", "dog ran", "hello world big small red cat", ""]
    want = TransformerEncoder(model_dir).encode(texts)

    class TinyCT2(CT2States, TransformerEncoder):
        def __init__(self, path, compute):
            super().__init__(model_dir)
            self._start_ct2(path, threads=1)

    torch_threads = torch.get_num_threads()
    fp32 = TinyCT2("ct2", "float32")
    assert torch.get_num_threads() == torch_threads  # CTranslate2's one thread is its own
    assert sorted(p.name for p in model_dir.iterdir() if p.name.startswith(("ct2", ".ct2"))) == ["ct2"]
    assert fp32.matmul_dtype == "fp32"
    np.testing.assert_allclose(fp32.encode(texts), want, atol=1e-5)
    cloudpickle = pytest.importorskip("cloudpickle")
    copy = cloudpickle.loads(cloudpickle.dumps(fp32))  # as Ray sends it to a worker
    np.testing.assert_array_equal(copy.encode(texts), fp32.encode(texts))
    int8 = TinyCT2("int8", "int8")
    assert int8.matmul_dtype == "int8"
    cos = (int8.encode(texts) * want).sum(axis=1)
    assert cos.min() >= 0.99, cos


def test_ct2_refuses_a_layer_and_a_missing_package(tiny_dir, monkeypatch):
    import builtins

    from xlingua.encoders.ct2 import CT2States, require_ct2

    class TinyCT2(CT2States, TransformerEncoder):
        pass

    pytest.importorskip("ctranslate2")
    enc = TinyCT2(tiny_dir, layer=1)
    with pytest.raises(ValueError, match="last layer only; use :torch for layer="):
        enc._start_ct2("ct2", threads=1)
    real_import = builtins.__import__
    monkeypatch.setattr(builtins, "__import__", lambda name, *a, **k: (_ for _ in ()).throw(ImportError())
                        if name == "ctranslate2" else real_import(name, *a, **k))
    with pytest.raises(ImportError, match=r"bundled:int8 needs ctranslate2: pip install ctranslate2"):
        require_ct2("bundled:int8")


def test_ct2_paths_near_fp32_reference():
    """bundled:ct2 and bundled:int8 against bundled:torch on 8 scripts, an empty text and a
    1,000-token text (windows): fp32 to 1e-5, int8 within its stated bound."""
    pytest.importorskip("ctranslate2")
    from xlingua.encoders.loading import load_encoder

    ref = load_encoder("e5-small:torch").encode(SAMPLE)
    fp32 = load_encoder("e5-small:ct2")
    assert fp32.name == "e5-small:ct2"
    assert (fp32.encode(SAMPLE) * ref).sum(axis=1).min() >= 0.99999
    cos = (load_encoder("e5-small:int8").encode(SAMPLE) * ref).sum(axis=1)
    assert cos.min() >= 0.995 and cos.mean() >= 0.997, cos
