"""Synthetic large mining run: N lines per side from ../shared data, real translations hidden
among real non-parallel sentences; recall of the hidden pairs, wall time and peak memory per
stage, and the kNN stage against a plain FAISS flat search of the same vectors.

Corpora (real text): the source side mixes the non-English sides of l10n train pairs; the
target side is English. `hidden` source lines have their English translation in the target;
every other source line is a translation of an English string that is *not* in the target,
and the remaining target lines are English sentences with no translation in the source
(l10n English, topped up with Multi30k English captions when l10n runs out).

Vectors, two ways:
  --vectors real       embed with --model (the whole pipeline; only feasible at a few
                       thousand lines per side on this machine)
  --vectors synthetic  vectors resampled from a previous `real` run's embeddings (--fit-from
                       its summary) with Gaussian noise matched to its nearest-neighbour and
                       pair cosines (see synthetic_vectors). The "embed" stage is then a table
                       lookup; every other stage is real.

  .venv/bin/python benchmarks/mine_large.py --n 5000 --vectors real --model use
  .venv/bin/python benchmarks/mine_large.py --n 200000 --vectors synthetic --indexes IVF1024,PQ64 \
      --fit-from runs/mine/large/real_5000/pairs_Flat.tsv.gz.summary.json
"""
from __future__ import annotations

import argparse
import gzip
import json
import random
import time
from pathlib import Path

import numpy as np

from xlingua.encoders.base import Encoder
from xlingua.encoders.store import load_embeddings
from xlingua.mining import MineConfig, mine
from xlingua.mining.embed import unit_rows
from xlingua.paths import benchmarks_dir, corpora_dir

USE_LANGS = "ar de es fr it ja ko nl pl pt ru th tr zh".split()  # the languages mUSE covers


def build_corpora(n: int, hidden: int, langs: list[str], seed: int = 0):
    """(src lines, tgt lines, gold [(src line no, tgt line no)]), 1-based line numbers."""
    by_en: dict[str, list[str]] = {}
    for lang in langs:
        with gzip.open(corpora_dir() / "l10n" / f"{lang}-en.train.tsv.gz", "rt", encoding="utf-8") as f:
            for line in f:
                parts = line.rstrip("\n").split("\t")
                if len(parts) == 2 and parts[0].strip() and parts[1].strip():
                    by_en.setdefault(parts[1], []).append(parts[0])
    rng = random.Random(seed)
    english = sorted(by_en)
    rng.shuffle(english)
    used_xx: set[str] = set()

    def one_translation(en):
        for xx in by_en[en]:
            if xx not in used_xx and xx not in by_en:
                used_xx.add(xx)
                return xx
        return None

    hidden_pairs, pos = [], 0
    while len(hidden_pairs) < hidden:
        en = english[pos]
        pos += 1
        xx = one_translation(en)
        if xx is not None:
            hidden_pairs.append((xx, en))
    # source fillers: every translation of English strings kept out of the target
    src_fill: list[str] = []
    tgt_pool = english[pos:]
    while len(src_fill) < n - hidden:
        en = tgt_pool.pop()
        for xx in by_en[en]:
            if xx not in used_xx and xx not in by_en and len(src_fill) < n - hidden:
                used_xx.add(xx)
                src_fill.append(xx)
    tgt_fill = [en for en in tgt_pool if en not in used_xx][: n - hidden]
    if len(tgt_fill) < n - hidden:
        seen = set(tgt_fill) | {en for _, en in hidden_pairs} | used_xx
        for line in _extra_english():
            if line not in seen and len(tgt_fill) < n - hidden:
                seen.add(line)
                tgt_fill.append(line)
    if len(tgt_fill) < n - hidden:
        raise SystemExit(f"not enough English sentences for n={n}")
    src = [xx for xx, _ in hidden_pairs] + src_fill
    tgt = [en for _, en in hidden_pairs] + tgt_fill
    src_order, tgt_order = list(range(n)), list(range(n))
    rng.shuffle(src_order)
    rng.shuffle(tgt_order)
    src_pos = {old: new for new, old in enumerate(src_order)}
    tgt_pos = {old: new for new, old in enumerate(tgt_order)}
    gold = [(src_pos[i] + 1, tgt_pos[i] + 1) for i in range(hidden)]
    return [src[i] for i in src_order], [tgt[i] for i in tgt_order], gold


EXTRA_ENGLISH = ["multi30k/train.en", "multi30k/val.en", "multi30k/test_2016_flickr.en",
                 "multi30k/test_2017_flickr.en", "multi30k/test_2018_flickr.en",
                 "multi30k/test_2017_mscoco.en", "senteval/SUBJ/subj.objective",
                 "senteval/SUBJ/subj.subjective", "senteval/MR/rt-polarity.pos",
                 "senteval/MR/rt-polarity.neg", "senteval/MPQA/mpqa.pos", "senteval/MPQA/mpqa.neg",
                 "senteval/CR/custrev.pos", "senteval/CR/custrev.neg", "bucc2018/zh-en.dev.en"]


def _extra_english():
    """English sentences from other ../shared sets, to top up the target side."""
    for name in EXTRA_ENGLISH:
        for line in (benchmarks_dir() / name).read_bytes().decode("utf-8", "replace").splitlines():
            line = line.split("\t", 1)[-1].strip()
            if line and "\t" not in line:
                yield line


class LookupEncoder(Encoder):
    """Returns precomputed vectors for known sentences (the synthetic run's "embedding")."""

    normalized = True

    def __init__(self, texts: list[str], vectors: np.ndarray, name: str):
        self.row = {t: i for i, t in enumerate(texts)}
        self.vectors = vectors.astype(np.float16)
        self.dim = vectors.shape[1]
        self.name = name

    def _encode_batch(self, texts, lang):
        return self.vectors[[self.row[t] for t in texts]].astype(np.float32)

    def fingerprint(self) -> str:
        return self.name


def synthetic_vectors(fit_summary: dict, n: int, gold, seed: int = 0):
    """Vectors shaped like a real run's embeddings (see module doc): each sentence vector is a
    real vector plus Gaussian noise (covariance of the real vectors, scaled by h), so the
    cluster structure of real text is kept; h is chosen so that, at the real run's size, the
    mean cosine of a source sentence to its nearest target matches the real one. A hidden
    pair's target is its source plus s times a difference drawn from the real pairs'
    differences, s chosen so that the mean pair cosine matches the real one."""
    def load_side(side):
        return unit_rows(load_embeddings(fit_summary["artefacts"][f"{side}_embed"]))

    xs, ys = load_side("src"), load_side("tgt")
    fit_gold = json.loads(Path(fit_summary["gold_file"]).read_text())
    gi, gj = np.array([i - 1 for i, _ in fit_gold]), np.array([j - 1 for _, j in fit_gold])
    diffs = ys[gj] - xs[gi]
    rng = np.random.default_rng(seed)

    def unit(v):
        return v / np.linalg.norm(v, axis=1, keepdims=True)

    def gauss(data, m):
        mu, cov = data.mean(0), np.cov(data, rowvar=False) + 1e-6 * np.eye(data.shape[1])
        return rng.multivariate_normal(mu, cov, size=m, method="cholesky").astype(np.float32)

    def jitter(real, m, h):
        return unit(real[rng.integers(0, len(real), m)] + h * (gauss(real, m) - real.mean(0)))

    def top1(a, b):
        return float(np.mean(np.max(a @ b.T, axis=1)))

    real_top1 = top1(xs, ys)
    real_pair = float(np.mean(np.sum(xs[gi] * ys[gj], axis=1)))
    m = len(xs)
    h = min((abs(top1(jitter(xs, m, h), jitter(ys, m, h)) - real_top1), h)
            for h in (0.5, 0.75, 1.0, 1.25, 1.5, 2.0))[1]
    x0 = jitter(xs, len(gold), h)
    d0 = gauss(diffs, len(gold))
    sc = min((abs(float(np.mean(np.sum(x0 * unit(x0 + s * d0), axis=1))) - real_pair), s)
             for s in (0.25, 0.5, 0.75, 1.0, 1.25, 1.5, 2.0, 3.0))[1]
    print(f"synthetic vectors: noise h={h}, pair scale s={sc} (real top-1 cos {real_top1:.3f}, "
          f"real pair cos {real_pair:.3f})", flush=True)
    src = jitter(xs, n, h)
    tgt = jitter(ys, n, h)
    for (i, j), dd in zip(gold, gauss(diffs, len(gold))):
        tgt[j - 1] = unit((src[i - 1] + sc * dd)[None])[0]
    return src, tgt


def plain_faiss(summary: dict, k: int) -> dict:
    """The same vectors (as the pipeline stores them) through one IndexFlatIP per direction."""
    import faiss

    def load_side(side):
        return unit_rows(load_embeddings(summary["artefacts"][f"{side}_embed"]))

    x, y = load_side("src"), load_side("tgt")
    out = {}
    t0, c0 = time.perf_counter(), time.process_time()
    for name, q, db in (("fwd", x, y), ("bwd", y, x)):
        index = faiss.IndexFlatIP(db.shape[1])
        index.add(db)
        out[name] = index.search(q, k)
    out["seconds"], out["cpu_seconds"] = time.perf_counter() - t0, time.process_time() - c0
    return out


def pipeline_knn(summary: dict, workdir: Path, name: str):
    """The pipeline's kNN files for one direction, concatenated."""
    from xlingua.mining.cache import load_json

    for d in sorted((workdir / "knn").glob("*")):
        cfg = load_json(d / "config.json")
        side = "src" if name == "fwd" else "tgt"
        if Path(cfg["query_dir"]) == Path(summary["artefacts"][f"{side}_embed"]) and \
                cfg["factory"] == "Flat" and cfg["k"] == summary["settings"]["k"]:
            parts = [np.load(p) for p in sorted(d.glob("knn_*.npz"))]
            return np.concatenate([p["D"] for p in parts]), np.concatenate([p["I"] for p in parts])
    raise FileNotFoundError("pipeline kNN results not found")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=200_000, help="lines per side")
    ap.add_argument("--hidden", type=float, default=0.1, help="share of source lines with a translation")
    ap.add_argument("--vectors", choices=("real", "synthetic"), default="real")
    ap.add_argument("--model", default="use")
    ap.add_argument("--fit-from", help="summary of a `real` run (synthetic vectors)")
    ap.add_argument("--shard-size", type=int, default=50_000)
    ap.add_argument("--indexes", nargs="+", default=["Flat"],
                    help="index(es) to run: Flat (then also timed against plain FAISS), auto, or a "
                         "FAISS factory string such as IVF1024,PQ64")
    ap.add_argument("--nprobe", type=int, default=128)
    ap.add_argument("--margin", default="ratio")
    ap.add_argument("--out", default="runs/mine/large")
    args = ap.parse_args()

    out = Path(args.out) / f"{args.vectors}_{args.n}"
    out.mkdir(parents=True, exist_ok=True)
    langs = USE_LANGS if args.vectors == "real" and args.model == "use" else \
        sorted(p.name.split("-")[0] for p in (corpora_dir() / "l10n").glob("*-en.train.tsv.gz"))
    t0 = time.perf_counter()
    src, tgt, gold = build_corpora(args.n, int(args.n * args.hidden), langs)
    (out / "src.txt").write_text("".join(s + "\n" for s in src), encoding="utf-8")
    (out / "tgt.txt").write_text("".join(s + "\n" for s in tgt), encoding="utf-8")
    (out / "gold.tsv").write_text("".join(f"{i}\t{j}\n" for i, j in gold))
    (out / "gold.json").write_text(json.dumps(gold))
    print(f"corpora: {len(src):,} x {len(tgt):,} lines, {len(gold):,} hidden pairs "
          f"({time.perf_counter() - t0:.0f}s)", flush=True)

    encoder = None
    if args.vectors == "synthetic":
        fit = json.loads(Path(args.fit_from).read_text())
        sv, tv = synthetic_vectors(fit, args.n, gold)
        encoder = LookupEncoder(src + tgt, np.concatenate([sv, tv]),
                                name=f"synthetic2-{args.n}-fit-{fit['settings']['encoder']}")
        del sv, tv
    workdir = out / "work"
    results = {"n": args.n, "hidden": len(gold), "vectors": args.vectors}
    for index in args.indexes:
        if index == "Flat":  # the kNN stage is what gets timed: never take it from the cache
            import shutil

            shutil.rmtree(workdir / "knn", ignore_errors=True)
        cfg = MineConfig("mul", "en", model=args.model, margin=args.margin, shard_size=args.shard_size,
                         index=index, nprobe=args.nprobe)
        pairs = out / f"pairs_{index.replace(',', '_')}.tsv.gz"
        s = mine(out / "src.txt", out / "tgt.txt", pairs, cfg, workdir=workdir, encoder=encoder,
                 calibrate=out / "gold.tsv")
        s["gold_file"] = str(out / "gold.json")
        (Path(str(pairs) + ".summary.json")).write_text(json.dumps(s, indent=1))
        c = s["calibration"]
        results[index] = {"index": s["settings"]["index"], "calibration": c,
                          "recall_fwd": s["index"]["fwd"].get("recall"),
                          "timings": s["timings"], "peak_rss_mb": s["peak_rss_mb"]}
        print(json.dumps(results[index]["calibration"]), flush=True)
        if s["settings"]["index"] == "Flat":
            flat = plain_faiss(s, cfg.k)
            same = {}
            for name in ("fwd", "bwd"):
                d, i = pipeline_knn(s, workdir, name)
                same[name] = {"ids_equal": float(np.mean(i == flat[name][1])),
                              "max_score_diff": float(np.abs(d - flat[name][0]).max())}
            ours = s["timings"]["knn_fwd"]["seconds"] + s["timings"]["knn_bwd"]["seconds"]
            ours_cpu = s["timings"]["knn_fwd"]["cpu_seconds"] + s["timings"]["knn_bwd"]["cpu_seconds"]
            # CPU seconds as well as wall: other jobs on a shared machine move wall time only
            results["knn_vs_plain_faiss"] = {"pipeline_knn_seconds": ours,
                                             "plain_faiss_seconds": round(flat["seconds"], 3),
                                             "ratio": round(ours / flat["seconds"], 3),
                                             "pipeline_knn_cpu_seconds": round(ours_cpu, 3),
                                             "plain_faiss_cpu_seconds": round(flat["cpu_seconds"], 3),
                                             "cpu_ratio": round(ours_cpu / flat["cpu_seconds"], 3),
                                             "agreement": same}
            print(json.dumps(results["knn_vs_plain_faiss"]), flush=True)
    (out / "results.json").write_text(json.dumps(results, indent=1))
    print(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
