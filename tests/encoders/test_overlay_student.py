"""A student of some of its base's layers (`layers:` of `xlingua train`) ships as an overlay of
those layers on the base: loading builds a model of that many layers that gives the trained
student's vectors on every engine, and refuses another base than the one it was made on. The
base is a tiny random 4-layer BERT standing in for e5-small (through the `base_model_dir` seam)."""
from __future__ import annotations

import json
import shutil

import numpy as np
import pytest
import torch
from safetensors.torch import load_file
from typer.testing import CliRunner

from tests.encoders.test_overlay import STAMP, TEXTS, WORDS, _cosines
from tests.tiny_models import tiny_bert
from xlingua import load_encoder
from xlingua.cli import app
from xlingua.encoders import overlay
from xlingua.encoders.hf import TransformerEncoder
from xlingua.encoders.manifest import CorruptModelError, check_probes
from xlingua.encoders.overlay import OVERLAY_FILE, overlay_dir, ship_overlay
from xlingua.encoders.saving import save_encoder


@pytest.fixture(scope="module")
def base(tmp_path_factory):
    model, tok = tiny_bert(WORDS, max_length=16, layers=4)
    return save_encoder(model, tok, tmp_path_factory.mktemp("base") / "e5", max_seq_length=16,
                        prefix="query: ", prompts={"query": "query: ", "passage": "passage: "},
                        meta={"source": STAMP})


@pytest.fixture(scope="module")
def student(base, tmp_path_factory):
    """What `xlingua train` leaves for a student of the base's layers 0 and 2."""
    from xlingua.training.config import config_from_dict
    from xlingua.training.trainer import Trainer

    root = tmp_path_factory.mktemp("student")
    pairs = root / "pairs.tsv"
    pairs.write_text("".join(f"{a}\t{b}\n" for a, b in [("the cat", "big dog"), ("hello world", "a mat"),
                                                          ("red cat sat", "far away"), ("small dog ran", "on a mat")]))
    cfg = config_from_dict({
        "model": str(base), "output_dir": str(root / "run"), "layers": [0, 2], "freeze": ["word_embeddings"],
        "max_steps": 3, "batch_size": 4, "max_seq_length": 16, "lr": 1e-3, "warmup_steps": 1, "seed": 2,
        "tasks": [{"name": "tr", "objective": "translation_ranking", "data": {"type": "tsv", "path": str(pairs)}}]})
    return Trainer(cfg).train(show_progress=False)


@pytest.fixture
def packages(base, models_dir, monkeypatch):
    monkeypatch.setattr(overlay, "base_model_dir", lambda: base)
    return models_dir


def test_a_student_ships_as_its_layers_and_loads_with_its_vectors(student, base, packages):
    res = CliRunner().invoke(app, ["ship", str(student), "-o", str(packages / "xlingua-small")])
    assert res.exit_code == 0, res.output
    assert "a student of e5-small's layers [0, 2]" in res.output
    m = json.loads((packages / "xlingua-small" / "manifest.json").read_text())
    assert m["layers"] == [0, 2] and m["kept_from_base"] == ["embeddings.word_embeddings.weight"]
    stored = load_file(str(packages / "xlingua-small" / OVERLAY_FILE))
    assert sorted(stored) == m["tensors"]
    assert {n.split(".")[2] for n in stored if n.startswith("encoder.layer.")} == {"0", "1"}

    enc = load_encoder("xlingua-small:torch")
    assert len(enc.model.encoder.layer) == 2 and enc.model.config.num_hidden_layers == 2
    assert enc.fingerprint() == m["fingerprint"] and check_probes(enc, m) < 1e-5
    want = TransformerEncoder(student).encode(TEXTS)
    got = enc.encode(TEXTS)
    assert _cosines(got, want).min() > 0.9999
    np.testing.assert_allclose(got, want, atol=2e-3)
    # layer 1 is the student's (it started as the base's layer 2), in fp16
    built, trained = load_file(str(enc.path / "model.safetensors")), load_file(str(student / "model.safetensors"))
    assert sorted(built) == sorted(trained)
    name = "encoder.layer.1.attention.self.query.weight"
    assert torch.equal(built[name], trained[name].half().float())

    assert _cosines(load_encoder("xlingua-small:bf16").encode(TEXTS), got).min() > 0.99
    pytest.importorskip("onnxruntime")
    np.testing.assert_allclose(load_encoder("xlingua-small:onnx").encode(TEXTS), got, atol=1e-5)
    pytest.importorskip("ctranslate2")
    ct2 = load_encoder("xlingua-small:ct2")  # converted from the built config's layer count
    assert json.loads((ct2.path / "config.json").read_text())["num_hidden_layers"] == 2
    np.testing.assert_allclose(ct2.encode(TEXTS), got, atol=1e-5)


def test_a_student_of_a_shipped_model_is_refused_on_another_one(student, base, packages, tmp_path):
    """As xlingua-mini on xlingua-small-v2: the base is itself an overlay, built first."""
    from xlingua.encoders.e5 import model_dir
    from xlingua.training.model import SentenceModel

    shipped = TransformerEncoder(base)
    with torch.no_grad():
        for p in shipped.model.encoder.parameters():
            p.add_(0.05)
    ship_overlay(shipped.save(tmp_path / "shipped", trained_by="xlingua train"), packages / "xlingua-small")
    cut = SentenceModel.load("xlingua-small:torch")
    cut.keep_layers([1, 3])
    with torch.no_grad():
        cut.model.encoder.layer[0].output.dense.bias.add_(0.5)  # the one tensor training moved
    tuned = cut.save(tmp_path / "tuned")
    m = ship_overlay(tuned, packages / "xlingua-qe", on="xlingua-small")
    assert m["layers"] == [1, 3] and m["tensors"] == ["encoder.layer.0.output.dense.bias"]
    assert m["base"] == json.loads((model_dir("xlingua-small") / "xlingua.json").read_text())["source"]
    built = overlay_dir(packages / "xlingua-qe", cache=tmp_path / "cache")
    assert json.loads((built / "config.json").read_text())["num_hidden_layers"] == 2
    np.testing.assert_allclose(TransformerEncoder(built).encode(TEXTS), TransformerEncoder(tuned).encode(TEXTS),
                               atol=2e-3)
    shutil.rmtree(packages / "xlingua-small")  # another xlingua-small under it
    ship_overlay(student, packages / "xlingua-small")
    with pytest.raises(CorruptModelError, match=r"xlingua-qe/overlay.safetensors overlays another xlingua-small "
                                                r"\(overlay sha256 .*install the xlingua-small it was shipped on"):
        overlay_dir(packages / "xlingua-qe", cache=tmp_path / "cache")


def test_ship_refuses_a_student_record_that_does_not_fit(student, packages, tmp_path):
    bad = shutil.copytree(student, tmp_path / "bad")
    meta = json.loads((bad / "xlingua.json").read_text())
    for layers, said in (([0, 5], r"layers_from \[0, 5\] reaches past the base's 4 layers; ship it on the model "
                                  r"it was trained from \(--on\)"),
                         ([0, 1, 2], "layers_from lists 3 layers, the model has 2"),
                         ([2, 0], r"layers_from must list increasing layer indices, got \[2, 0\]")):
        (bad / "xlingua.json").write_text(json.dumps({**meta, "layers_from": layers}))
        with pytest.raises(ValueError, match=rf"^{bad / 'xlingua.json'}: {said}"):
            ship_overlay(bad, tmp_path / "out")
    del meta["layers_from"]  # without its record a student is not e5-small's shape
    (bad / "xlingua.json").write_text(json.dumps(meta))
    with pytest.raises(ValueError, match="config.json: differs from e5-small's in num_hidden_layers"):
        ship_overlay(bad, tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_a_narrower_student_is_refused_on_one_line(base, packages, tmp_path):
    from xlingua.training.config import config_from_dict
    from xlingua.training.trainer import Trainer

    pairs = tmp_path / "pairs.tsv"
    pairs.write_text("the cat\tbig dog\nhello world\ta mat\n")
    cfg = config_from_dict({
        "model": str(base), "output_dir": str(tmp_path / "run"), "layers": [0, 2], "intermediate_size": 16,
        "freeze": ["word_embeddings"], "max_steps": 1, "batch_size": 2, "max_seq_length": 16, "warmup_steps": 1,
        "tasks": [{"name": "tr", "objective": "translation_ranking", "data": {"type": "tsv", "path": str(pairs)}}]})
    narrow = Trainer(cfg).train(show_progress=False)
    res = CliRunner().invoke(app, ["ship", str(narrow), "-o", str(packages / "xlingua-small")])
    assert res.exit_code == 2
    assert "config.json: differs from e5-small's in intermediate_size" in res.output
    assert not (packages / "xlingua-small").exists()
