"""The meaning model shipped for the default model: `bundled+meaning` loads out of the box,
reproduces its recorded probe vectors on whichever path `bundled` takes on this CPU, and a
corrupted copy is refused naming the file."""
from __future__ import annotations

import shutil
import warnings

import pytest

from xlingua.encoders.loading import load_encoder
from xlingua.encoders.manifest import CorruptModelError, check_probes, read_manifest
from xlingua.encoders.model_packages import model_dir


def test_bundled_meaning_loads_by_name_and_reproduces_its_probe_vectors():
    manifest = read_manifest(model_dir("meaning-bundled"))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the bf16 and fp32 paths of bundled are the same vectors: no warning
        enc = load_encoder("bundled+meaning")
    assert manifest["base"] == "bundled" and enc.dim == manifest["dim"] == 384
    # recorded on bundled's bf16 path; its fp32 path differs by ~3e-3 at most
    check_probes(enc, manifest, atol=1e-2)


def test_a_corrupted_copy_is_refused(tmp_path):
    copy = tmp_path / "meaning"
    shutil.copytree(model_dir("meaning-bundled"), copy)
    data = bytearray((copy / "model.pt").read_bytes())
    data[len(data) // 2] ^= 0xFF
    (copy / "model.pt").write_bytes(bytes(data))
    with pytest.raises(CorruptModelError, match="model.pt is corrupted"):
        load_encoder(f"bundled+meaning:{copy}")
