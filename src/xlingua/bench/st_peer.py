"""The sentence-transformers peers of `xlingua bench embed`, run as a script under another Python
(one with `sentence-transformers[onnx,openvino]`, whose optimum pins an older transformers than
xlingua's; docs/engines.md). It loads each peer on the model directory as a user would pick it,
embeds the texts it is sent and times itself. It imports nothing of xlingua.

Peers: st:torch, st:onnx, st:openvino (SentenceTransformer(DIR, backend=...)), st:onnx-int8
(export_dynamic_quantized_onnx_model with the config for this CPU), st:openvino-int8
(export_static_quantized_openvino_model, calibrated on the texts of CALIBRATION). Each works in
a directory of its own holding links to the model's files but none of an engine's exports, so it
exports its own and writes nothing into the model directory. Nothing is downloaded (HF offline).

Protocol: one JSON object a line on stdin, one reply a line on the original stdout (what the
libraries print goes to stderr):
  {"cmd": "hello"}                                  -> {"ok": true, "versions": {...}}
  {"cmd": "load", "peer": P, "model": DIR, "work": DIR, "calibration": FILE}
                                                    -> {"ok": true, "name": ..., "load_seconds": s}
  {"cmd": "encode", "peer": P, "texts": [...], "out": FILE.npy}
                                                    -> {"ok": true, "seconds": s, "cpu_seconds": s}
  {"cmd": "quit"}
A request that fails replies {"ok": false, "reason": "one line"}.
"""
from __future__ import annotations

import json
import os
import platform
import sys
import time
from pathlib import Path

#: what an engine of xlingua's writes into a model directory: never a peer's
DERIVED = ("onnx", "openvino", "ct2")


def _workdir(model: str, work: Path) -> str:
    work.mkdir(parents=True, exist_ok=True)
    for item in Path(model).iterdir():
        if item.name not in DERIVED and not (work / item.name).exists():
            (work / item.name).symlink_to(item.resolve())
    return str(work)


def _onnx_config() -> str:
    """The dynamic quantization config a user picks for this CPU (sentence-transformers' names)."""
    if platform.machine() in ("aarch64", "arm64"):
        return "arm64"
    flags: set[str] = set()
    try:
        with open("/proc/cpuinfo") as f:
            flags = next((set(line.split(":", 1)[1].split()) for line in f if line.startswith("flags")), set())
    except OSError:
        pass
    return "avx512_vnni" if "avx512_vnni" in flags else "avx512" if "avx512f" in flags else "avx2"


def load(peer: str, model: str, work: str, calibration: str | None):
    """(SentenceTransformer, what it runs)."""
    from sentence_transformers import SentenceTransformer

    d = _workdir(model, Path(work) / peer.replace(":", "-"))
    if peer in ("st:torch", "st:onnx", "st:openvino"):
        backend = peer.split(":")[1]
        return SentenceTransformer(d, device="cpu", backend=backend), f"{backend} backend"
    if peer == "st:onnx-int8":
        from sentence_transformers import export_dynamic_quantized_onnx_model

        config = _onnx_config()
        export_dynamic_quantized_onnx_model(SentenceTransformer(d, device="cpu", backend="onnx"), config, d)
        return (SentenceTransformer(d, device="cpu", backend="onnx",
                                    model_kwargs={"file_name": f"onnx/model_qint8_{config}.onnx"}),
                f"onnx backend, dynamic int8 ({config})")
    if peer == "st:openvino-int8":
        from sentence_transformers import export_static_quantized_openvino_model

        if not calibration:
            raise ValueError("no calibration texts given")
        data = Path(work) / "calibration"
        data.mkdir(parents=True, exist_ok=True)
        texts = json.loads(Path(calibration).read_text(encoding="utf-8"))
        (data / "train.jsonl").write_text("".join(json.dumps({"text": t}) + "\n" for t in texts), encoding="utf-8")
        export_static_quantized_openvino_model(
            SentenceTransformer(d, device="cpu", backend="openvino"), None, d, dataset_name=str(data),
            dataset_config_name="default", dataset_split="train", column_name="text")
        return (SentenceTransformer(d, device="cpu", backend="openvino",
                                    model_kwargs={"file_name": "openvino/openvino_model_qint8_quantized.xml"}),
                f"openvino backend, static int8 ({len(texts)} calibration texts)")
    raise ValueError(f"unknown peer {peer!r}")


def _versions() -> dict:
    from importlib.metadata import PackageNotFoundError, version

    out = {"python": platform.python_version()}
    for name in ("sentence-transformers", "transformers", "torch", "optimum", "optimum-onnx", "optimum-intel",
                 "onnxruntime", "openvino", "nncf"):
        try:
            out[name] = version(name)
        except PackageNotFoundError:
            pass
    return out


def _one_line(exc: BaseException) -> str:
    text = f"{type(exc).__name__}: {exc}"
    return " ".join(part.strip() for part in text.splitlines() if part.strip())[:500]


def serve(requests, reply) -> None:
    import numpy as np

    models: dict = {}
    for line in requests:
        msg = json.loads(line)
        cmd = msg.get("cmd")
        if cmd == "quit":
            return
        try:
            if cmd == "hello":
                out = {"versions": _versions()}
            elif cmd == "load":
                t0 = time.perf_counter()
                models[msg["peer"]], what = load(msg["peer"], msg["model"], msg["work"], msg.get("calibration"))
                v = _versions()
                out = {"name": f"sentence-transformers {v.get('sentence-transformers', '?')}, {what}",
                       "load_seconds": time.perf_counter() - t0}
            elif cmd == "encode":
                t0, c0 = time.perf_counter(), time.process_time()
                vectors = models[msg["peer"]].encode(msg["texts"])
                out = {"seconds": time.perf_counter() - t0, "cpu_seconds": time.process_time() - c0}
                np.save(msg["out"], np.asarray(vectors, dtype=np.float32))
            else:
                raise ValueError(f"unknown command {cmd!r}")
            reply({"ok": True, **out})
        except Exception as exc:  # the peer is skipped with this reason; the others go on
            reply({"ok": False, "reason": _one_line(exc)})


def main() -> None:
    proto = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)  # libraries' prints go to stderr; stdout is the protocol's
    sys.stdout = sys.stderr
    for key in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE", "TRANSFORMERS_OFFLINE"):
        os.environ[key] = "1"

    def reply(obj: dict) -> None:
        proto.write(json.dumps(obj) + "\n")
        proto.flush()
    serve(sys.stdin, reply)


if __name__ == "__main__":
    main()
