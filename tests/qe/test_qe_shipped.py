"""The QE model shipped in the package: its files load against their manifest, it reads the
default model's vectors on any of its paths, and it reproduces its recorded probe scores."""
from __future__ import annotations

import numpy as np

from xlingua.encoders.manifest import models_root, read_manifest
from xlingua.score import load_qe, same_vectors


def test_the_shipped_qe_model_reproduces_its_recorded_scores():
    from xlingua.encoders.loading import load_encoder
    from xlingua.qe.ship import probe_scores

    manifest = read_manifest(models_root() / "qe-small")
    enc = load_encoder("bundled:torch")  # the path the scores were recorded on
    model = load_qe(None, enc)
    assert model.base == "bundled" and set(model.info["pairs"]) <= set(model.heads)
    np.testing.assert_allclose(probe_scores(model, enc), manifest["probe_pairs"]["scores"], atol=1e-3)


def test_paths_of_the_same_weights_count_as_the_same_vectors():
    torch = "xlingua-small:torch|mean|None|True|512|1|de60e15feb2ae0c6"
    assert same_vectors(torch, "xlingua-small:bf16|mean|None|True|512|1|de60e15feb2ae0c6")
    assert not same_vectors(torch, "xlingua-small:torch|mean|None|True|512|1|0123456789abcdef")
    assert not same_vectors(torch, "e5-small:torch|mean|None|True|512|1|de60e15feb2ae0c6")
