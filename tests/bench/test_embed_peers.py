"""`xlingua bench embed` with sentence-transformers peers in a process of their own: the bookkeeping,
with a fake peer script speaking st_peer.py's protocol (its seconds are made up, so the rates are
known; nothing here is timed), and the real script under this Python."""
import json
import sys

import pytest

from tests.encoders.test_hf_encoder import TEXTS, tiny_dir  # noqa: F401  (fixture)
from xlingua.bench import embed
from xlingua.bench.peers import SCRIPT

FAKE = r'''
import json, os, sys
import numpy as np

known = json.load(open(os.environ["FAKE_PEER_VECTORS"]))  # the model's vectors of the bench's texts
proto = os.fdopen(os.dup(1), "w")
os.dup2(2, 1)
for line in sys.stdin:
    msg = json.loads(line)
    if msg["cmd"] == "quit":
        break
    if msg["cmd"] == "hello":
        out = {"ok": True, "versions": {"fake-peers": "1.0"}}
    elif msg["cmd"] == "load":
        if msg["peer"] == "st:onnx":
            out = {"ok": False, "reason": "Exception: Using the ONNX backend requires installing Optimum"}
        elif msg["peer"] == "st:openvino":
            sys.exit(3)  # a crash: this peer's process only
        else:
            assert json.load(open(msg["calibration"])), "no calibration texts"
            out = {"ok": True, "name": "fake " + msg["peer"], "load_seconds": 0.5}
    elif msg["cmd"] == "encode":
        v = np.array([known[t] for t in msg["texts"]], dtype=np.float32)
        if msg["peer"] == "st:onnx-int8":  # another engine's rounding
            v = v + 0.05 * np.sin(np.arange(v.size)).reshape(v.shape)
        np.save(msg["out"], v)
        out = {"ok": True, "seconds": {"st:torch": 2.0, "st:onnx-int8": 1.0}.get(msg["peer"], 1.5), "cpu_seconds": 3.0}
    proto.write(json.dumps(out) + "\n")
    proto.flush()
'''


@pytest.fixture
def sentences(monkeypatch):
    monkeypatch.setattr(embed, "sample_sentences", lambda n, seed: (TEXTS * 4)[:n])


def test_peers_are_timed_by_their_own_clock_and_the_failing_ones_skipped(tiny_dir, tmp_path, sentences,  # noqa: F811
                                                                         monkeypatch):
    from xlingua.encoders.hf import TransformerEncoder

    script = tmp_path / "fake_peer.py"
    script.write_text(FAKE)
    texts = sorted(set(TEXTS))
    known = tmp_path / "vectors.json"
    known.write_text(json.dumps(dict(zip(texts, TransformerEncoder(tiny_dir).encode(texts).tolist()))))
    monkeypatch.setenv("FAKE_PEER_VECTORS", str(known))
    peers = ["st:torch", "st:onnx", "st:onnx-int8", "st:openvino", "st:openvino-int8"]
    report = embed.run_bench(n=12, rounds=3, paths=[], out_dir=tmp_path / "out", reference=str(tiny_dir),
                             peak_seconds=0, peers=peers, peer_python=sys.executable, peer_script=script)
    rows = {r["path"]: r for r in report["rows"]}
    assert list(rows) == [str(tiny_dir), "st:torch", "st:onnx-int8", "st:openvino-int8"]
    # 12 sentences in 3 calls of 2.0 s (st:torch), 1.0 s (st:onnx-int8), 1.5 s, as the peer measured them
    assert [rows[p]["sentences_per_s"] for p in ("st:torch", "st:onnx-int8", "st:openvino-int8")] == [2.0, 4.0, 2.7]
    assert rows["st:torch"]["cpu_seconds"] == 9.0 and rows["st:torch"]["load_seconds"] == 0.5
    assert rows["st:torch"]["encoder"] == "fake st:torch" and rows["st:torch"]["cosine_min"] == 1.0
    assert rows["st:onnx-int8"]["cosine_min"] < 0.999
    assert report["skipped"] == [
        {"path": "st:onnx", "reason": "Exception: Using the ONNX backend requires installing Optimum"},
        {"path": "st:openvino", "reason": "the peer's process ended (exit 3); its output is in "
                                          f"{tmp_path / 'out' / 'peers' / 'peers.log'}"}]
    assert report["peer_versions"] == {"fake-peers": "1.0"}
    assert report["command"].endswith(f"--peer-python {sys.executable} " + " ".join(f"--peer {p}" for p in peers))
    assert report["summary"].startswith("Fastest peer: st:onnx-int8 (fake st:onnx-int8), 4.0 sentences/s, "
                                        "cosine to fp32 mean 0.")
    assert f"; fastest xlingua path: {tiny_dir} (" in report["summary"]
    md = (tmp_path / "out" / "embed_bench.md").read_text()
    assert "Skipped st:onnx: Exception: Using the ONNX backend requires installing Optimum" in md
    assert report["summary"] in md and "| st:onnx-int8 | fake st:onnx-int8 | 4.0 |" in md
    assert json.loads((tmp_path / "out" / "embed_bench.json").read_text())["skipped"] == report["skipped"]
    assert not any(p.name in ("onnx", "openvino") for p in tiny_dir.iterdir())  # the model directory untouched


def test_a_peer_python_that_does_not_start_skips_every_peer(tiny_dir, tmp_path, sentences):  # noqa: F811
    report = embed.run_bench(n=8, rounds=2, paths=[], out_dir=tmp_path, reference=str(tiny_dir), peak_seconds=0,
                             peers=["st:torch", "st:onnx"], peer_python=str(tmp_path / "no-python"))
    assert [r["path"] for r in report["rows"]] == [str(tiny_dir)] and report["summary"] is None
    assert report["skipped"] == [{"path": p, "reason": f"cannot start {tmp_path / 'no-python'}: No such file or directory"}
                                 for p in ("st:torch", "st:onnx")]


def test_the_real_peer_script_under_this_python(tiny_dir, tmp_path, sentences):  # noqa: F811
    """st_peer.py under xlingua's own Python: the torch backend runs, the ONNX one needs optimum
    (skipped with sentence-transformers' own reason where optimum is not installed)."""
    pytest.importorskip("sentence_transformers")
    import importlib.util

    report = embed.run_bench(n=8, rounds=2, paths=[], out_dir=tmp_path, reference=str(tiny_dir), peak_seconds=0,
                             peers=["st:torch", "st:onnx"], peer_python=sys.executable, peer_script=SCRIPT)
    rows = {r["path"]: r for r in report["rows"]}
    assert rows["st:torch"]["encoder"].startswith("sentence-transformers ") and rows["st:torch"]["cosine_min"] > 0.9999
    if importlib.util.find_spec("optimum") is None:
        assert [s["path"] for s in report["skipped"]] == ["st:onnx"] and "Optimum" in report["skipped"][0]["reason"]
    assert report["peer_versions"]["python"] == sys.version.split()[0]
