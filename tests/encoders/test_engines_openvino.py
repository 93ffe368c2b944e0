"""The OpenVINO engines on a tiny BERT: each one's vectors against fp32 torch within its bound, the
conversion made once into xlingua's cache and redone when its stamp changes, a copy (as Ray
sends it) giving the same vectors, and the refusals (layer=, a missing package)."""
from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("openvino")

from tests.tiny_models import tiny_bert  # noqa: E402
from xlingua.encoders import openvino as ov_engine  # noqa: E402
from xlingua.encoders.hf import TransformerEncoder  # noqa: E402
from xlingua.encoders.manifest import model_fingerprint  # noqa: E402

WORDS = "the cat sat on a mat dog ran far away hello world big small red".split()
TEXTS = ["the cat sat on a mat", "dog ran", "hello world big small red cat", "",
         "a red dog ran far away from the big cat", " ".join(WORDS * 3)]


@pytest.fixture(scope="module")
def tiny_dir(tmp_path_factory):
    model, tok = tiny_bert(WORDS, max_length=32)
    path = tmp_path_factory.mktemp("tiny_bert_ov")
    model.save_pretrained(path)
    tok.save_pretrained(path)
    return path


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    return tmp_path_factory.mktemp("engines")


class TinyOV(ov_engine.OpenVinoStates, TransformerEncoder):
    def __init__(self, path, engine, cache, settings=None, **options):
        super().__init__(path, **options)
        self._start_openvino(engine, threads=1, settings=settings, cache=cache)


@pytest.fixture(scope="module")
def reference(tiny_dir):
    return TransformerEncoder(tiny_dir).encode(TEXTS)


@pytest.fixture(autouse=True)
def _calibrate_on_the_tiny_vocabulary(monkeypatch):
    # the shipped sample is multilingual text, all [UNK] to a 19-word vocabulary
    monkeypatch.setattr(ov_engine, "calibration_texts",
                        lambda: [" ".join(WORDS[i:i + 1 + i % 7]) for i in range(len(WORDS))] * 4)


def _int8_inputs(ov_dir) -> set[str]:
    """The linear layers (named without their layer number) whose input the quantized model
    rounds to int8 (a FakeQuantize before the MatMul), and "attention" if the attention's inputs
    are rounded (a FakeQuantize on any other path)."""
    import re

    import openvino as ov

    found = set()
    for op in ov.Core().read_model(str(ov_dir / "model.xml")).get_ordered_ops():
        if op.get_type_name() != "FakeQuantize":
            continue
        for target in op.output(0).get_target_inputs():
            node = target.get_node()
            if node.get_type_name() != "MatMul":
                found.add("attention")
                continue
            name = re.sub(r"\.layer\.\d+\.", ".layer.", node.get_friendly_name().split("/")[0])
            found.add(name.split(".layer.")[-1].replace("attention.self.", ""))
    return {"layer.output.dense" if n == "output.dense" else n for n in found}


def _cos(a, b):
    return (a * b).sum(axis=1)


def test_fp32_gives_torch_vectors_and_converts_once(tiny_dir, cache, reference, monkeypatch):
    enc = TinyOV(tiny_dir, "openvino", cache)
    assert enc.matmul_dtype == "fp32" and enc.ov_dir.parent == cache
    assert enc.ov_dir.name.startswith(f"openvino-{tiny_dir.name}-")
    np.testing.assert_allclose(enc.encode(TEXTS), reference, atol=1e-5)
    monkeypatch.setattr(ov_engine, "to_openvino", lambda model: pytest.fail("converted again"))
    again = TinyOV(tiny_dir, "ov-bf16", cache)  # the same converted model, another hint
    assert again.ov_dir == enc.ov_dir and again.fingerprint() != TransformerEncoder(tiny_dir).fingerprint()
    # the conversion's name, appended for the caches, is dropped where fingerprints are compared
    assert model_fingerprint(again.fingerprint()) == TransformerEncoder(tiny_dir).fingerprint()


def test_bf16_hint_within_its_bound(tiny_dir, cache, reference):
    enc = TinyOV(tiny_dir, "ov-bf16", cache)
    cos = _cos(enc.encode(TEXTS), reference)
    # bf16 where the CPU has native bf16, fp32 (cosine 1) elsewhere
    assert cos.min() >= (0.99 if enc.matmul_dtype == "bf16" else 0.99999), cos


def test_int8_within_its_bound_and_rebuilt_for_other_settings(tiny_dir, cache, reference, monkeypatch):
    pytest.importorskip("nncf")
    enc = TinyOV(tiny_dir, "ov-int8", cache)
    assert enc.matmul_dtype == "int8" and enc.ov_dir.name.startswith(f"ov-int8-{tiny_dir.name}-")
    assert _int8_inputs(enc.ov_dir) == {"query", "key", "value", "attention.output.dense", "intermediate.dense"}
    got = enc.encode(TEXTS)
    cos = _cos(got, reference)
    assert cos.min() >= 0.99 and not np.allclose(got, reference, atol=1e-5), cos
    first = enc.ov_dir
    # calibrated with the prefix the texts are embedded with: a cache of its own beside the first
    prefixed = TinyOV(tiny_dir, "ov-int8", cache, prefix="query: ")
    assert prefixed.ov_dir.name.startswith(f"ov-int8-{tiny_dir.name}-query-") and first.exists()
    monkeypatch.setattr(ov_engine, "INT8", {**ov_engine.INT8, "keep_float": []})
    other = TinyOV(tiny_dir, "ov-int8", cache)
    assert other.ov_dir != first and not first.exists()  # another stamp: rebuilt, the old one gone
    assert _int8_inputs(other.ov_dir) == {"query", "key", "value", "attention.output.dense", "intermediate.dense",
                                          "layer.output.dense", "attention"}  # nothing kept in float now
    assert other.fingerprint() != enc.fingerprint()


def test_int8_on_other_calibration_texts_converts_apart_and_a_copy_keeps_them(tiny_dir, cache):
    pytest.importorskip("nncf")
    cloudpickle = pytest.importorskip("cloudpickle")
    shipped = TinyOV(tiny_dir, "ov-int8", cache)
    other = TinyOV(tiny_dir, "ov-int8", cache, settings={"calibration": ["red dog", "a big cat sat far away"] * 3})
    assert other.ov_dir != shipped.ov_dir and "calibration" not in other.int8_settings
    copy = cloudpickle.loads(cloudpickle.dumps(other))  # compiles again from the same texts
    assert copy.ov_dir == other.ov_dir
    np.testing.assert_array_equal(copy.encode(TEXTS), other.encode(TEXTS))


def test_a_copy_gives_the_same_vectors(tiny_dir, cache):
    cloudpickle = pytest.importorskip("cloudpickle")
    enc = TinyOV(tiny_dir, "openvino", cache)
    copy = cloudpickle.loads(cloudpickle.dumps(enc))
    np.testing.assert_array_equal(copy.encode(TEXTS), enc.encode(TEXTS))


def test_layer_and_unknown_settings_are_refused(tiny_dir, cache):
    with pytest.raises(ValueError, match="the openvino engine returns the last layer only; use :torch for layer="):
        TinyOV(tiny_dir, "openvino", cache, layer=1)
    pytest.importorskip("nncf")
    with pytest.raises(ValueError, match=r"keep_float: unknown kinds \['ffn'\]; choose from qkv, attn-out"):
        ov_engine.quantize_int8(None, None, [], {"keep_float": ["ffn"]})


def test_a_model_directory_runs_on_each_engine_by_its_spec(tiny_dir, cache, reference):
    from xlingua.encoders.loading import load_encoder

    fp32 = load_encoder(f"openvino:{tiny_dir}", cache=cache, threads=1)
    assert isinstance(fp32, ov_engine.TransformerOpenVinoEncoder) and fp32.name == f"openvino:{tiny_dir}"
    np.testing.assert_allclose(fp32.encode(TEXTS), reference, atol=1e-5)
    hint = load_encoder(f"ov-bf16:{tiny_dir}", cache=cache, threads=1)
    assert hint.ov_dir == fp32.ov_dir  # one conversion, another precision hint
    assert _cos(hint.encode(TEXTS), reference).min() >= (0.99 if hint.matmul_dtype == "bf16" else 0.99999)
    # each engine's name enters the fingerprint: no cache mixes their vectors with torch's
    assert len({fp32.fingerprint(), hint.fingerprint(), TransformerEncoder(tiny_dir).fingerprint()}) == 3


def test_a_model_directory_without_openvino_is_refused_in_one_line(tiny_dir, monkeypatch, hide_packages):
    from xlingua.encoders.engines import MissingPackage
    from xlingua.encoders.loading import load_encoder

    hide_packages("openvino")
    monkeypatch.setattr(TransformerEncoder, "__init__", lambda *a, **k: pytest.fail("loaded the model first"))
    with pytest.raises(MissingPackage) as err:
        load_encoder(f"ov-bf16:{tiny_dir}")
    assert str(err.value) == f"ov-bf16:{tiny_dir} needs openvino: pip install 'xlingua[openvino]'"


def test_a_copy_sent_where_openvino_is_missing_is_refused_in_one_line(tiny_dir, cache, hide_packages):
    from xlingua.encoders.engines import MissingPackage

    cloudpickle = pytest.importorskip("cloudpickle")
    sent = cloudpickle.dumps(ov_engine.TransformerOpenVinoEncoder(tiny_dir, engine="ov-bf16", cache=cache, threads=1))
    hide_packages("openvino")
    with pytest.raises(MissingPackage) as err:  # e.g. a Ray worker without the extra
        cloudpickle.loads(sent)
    assert str(err.value) == f"ov-bf16:{tiny_dir} needs openvino: pip install 'xlingua[openvino]'"
