"""The shipping format: a shipped encoder loads, gives the recorded probe vectors, and a
corrupted copy is refused with a clear error."""
import json
import shutil

import numpy as np
import pytest
import torch
from typer.testing import CliRunner

from xlingua import load_encoder
from xlingua.cli import app
from xlingua.encoders import manifest as manifest_mod
from xlingua.encoders.laser import LaserEncoder
from xlingua.encoders.laser_model import BiLSTMEncoder, LaserConfig
from xlingua.encoders.laser_vocab import train_vocab
from xlingua.encoders.manifest import CorruptModelError, check_probes
from xlingua.laser.ship import ship

TEXTS = {"en": ["the cat sleeps on the sofa", "parliament adopted the budget", "one two three"] * 20,
         "de": ["die Katze schläft auf dem Sofa", "das Parlament nahm den Haushalt an", "eins zwei drei"] * 20}


@pytest.fixture
def run_dir(tmp_path):
    """A tiny (untrained) student with a projection, as `laser train` leaves it."""
    out = tmp_path / "run"
    out.mkdir()
    model = train_vocab(TEXTS, out / "spm", vocab_size=40)
    model.rename(out / "spm.model")
    torch.manual_seed(0)
    cfg = LaserConfig(vocab_size=40, embed_dim=8, hidden=6, proj_dim=10)
    net = BiLSTMEncoder(cfg)
    torch.save({"config": cfg.to_dict(), "state": net.state_dict()}, out / "encoder.pt")
    return out


def test_projection_sets_the_vector_size(run_dir):
    enc = LaserEncoder(str(run_dir))
    assert enc.dim == 10 and enc.encode(["eins zwei"]).shape == (1, 10)


def test_shipped_copy_loads_and_reproduces_recorded_vectors(run_dir, tmp_path):
    manifest = ship(run_dir, tmp_path / "shipped")
    original = LaserEncoder(str(run_dir))
    shipped = LaserEncoder(str(tmp_path / "shipped"))
    assert manifest["fingerprint"] == shipped.fingerprint() == original.fingerprint()
    assert shipped.manifest["files"] == manifest["files"]
    assert check_probes(shipped, manifest) < 1e-5
    texts = ["eins zwei drei", "the budget"]
    np.testing.assert_allclose(shipped.encode(texts), original.encode(texts), atol=0)
    # Recorded vectors are checked, not assumed: a manifest with other probe vectors fails.
    bad = json.loads(json.dumps(manifest))
    bad["probes"]["vectors"][0][0] += 0.01
    with pytest.raises(CorruptModelError, match="probe vectors differ"):
        check_probes(shipped, bad)


def test_corrupted_copy_is_refused_with_a_clear_error(run_dir, tmp_path):
    ship(run_dir, tmp_path / "shipped")
    broken = tmp_path / "broken"
    shutil.copytree(tmp_path / "shipped", broken)
    data = bytearray((broken / "encoder.pt").read_bytes())
    data[len(data) // 2] ^= 0xFF
    (broken / "encoder.pt").write_bytes(bytes(data))
    with pytest.raises(CorruptModelError, match=r"broken/encoder.pt is corrupted or altered: sha256"):
        load_encoder(f"laser:{broken}")
    (broken / "encoder.pt").unlink()
    with pytest.raises(FileNotFoundError, match=r"broken is not a LASER model directory: missing encoder.pt"):
        LaserEncoder(str(broken))
    # A truncated tokenizer is caught too.
    trunc = tmp_path / "trunc"
    shutil.copytree(tmp_path / "shipped", trunc)
    (trunc / "spm.model").write_bytes((trunc / "spm.model").read_bytes()[:100])
    with pytest.raises(CorruptModelError, match=r"trunc/spm.model is truncated or altered: 100 bytes"):
        LaserEncoder(str(trunc))


def test_ship_never_overwrites_and_leaves_nothing_half_written(run_dir, tmp_path):
    (tmp_path / "taken").mkdir()
    with pytest.raises(FileExistsError):
        ship(run_dir, tmp_path / "taken")
    with pytest.raises(FileNotFoundError):
        ship(tmp_path / "nothing", tmp_path / "new")
    assert not (tmp_path / "new").exists() and not list(tmp_path.glob(".new.*"))


def test_packaged_spec_loads_by_name_or_says_it_is_absent(run_dir, tmp_path, monkeypatch):
    monkeypatch.setattr(manifest_mod, "models_root", lambda: tmp_path / "models")
    with pytest.raises(FileNotFoundError, match="laser-small is not in this installation"):
        load_encoder("laser-small")
    listed = lambda: [l for l in CliRunner().invoke(app, ["models"]).output.splitlines()  # noqa: E731
                      if l.startswith("laser-small ")]
    assert len(listed()) == 1 and listed()[0].endswith("[not in this installation]")
    ship(run_dir, tmp_path / "models" / "laser-small")
    enc = load_encoder("laser-small")
    assert enc.name == "laser-small" and enc.fingerprint() == LaserEncoder(str(run_dir)).fingerprint()
    assert "installation" not in listed()[0]


def test_ship_command(run_dir, tmp_path):
    res = CliRunner().invoke(app, ["laser", "ship", str(run_dir), "--out", str(tmp_path / "s")])
    assert res.exit_code == 0, res.output
    assert "10-d" in res.output and (tmp_path / "s" / "manifest.json").exists()
    res = CliRunner().invoke(app, ["laser", "ship", str(run_dir), "--out", str(tmp_path / "s")])
    assert res.exit_code == 2 and "exists" in res.output
