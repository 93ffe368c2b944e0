"""Tiny LASER training runs on a toy parallel corpus: loss goes down, resume is exact, and
the encoder loads through load_encoder("laser:DIR")."""
import gzip

import numpy as np
import pytest
import torch

from xlingua import load_encoder
from xlingua.encoders.laser import LaserEncoder
from xlingua.laser.trainer import LaserTrainConfig, train_laser

WORDS = {"en": ["one", "two", "three", "red", "blue", "cat", "dog", "house"],
         "de": ["eins", "zwei", "drei", "rot", "blau", "Katze", "Hund", "Haus"],
         "fr": ["un", "deux", "trois", "rouge", "bleu", "chat", "chien", "maison"]}


@pytest.fixture
def toy_corpus(tmp_path):
    rng = np.random.default_rng(0)
    root = tmp_path / "l10n"
    root.mkdir()
    for lang in ("de", "fr"):
        lines = []
        for _ in range(120):
            idx = rng.integers(0, 8, rng.integers(1, 5))
            lines.append(" ".join(WORDS[lang][i] for i in idx) + "\t" + " ".join(WORDS["en"][i] for i in idx))
        with gzip.open(root / f"{lang}-en.train.tsv.gz", "wt", encoding="utf-8") as f:
            f.write("\n".join(lines) + "\n")
    return root


def _cfg(**kw):
    base = dict(langs=["de", "fr"], second_target="fr", multi30k=False, vocab_size=40, embed_dim=16, hidden=16,
                dec_hidden=24, lang_dim=4, max_tokens=200, lr=5e-3, max_steps=60, checkpoint_every=1000, log_every=10, snapshot_every=30,
                dropout=0.0)
    base.update(kw)
    return LaserTrainConfig(**base)


def test_training_reduces_loss_and_round_trips(tmp_path, toy_corpus):
    out = tmp_path / "run"
    log = train_laser(_cfg(), out, l10n_root=toy_corpus, show_progress=False)
    hist = log["history"]
    assert log["steps"] == 60 and [d["src"] + "-" + d["tgt"] for d in log["data"]] == ["de-en", "en-fr", "fr-en"]
    assert hist[-1]["loss"] < 0.7 * hist[0]["loss"]
    enc = load_encoder(f"laser:{out}")
    assert isinstance(enc, LaserEncoder) and enc.dim == 32
    texts = ["zwei Katze", "two cat", "", "un chien rouge maison"]
    vecs = enc.encode(texts, batch_size=3)
    assert vecs.shape == (4, 32) and np.isfinite(vecs).all()
    # Same vectors one at a time (padding does not leak into the max-pool).
    np.testing.assert_allclose(np.vstack([enc.encode([t]) for t in texts]), vecs, atol=1e-5)
    assert enc.fingerprint() == LaserEncoder(str(out)).fingerprint()
    # A snapshot taken at step 30 loads too and differs from the final weights.
    snap = load_encoder(f"laser:{out}/encoder_step30.pt")
    assert snap.name.endswith("encoder_step30.pt") and snap.fingerprint() != enc.fingerprint()
    assert not np.allclose(snap.encode(texts), vecs)


def test_resume_equals_uninterrupted(tmp_path, toy_corpus):
    full = train_laser(_cfg(max_steps=8, dropout=0.2), tmp_path / "a", l10n_root=toy_corpus, show_progress=False)
    train_laser(_cfg(max_steps=4, dropout=0.2), tmp_path / "b", l10n_root=toy_corpus, show_progress=False)
    resumed = train_laser(_cfg(max_steps=8, dropout=0.2), tmp_path / "b", l10n_root=toy_corpus, show_progress=False)
    assert full["steps"] == resumed["steps"] == 8
    a = torch.load(tmp_path / "a" / "checkpoint.pt", weights_only=False)["model"]
    b = torch.load(tmp_path / "b" / "checkpoint.pt", weights_only=False)["model"]
    for k in a:
        torch.testing.assert_close(a[k], b[k], rtol=0, atol=1e-6)


def test_resume_with_other_model_config_is_refused(tmp_path, toy_corpus):
    train_laser(_cfg(max_steps=2), tmp_path / "c", l10n_root=toy_corpus, show_progress=False)
    with pytest.raises(ValueError, match=r"the settings differ from the run being resumed \(hidden: 16 -> 8\)"):
        train_laser(_cfg(max_steps=4, hidden=8), tmp_path / "c", l10n_root=toy_corpus, show_progress=False)


def test_missing_model_dir_is_a_clear_error(tmp_path):
    with pytest.raises(FileNotFoundError, match="not a LASER model directory"):
        load_encoder(f"laser:{tmp_path}")
