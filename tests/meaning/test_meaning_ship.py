"""Shipping a meaning model into the models directory and loading it as BASE+meaning; the training
command's ablation switches and dev selection through the CLI."""
import json

import numpy as np
import pytest
from typer.testing import CliRunner

import xlingua.meaning.ship as meaning_ship
from tests.meaning.test_meaning_data import HashEncoder
from tests.meaning.test_meaning_dev import toy  # noqa: F401  (fixture)
from tests.meaning.test_meaning_trainer import ScriptedDev, _toy
from xlingua.cli import app
from xlingua.encoders import loading
from xlingua.encoders.meaning import MeaningEncoder
from xlingua.encoders.manifest import PROBES, CorruptModelError
from xlingua.meaning.trainer import MeaningTrainConfig, train_meaning


@pytest.fixture
def hash_base(monkeypatch):
    """`load_encoder("hash")` is the toy HashEncoder; everything else loads as usual."""
    real = loading.load_encoder
    monkeypatch.setattr(loading, "load_encoder", lambda spec, **o: HashEncoder() if spec == "hash" else real(spec, **o))


@pytest.fixture
def models(models_dir):
    return models_dir


def _run(tmp_path):
    src, tgt, langs = _toy(n_per_lang=20, dim=8)
    cfg = MeaningTrainConfig(lr=3e-3, batch_size=16, max_epochs=3, patience=3, snapshot_every=1, select_on="qe-dev")
    train_meaning(src, tgt, langs, tmp_path / "run", config=cfg, dev={"qe-dev": ScriptedDev([0.1, 0.4, 0.2])},
                  base_name="hash", base_fingerprint="hash-test", show_progress=False)
    return tmp_path / "run"


def test_ship_then_load_by_name_gives_the_run_vectors(tmp_path, hash_base, models):
    with pytest.raises(FileNotFoundError, match=r"^hash\+meaning: meaning-hash is not installed: no xlingua model "
                       r"package provides it; build it with `xlingua meaning ship RUN_DIR --base hash`$"):
        loading.load_encoder("hash+meaning")
    run_dir = _run(tmp_path)
    res = CliRunner().invoke(app, ["meaning", "ship", str(run_dir), "--base", "hash"])
    assert res.exit_code == 0, res.output
    assert "epoch 2 chosen on qe-dev; load it as --model hash+meaning" in res.output
    assert "no model package ships meaning-hash: add it to one to load it by name" in res.output
    shipped = models / "meaning-hash"
    assert sorted(p.name for p in shipped.iterdir()) == ["manifest.json", "model.pt"]

    enc = loading.load_encoder("hash+meaning")
    texts = ["ein Haus", "a house", "zwei"]
    expected = MeaningEncoder(HashEncoder(), str(run_dir)).encode(texts)
    np.testing.assert_allclose(enc.encode(texts), expected, atol=1e-6)
    manifest = json.loads((shipped / "manifest.json").read_text())
    assert manifest["base"] == "hash" and manifest["base_fingerprint"] == "hash-test"
    src = manifest["source"]
    assert src["epoch"] == 2 and src["select_on"] == "qe-dev" and src["dev_at_epoch"]["qe-dev"] == 0.4
    np.testing.assert_allclose(manifest["probes"]["vectors"], enc.encode(list(PROBES)), atol=1e-6)

    # Once shipped it is not overwritten; an altered copy fails its checksum before it loads.
    again = CliRunner().invoke(app, ["meaning", "ship", str(run_dir), "--base", "hash"])
    assert again.exit_code == 2 and "meaning-hash exists; remove it or choose another --out" in again.output
    data = bytearray((shipped / "model.pt").read_bytes())
    data[-10] ^= 0xFF
    (shipped / "model.pt").write_bytes(bytes(data))
    with pytest.raises(CorruptModelError, match=r"model\.pt is corrupted or altered"):
        loading.load_encoder("hash+meaning")


def test_a_snapshot_ships_with_its_own_epoch_and_paths_need_a_path(tmp_path, hash_base, models):
    run_dir = _run(tmp_path)
    manifest = meaning_ship.ship(run_dir / "model_epoch3.pt", "hash", tmp_path / "out")
    assert manifest["source"]["epoch"] == 3 and manifest["source"]["dev_at_epoch"]["qe-dev"] == 0.2
    assert not list(tmp_path.glob(".*partial*")) and not list(models.glob("*"))
    with pytest.raises(ValueError, match=r"only a named base model has a meaning model shipped"):
        loading.load_encoder("some/dir+meaning")
    with pytest.raises(FileNotFoundError, match="no meaning model at"):
        meaning_ship.ship(tmp_path / "nope", "hash", tmp_path / "out2")


@pytest.fixture
def toy_shared(toy, tmp_path, monkeypatch):  # noqa: F811
    """The toy general corpus and benchmarks as XLINGUA_SHARED."""
    general, bench = toy
    shared = tmp_path / "shared"
    (shared / "corpora").mkdir(parents=True)
    (shared / "corpora" / "general").symlink_to(general)
    (shared / "benchmarks").symlink_to(bench)
    monkeypatch.setenv("XLINGUA_SHARED", str(shared))
    monkeypatch.delenv("XLINGUA_DATA", raising=False)
    return shared


@pytest.mark.parametrize("switch, kept, dropped", [("--no-meaning-loss", "val_language", "val_meaning"),
                                                   ("--no-language-loss", "val_meaning", "val_language")])
def test_train_command_ablation_switches_and_dev_selection(toy_shared, tmp_path, hash_base, switch, kept, dropped):
    out = tmp_path / "out"
    res = CliRunner().invoke(app, ["meaning", "train", "-o", str(out), "--base", "hash", "--langs", "", "--pairs", "0",
                                   "--general", "mlqe-pe,ntrex", "--general-langs", "", "--select-on", "retrieval-dev",
                                   "--dev", "retrieval-dev", "--max-epochs", "3", "--batch-size", "8", switch])
    assert res.exit_code == 0, res.output
    log = json.loads((out / "train_log.json").read_text())
    assert log["select_on"] == "retrieval-dev" and log["data"]["general_pairs"] == 29 + 60
    assert {kept, "val_rec", "retrieval-dev de"} <= set(log["history"][0]) and dropped not in log["history"][0]
    curve = [h["retrieval-dev"] for h in log["history"]]
    assert log["best_epoch"] == 1 + int(np.argmax(curve))
    assert f"best epoch {log['best_epoch']} of 3 by retrieval-dev" in res.output
