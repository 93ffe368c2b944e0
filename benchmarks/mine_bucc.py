"""BUCC 2018 zh-en (sample split) through `xlingua mine`: F1 at the F1-best threshold
(--calibrate on the gold pairs, as the reference script picks its best threshold) for each
scoring, selection mode, k and index type. Embeddings are cached in the work dir, so every
variant after the first costs only kNN + scoring.

  .venv/bin/python benchmarks/mine_bucc.py --models use bundled bundled,use
"""
from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from xlingua.index import ivfpq_string
from xlingua.mining import MineConfig, mine
from xlingua.paths import benchmarks_dir


def variants(n_tgt: int, dim: int, ivf: str | None = None):
    for margin in ("absolute", "distance", "csls", "inbatch"):
        yield "margin", {"margin": margin}
    for mode in ("forward", "backward", "intersect", "union"):
        yield "mode", {"mode": mode}
    for k in (2, 8, 16):
        yield "k", {"k": k}
    for nprobe in (8, 64):
        yield "index", {"index": ivf or ivfpq_string(n_tgt, dim), "nprobe": nprobe}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", nargs="+", default=["bundled", "use"])
    ap.add_argument("--data", default=None, help="benchmarks dir (default ../shared/benchmarks)")
    ap.add_argument("--workdir", default="runs/mine/work")
    ap.add_argument("--out", default="runs/mine/bucc")
    ap.add_argument("--only", nargs="+", help="run only these groups (margin mode k index); `base` runs "
                                              "the ratio-margin run alone, e.g. to compare encoders' wall time")
    ap.add_argument("--ivf", help="approximate index for the index group (default: the size-based "
                                  "OPQ64,IVFn,PQ64)")
    ap.add_argument("--cached", action="store_true",
                    help="wrap encoders in the project's shared embedding cache (reuse vectors "
                         "other commands stored)")
    args = ap.parse_args()
    bucc = benchmarks_dir(args.data) / "bucc2018"
    src, tgt, gold = bucc / "zh-en.dev.zh", bucc / "zh-en.dev.en", bucc / "zh-en.dev.gold"
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    rows = []
    for model in args.models:
        runs = [("margin", {})]  # ratio, max, k=4, exact; its dim sizes the IVF-PQ index
        while runs:
            group, opts = runs.pop(0)
            cfg = MineConfig("zh", "en", model=model, **opts)
            encoder = None
            if args.cached:
                from xlingua.encoders.cache import CachedEncoder
                from xlingua.encoders.loading import load_encoder

                encoder = [CachedEncoder(load_encoder(m)) for m in model.split(",")]
            t0 = time.perf_counter()
            s = mine(src, tgt, out / f"{model.replace(',', '+')}_{len(rows)}.tsv.gz", cfg,
                     workdir=args.workdir, calibrate=gold, show_progress=False, encoder=encoder)
            if group == "margin" and not opts:
                runs += [(g, o) for g, o in variants(s["tgt"]["sentences"], s["settings"]["dim"], args.ivf)
                         if not args.only or g in args.only]
            c = s["calibration"]
            recall = s["index"]["fwd"].get("recall")
            row = {"model": model, "encoder": s["settings"]["encoder"], "group": group,
                   "margin": cfg.margin, "mode": cfg.mode, "k": cfg.k,
                   "index": s["settings"]["index"] + (f" nprobe={cfg.nprobe}" if "IVF" in s["settings"]["index"] else ""),
                   "P": round(100 * c["precision"], 1), "R": round(100 * c["recall"], 1),
                   "F1": round(100 * c["f1"], 1), "threshold": round(c["threshold"], 4),
                   "recall@1": recall and round(recall["recall@1"], 3),
                   "seconds": round(time.perf_counter() - t0, 1)}
            rows.append(row)
            print(json.dumps(row), flush=True)
    (out / "results.json").write_text(json.dumps(rows, indent=1))
    cols = ["model", "group", "margin", "mode", "k", "index", "recall@1", "P", "R", "F1", "threshold", "seconds"]
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    lines += ["| " + " | ".join(str(r[c]) if r[c] is not None else "-" for c in cols) + " |" for r in rows]
    (out / "results.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
