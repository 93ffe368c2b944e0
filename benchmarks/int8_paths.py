"""Inference engines for the default model side by side, to choose which become encoder paths:
torch fp32 (the reference), torch bf16 (eager, and compiled by torch.compile), ONNX Runtime fp32, CTranslate2 fp32, and three int8 routes:
torch's dynamic quantization of the linear layers, ONNX Runtime's dynamic quantizer (per
channel; all MatMuls, or with the feed-forward layers kept fp32), CTranslate2 int8.

Every candidate embeds the same real sentences (bench.embed.sample_sentences) through xlingua's
tokenizer, batching, pooling and normalization; only the hidden states come from the engine.
The sentences are cut by token length into `--rounds` groups of equal size (shortest first);
every engine embeds each group in turn, in a rotating order, so load from other processes falls
on all alike. Each row reports sentences/s, the ratio to torch fp32, and the cosine of its
vectors to torch fp32's (mean and min); `--plot` draws sentences/s against the group's mean
token length for each engine.

    .venv/bin/python benchmarks/int8_paths.py --n 2000 --rounds 4 --out runs/bench/int8_paths.json \
        --plot docs/img/engines-by-length.png
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import time
import warnings
from pathlib import Path

import numpy as np
import torch

from xlingua.bench.embed import _machine, sample_sentences
from xlingua.encoders.loading import load_encoder
from xlingua.io import write_text


def _ort_states(enc, onnx_path: Path):
    import onnxruntime as ort

    so = ort.SessionOptions()
    so.intra_op_num_threads = torch.get_num_threads()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    session = ort.InferenceSession(str(onnx_path), so, providers=["CPUExecutionProvider"])

    def states(batch, layer):
        feeds = {k: batch[k].cpu().numpy() for k in ("input_ids", "attention_mask")}
        return torch.from_numpy(session.run(None, feeds)[0])
    return states


def _ort_int8(model: str, keep_ffn: bool):
    """bundled:onnx's exported graph through ONNX Runtime's dynamic quantizer (per channel)."""
    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic

    enc = load_encoder(f"{model}:onnx")
    src = Path(enc.path) / "onnx" / "model.onnx"
    dst = src.with_name(f"model-int8{'-ffn-fp32' if keep_ffn else ''}.onnx")
    if not dst.is_file():
        graph = onnx.load(str(src), load_external_data=False)
        matmuls = [n.name for n in graph.graph.node if n.op_type == "MatMul"]
        keep = [n for n in matmuls if "intermediate/" in n or ("/output/dense" in n and "attention" not in n)]
        quantize_dynamic(str(src), str(dst), weight_type=QuantType.QInt8, per_channel=True,
                         nodes_to_exclude=keep if keep_ffn else [])
    enc._states = _ort_states(enc, dst)
    return enc


def _torch_compiled(model: str):
    """bundled:bf16 with its transformer compiled by torch.compile (inductor; shapes dynamic, since
    every batch has its own length). The compilation happens on the first calls: its seconds are
    the warm-up column."""
    enc = load_encoder(f"{model}:bf16")
    enc.model = torch.compile(enc.model, dynamic=True)
    return enc


def _torch_int8(model: str):
    enc = load_encoder(f"{model}:torch")
    with warnings.catch_warnings():  # torch.ao's deprecation notice
        warnings.simplefilter("ignore")
        enc.model = torch.ao.quantization.quantize_dynamic(enc.model, {torch.nn.Linear}, dtype=torch.qint8)
    return enc


CANDIDATES = {
    "torch fp32": lambda m: load_encoder(f"{m}:torch"),
    "torch bf16": lambda m: load_encoder(f"{m}:bf16"),
    "torch bf16, torch.compile": _torch_compiled,
    "onnxruntime fp32": lambda m: load_encoder(f"{m}:onnx"),
    "ctranslate2 fp32": lambda m: load_encoder(f"{m}:ct2"),
    "torch int8 (dynamic)": _torch_int8,
    "onnxruntime int8 (dynamic, per channel)": lambda m: _ort_int8(m, keep_ffn=False),
    "onnxruntime int8, feed-forward fp32": lambda m: _ort_int8(m, keep_ffn=True),
    "ctranslate2 int8": lambda m: load_encoder(f"{m}:int8"),
}
REFERENCE = "torch fp32"


def _flags() -> str:
    """The CPU's vector and matrix units that the engines can use."""
    try:
        flags = next(l for l in open("/proc/cpuinfo") if l.startswith("flags")).split()
    except (OSError, StopIteration):
        return platform.machine()
    units = [f for f in ("avx2", "avx512f", "avx512_vnni", "avx512_bf16", "amx_bf16", "amx_int8") if f in flags]
    return " ".join(units) or platform.machine()


def plot(rows: list[dict], path: Path, result: dict) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.5))
    for r in rows:
        xs, ys = zip(*r["by_length"])
        ax.plot(xs, ys, marker="o", label=r["engine"], linestyle="--" if "int8" in r["engine"] else "-")
    ax.set_xlabel("mean tokens per sentence (group of equal size)")
    ax.set_ylabel("sentences / s")
    ax.set_yscale("log")
    ax.set_title(f"{result['model']}: {result['sentences']} sentences, {result['cpu_flags']}, "
                 f"{result['threads']} threads, {result['date']}", fontsize=9)
    ax.legend(fontsize=8)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", default="bundled")
    ap.add_argument("--n", type=int, default=2000)
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--out", type=Path, default=Path("runs/bench/int8_paths.json"))
    ap.add_argument("--plot", type=Path, help="PNG of sentences/s against token length")
    ap.add_argument("--engine", action="append", choices=list(CANDIDATES),
                    help=f"engines to time (repeatable; default all; {REFERENCE!r} always runs)")
    args = ap.parse_args()

    chosen = [REFERENCE] + [e for e in (args.engine or CANDIDATES) if e != REFERENCE]
    encoders = {name: CANDIDATES[name](args.model) for name in chosen}
    texts = sample_sentences(args.n, seed=0)
    lengths = np.asarray(encoders[REFERENCE].lengths(texts))
    order = np.argsort(lengths, kind="stable")
    texts, lengths = [texts[i] for i in order], lengths[order]
    warm = {}
    for name, enc in encoders.items():  # warm-up: first calls allocate (and compile)
        t0 = time.perf_counter()
        enc.encode(texts[:32])
        enc.encode(texts[-32:])
        warm[name] = round(time.perf_counter() - t0, 1)
    seconds = dict.fromkeys(encoders, 0.0)
    cpu = dict.fromkeys(encoders, 0.0)
    vectors = {name: [] for name in encoders}
    by_length = {name: [] for name in encoders}  # (mean tokens, sentences/s) per group
    load = [os.getloadavg()[0]]
    names = list(encoders)
    for r, part in enumerate(np.array_split(np.arange(len(texts)), args.rounds)):
        chunk = [texts[i] for i in part]
        for name in names[r % len(names):] + names[: r % len(names)]:
            t0, c0 = time.perf_counter(), time.process_time()
            vectors[name].append(encoders[name].encode(chunk))
            wall = time.perf_counter() - t0
            seconds[name] += wall
            cpu[name] += time.process_time() - c0
            by_length[name].append((round(float(lengths[part].mean()), 1), round(len(part) / wall, 1)))
        print(f"round {r + 1}/{args.rounds}: " + ", ".join(
            f"{n} {sum(len(v) for v in vectors[n]) / seconds[n]:.1f}/s" for n in names), flush=True)
    load.append(os.getloadavg()[0])
    ref = np.concatenate(vectors[REFERENCE])
    rows = []
    for name in names:
        cos = (np.concatenate(vectors[name]) * ref).sum(axis=1)
        rate = len(texts) / seconds[name]
        rows.append({"engine": name, "sentences_per_s": round(rate, 1),
                     "vs_torch_fp32": round(rate * seconds[REFERENCE] / len(texts), 2),
                     "cosine_mean": round(float(cos.mean()), 5), "cosine_min": round(float(cos.min()), 5),
                     "wall_s": round(seconds[name], 1), "cpu_s": round(cpu[name], 1), "warmup_s": warm[name],
                     "by_length": by_length[name]})
    result = {"model": args.model, "sentences": len(texts), "rounds": args.rounds,
              "machine": _machine(), "cpu_flags": _flags(), "threads": torch.get_num_threads(),
              "load_before_after": load, "date": time.strftime("%Y-%m-%d"), "rows": rows}
    write_text(args.out, json.dumps(result, indent=1))
    if args.plot:
        plot(rows, args.plot, result)
    print("| engine | sentences/s | vs torch fp32 | cosine mean | cosine min | CPU s / wall s | warm-up s |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        print(f"| {r['engine']} | {r['sentences_per_s']} | {r['vs_torch_fp32']}x | {r['cosine_mean']} "
              f"| {r['cosine_min']} | {r['cpu_s']} / {r['wall_s']} | {r['warmup_s']} |")


if __name__ == "__main__":
    main()
