"""The static encoder: mean of piece vectors on a hand-computed case, the shipping format
(recorded vectors reproduced, a corrupted copy refused with one line)."""
import json

import numpy as np
import pytest
from safetensors.numpy import save_file

from xlingua.encoders.manifest import CorruptModelError, check_probes
from xlingua.encoders.static import StaticEncoder, pool, row_map
from xlingua.static.ship import ship
from tests.training.conftest import make_tiny_model_dir


def test_pool_is_the_unit_mean_of_known_pieces():
    vectors = np.array([[1.0, 0.0], [0.0, 2.0], [3.0, 4.0]], dtype=np.float32)
    row = row_map(np.array([5, 7, 9]), 10)  # ids 5, 7, 9 have rows 0, 1, 2
    got = pool(vectors, row, [[5, 7], [9, 1], [], [1, 2], [7, 7, 5]])
    want = np.array([[1, 2], [3, 4], [0, 0], [0, 0], [1, 4]], dtype=np.float32)
    norms = np.linalg.norm(want, axis=1, keepdims=True)
    assert np.allclose(got, want / np.maximum(norms, 1e-12))


@pytest.fixture
def model_dir(tmp_path):
    """A static encoder on a tiny word-level tokenizer ("local"), random vectors."""
    from transformers import AutoTokenizer

    root = tmp_path / "static"
    teacher = make_tiny_model_dir(tmp_path / "teacher")
    AutoTokenizer.from_pretrained(str(teacher)).save_pretrained(str(root))
    rng = np.random.default_rng(0)
    ids = np.arange(40, 90, dtype=np.int32)
    save_file({"vectors": rng.standard_normal((len(ids), 6)).astype(np.float16), "token_ids": ids},
              str(root / "vectors.safetensors"))
    (root / "static.json").write_text(json.dumps({"tokenizer": "local"}))
    return root


def test_encode_matches_the_mean_of_the_stored_rows(model_dir):
    enc = StaticEncoder(model_dir)
    ids = enc.tok.content_ids(["the red cat"])[0]
    want = np.mean([enc.vectors[enc.row[i]] for i in ids if enc.row[i] >= 0], axis=0)
    assert np.allclose(enc.encode(["the red cat"])[0], want / np.linalg.norm(want), atol=1e-6)
    assert enc.encode([""]).tolist() == [[0.0] * 6]


def test_shipped_copy_reproduces_recorded_vectors_and_refuses_corruption(model_dir, tmp_path):
    manifest = ship(model_dir, tmp_path / "shipped")
    shipped = StaticEncoder(tmp_path / "shipped")
    assert manifest["fingerprint"] == shipped.fingerprint() == StaticEncoder(model_dir).fingerprint()
    assert check_probes(shipped, manifest) < 1e-6
    blob = bytearray((tmp_path / "shipped" / "vectors.safetensors").read_bytes())
    blob[-3] ^= 0xFF
    (tmp_path / "shipped" / "vectors.safetensors").write_bytes(bytes(blob))
    with pytest.raises(CorruptModelError, match="vectors.safetensors is corrupted or altered"):
        StaticEncoder(tmp_path / "shipped")


def test_not_a_static_directory_is_named(tmp_path):
    with pytest.raises(FileNotFoundError, match="not a static encoder directory: missing static.json, vectors.safetensors"):
        StaticEncoder(tmp_path)


def test_int8_copy_stores_a_byte_per_value_and_keeps_the_vectors(model_dir, tmp_path):
    from safetensors.numpy import load_file

    ship(model_dir, tmp_path / "f16")
    manifest = ship(model_dir, tmp_path / "i8", dtype="int8")
    a, b = StaticEncoder(tmp_path / "f16"), StaticEncoder(tmp_path / "i8")
    stored = load_file(str(tmp_path / "i8" / "vectors.safetensors"))
    assert manifest["dtype"] == "int8" and stored["vectors"].dtype == np.int8 and stored["scales"].shape == (50,)
    assert np.abs(b.vectors - a.vectors).max() <= np.abs(a.vectors).max(axis=1).max() / 254 + 1e-6
    texts = ["the red cat", "a big dog runs", "der hund"]
    assert (a.encode(texts) * b.encode(texts)).sum(1).min() > 0.999
    assert check_probes(b, manifest) < 1e-6


def test_packaged_static_model_gives_its_recorded_vectors():
    """static-small as its model package installed it: checksums, fingerprint and probe vectors."""
    from xlingua import load_encoder
    from xlingua.encoders.manifest import MANIFEST
    from xlingua.encoders.model_packages import model_dir

    root = model_dir("static-small")
    m = json.loads((root / MANIFEST).read_text())
    enc = load_encoder("static-small")
    assert enc.fingerprint() == m["fingerprint"] and enc.dim == m["dim"] and enc.name == "static-small"
    assert check_probes(enc, m) < 1e-5


def test_corrupted_copy_of_the_packaged_model_is_refused_in_one_line(tmp_path):
    import shutil

    from typer.testing import CliRunner

    from xlingua.cli import app
    from xlingua.encoders.model_packages import model_dir

    root = model_dir("static-small")
    copy = tmp_path / "copy"
    shutil.copytree(root, copy)
    with open(copy / "vectors.safetensors", "r+b") as f:
        f.seek(1000)
        f.write(b"\x00\x01\x02")
    (tmp_path / "in.txt").write_text("hello\n")
    res = CliRunner().invoke(app, ["embed", "-m", f"static:{copy}", str(tmp_path / "in.txt"), "-o", str(tmp_path / "o.npy")])
    assert res.exit_code == 2 and len(res.output.strip().splitlines()) == 1
    assert "vectors.safetensors is corrupted or altered" in res.output and not (tmp_path / "o.npy").exists()
