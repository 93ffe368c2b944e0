"""MeaningEncoder round trip through load_encoder("BASE+meaning:PATH")."""
import hashlib

import numpy as np
import pytest
import torch

from xlingua.encoders import loading
from xlingua.encoders.base import Encoder
from xlingua.encoders.meaning import MeaningEncoder
from xlingua.encoders.meaning_mlp import MeaningConfig, MeaningModel


class HashEncoder(Encoder):
    """Deterministic toy base encoder: a fixed random vector per text."""
    name, dim, normalized = "hash", 8, False

    def _encode_batch(self, texts, lang):
        return np.stack([np.random.default_rng(int(hashlib.md5(t.encode()).hexdigest()[:8], 16)).normal(size=8)
                         for t in texts]).astype(np.float32)


def _save_model(path, dim=8):
    torch.manual_seed(0)
    model = MeaningModel(MeaningConfig(dim=dim, langs=["de", "en"], hidden=16, base="hash", base_fingerprint="hash"))
    model.save(path / "model.pt")
    return model


def test_round_trip_through_load_encoder(tmp_path, monkeypatch):
    model = _save_model(tmp_path)
    real = loading.load_encoder

    def fake(spec, **options):
        return HashEncoder() if spec == "hash" else real(spec, **options)

    monkeypatch.setattr(loading, "load_encoder", fake)
    enc = loading.load_encoder(f"hash+meaning:{tmp_path}")
    assert isinstance(enc, MeaningEncoder) and enc.name == "hash+meaning" and enc.dim == 8
    texts = ["ein Haus", "a house", "zwei", "ein Haus"]
    out = enc.encode(texts, batch_size=2)
    base = HashEncoder().encode(texts)
    with torch.no_grad():
        expected = torch.nn.functional.normalize(model.mlp_m(torch.from_numpy(base)), dim=-1).numpy()
    np.testing.assert_allclose(out, expected, atol=1e-6)
    np.testing.assert_allclose(out[0], out[3])
    np.testing.assert_allclose(np.linalg.norm(out, axis=1), 1.0, atol=1e-5)
    # The per-batch path gives the same vectors as encode().
    np.testing.assert_allclose(enc._encode_batch(texts[:2], None), out[:2], atol=1e-6)
    assert enc.fingerprint().startswith("hash+meaning-")


def test_dimension_mismatch_and_missing_file_are_clear_errors(tmp_path):
    _save_model(tmp_path, dim=4)
    with pytest.raises(ValueError, match="expects 4-d vectors"):
        MeaningEncoder(HashEncoder(), str(tmp_path))
    with pytest.raises(FileNotFoundError, match="no meaning model"):
        MeaningEncoder(HashEncoder(), str(tmp_path / "nope"))
