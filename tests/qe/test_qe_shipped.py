"""The QE models xlingua ships (qe-cross, the default, and qe-small): their files load
against their manifests, they read the default model's vectors on any of its paths (qe-cross's
heads embed with xlingua-qe themselves), and they reproduce their recorded probe scores."""
from __future__ import annotations

import numpy as np

from xlingua.encoders.manifest import read_manifest, same_vectors
from xlingua.encoders.model_packages import model_dir
from xlingua.qe.load import load_qe


def test_the_shipped_qe_small_reproduces_its_recorded_scores():
    from xlingua.encoders.loading import load_encoder
    from xlingua.qe.ship import probe_scores

    manifest = read_manifest(model_dir("qe-small"))
    enc = load_encoder("bundled:torch")  # the path the scores were recorded on
    model = load_qe("qe-small", enc)
    assert model.base == "bundled" and set(model.info["pairs"]) <= set(model.heads)
    np.testing.assert_allclose(probe_scores(model, enc), manifest["probe_pairs"]["scores"], atol=1e-3)


def test_paths_of_the_same_weights_count_as_the_same_vectors():
    torch = "xlingua-small:torch|mean|None|True|512|1|de60e15feb2ae0c6"
    assert same_vectors(torch, "xlingua-small:bf16|mean|None|True|512|1|de60e15feb2ae0c6")
    assert not same_vectors(torch, "xlingua-small:torch|mean|None|True|512|1|0123456789abcdef")
    assert not same_vectors(torch, "e5-small:torch|mean|None|True|512|1|de60e15feb2ae0c6")


def test_the_default_qe_is_the_shipped_cross_encoder_and_reproduces_its_recorded_scores():
    from xlingua.encoders.loading import load_encoder
    from xlingua.qe.blend import CROSS, CrossQE, load_cross
    from xlingua.qe.ship import probe_scores

    root = model_dir("qe-cross")
    manifest = read_manifest(root)
    enc = load_encoder("bundled:torch")  # the path the scores were recorded on, with the cross-encoder in fp32
    model = load_qe(None, enc)  # the default, its files checked
    assert isinstance(model, CrossQE) and model.base == "bundled"
    assert model.partner.base == "xlingua-qe" and model.own_encoder  # its heads read the QE-tuned encoder
    assert model.unseen.info["pairs"] == model.pairs  # pairs outside training: qe-small's all-pairs head
    assert model.route("en-de") == CROSS and model.route("fr-en") == model.unseen.route("fr-en") != CROSS
    np.testing.assert_allclose(probe_scores(load_cross(root, "fp32"), enc), manifest["probe_pairs"]["scores"],
                               atol=1e-3)
