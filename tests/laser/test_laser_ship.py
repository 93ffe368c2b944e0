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


def test_no_bilstm_loads_by_name_and_a_shipped_directory_loads_by_path(run_dir, tmp_path, monkeypatch):
    from xlingua.encoders.registry import readable_specs

    assert not [s.pattern for s in readable_specs() if s.pattern.startswith("laser") and s.pattern != "laser:PATH"]
    assert not [l for l in CliRunner().invoke(app, ["models"]).output.splitlines() if l.startswith("laser-small")]
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    (tmp_path / "in.txt").write_text("hello\n")
    res = CliRunner().invoke(app, ["embed", "-m", "laser-small", str(tmp_path / "in.txt"), "-o", str(tmp_path / "o.npy")])
    assert res.exit_code == 2 and res.output.count("\n") == 1, res.output
    assert res.output.startswith("error: cannot load model 'laser-small': not a local directory or a spec "
                                 "`xlingua models` lists")
    ship(run_dir, tmp_path / "shipped")
    enc = load_encoder(f"laser:{tmp_path / 'shipped'}")
    assert enc.name == "laser:shipped" and enc.manifest["fingerprint"] == LaserEncoder(str(run_dir)).fingerprint()
    np.testing.assert_array_equal(enc.encode(["eins zwei"]), LaserEncoder(str(run_dir)).encode(["eins zwei"]))


def test_ship_command(run_dir, tmp_path):
    res = CliRunner().invoke(app, ["laser", "ship", str(run_dir), "--out", str(tmp_path / "s")])
    assert res.exit_code == 0, res.output
    assert "10-d" in res.output and (tmp_path / "s" / "manifest.json").exists()
    assert res.output.splitlines()[-1] == f"load it with --model laser:{tmp_path / 's'}"
    assert load_encoder(f"laser:{tmp_path / 's'}").fingerprint() == LaserEncoder(str(run_dir)).fingerprint()
    res = CliRunner().invoke(app, ["laser", "ship", str(run_dir), "--out", str(tmp_path / "s")])
    assert res.exit_code == 2 and "exists" in res.output


@pytest.fixture(scope="module")
def frozen_run(tmp_path_factory):
    """A student on static-small's pieces whose embedding is still static-small's rows, as
    `laser train --init static-small --freeze-embedding` leaves it (BiLSTM tiny, untrained)."""
    from xlingua.encoders.static import StaticPieces
    from xlingua.laser.prepare import start_embedding, static_init_dir

    out = tmp_path_factory.mktemp("frozen")
    source = static_init_dir("static-small")
    pieces = StaticPieces(source)
    pieces.save(out, source)
    torch.manual_seed(0)
    cfg = LaserConfig(vocab_size=pieces.get_piece_size(), embed_dim=256, hidden=4)
    net = BiLSTMEncoder(cfg)
    start_embedding(net.embed, source)
    torch.save({"config": cfg.to_dict(), "state": net.state_dict()}, out / "encoder.pt")
    (out / "train_log.json").write_text(json.dumps({"train_config": {"init": "static-small", "freeze_embedding": True}}))
    return out


def test_a_frozen_static_embedding_ships_as_a_reference(frozen_run, tmp_path):
    from xlingua.encoders.laser import STATIC_EMBEDDING

    manifest = ship(frozen_run, tmp_path / "small")
    size = (tmp_path / "small" / "encoder.pt").stat().st_size
    assert size < 100_000 < (frozen_run / "encoder.pt").stat().st_size  # the 205k x 256 rows stay out
    assert manifest["source"]["embedding"].startswith("static-small static-")
    texts = ["Die Katze schläft.", "The cat sleeps.", ""]
    assert np.array_equal(LaserEncoder(str(tmp_path / "small")).encode(texts), LaserEncoder(str(frozen_run)).encode(texts))
    blob = torch.load(tmp_path / "small" / "encoder.pt", weights_only=True)
    assert "embed.weight" not in blob["state"] and blob[STATIC_EMBEDDING]["special"].shape == (4, 256)


def test_a_moved_or_unfrozen_embedding_ships_whole(frozen_run, tmp_path):
    moved = tmp_path / "moved"
    shutil.copytree(frozen_run, moved)
    blob = torch.load(moved / "encoder.pt", weights_only=True)
    blob["state"]["embed.weight"][10] += 1.0  # one static row no longer the shipped encoder's
    torch.save(blob, moved / "encoder.pt")
    ship(moved, tmp_path / "a")
    unfrozen = tmp_path / "unfrozen"
    shutil.copytree(frozen_run, unfrozen)
    (unfrozen / "train_log.json").write_text(json.dumps({"train_config": {"init": "static-small"}}))
    ship(unfrozen, tmp_path / "b")
    for out in ("a", "b"):
        assert "embed.weight" in torch.load(tmp_path / out / "encoder.pt", weights_only=True)["state"]


def test_a_reference_to_another_static_encoder_is_refused_in_one_line(frozen_run, tmp_path):
    from xlingua.encoders.laser import STATIC_EMBEDDING

    ship(frozen_run, tmp_path / "small")
    plain = tmp_path / "plain"  # no manifest: the reference itself is what is checked
    shutil.copytree(tmp_path / "small", plain)
    (plain / "manifest.json").unlink()
    blob = torch.load(plain / "encoder.pt", weights_only=True)
    blob[STATIC_EMBEDDING]["fingerprint"] = "static-0000000000000000"
    torch.save(blob, plain / "encoder.pt")
    with pytest.raises(ValueError, match="its embedding is static-small static-0000000000000000, but this "
                                         "installation's static-small is static-[0-9a-f]{16}"):
        LaserEncoder(str(plain))


def test_a_mean_skip_student_ships_by_reference_with_its_skip_and_gate(frozen_run, tmp_path):
    skip_run = tmp_path / "skip"
    shutil.copytree(frozen_run, skip_run)
    blob = torch.load(skip_run / "encoder.pt", weights_only=True)
    cfg = LaserConfig(**{**blob["config"], "mean_skip": True})
    net = BiLSTMEncoder(cfg)
    state = {**net.state_dict(), **blob["state"]}
    state["gate"] = torch.tensor(0.5)
    torch.save({"config": cfg.to_dict(), "state": state}, skip_run / "encoder.pt")
    ship(skip_run, tmp_path / "small")
    shipped = torch.load(tmp_path / "small" / "encoder.pt", weights_only=True)
    assert "embed.weight" not in shipped["state"] and float(shipped["state"]["gate"]) == 0.5
    texts = ["Die Katze schläft.", "The cat sleeps."]
    assert np.array_equal(LaserEncoder(str(tmp_path / "small")).encode(texts), LaserEncoder(str(skip_run)).encode(texts))
