"""Two-stage mining on BUCC 2018 zh-en (sample split): a static encoder scores every pair by
ratio margin and proposes the best-scoring candidates, then `bundled` embeds only the sentences
of those candidates and re-scores them; beside one-stage mining with each encoder alone. F1 at
the F1-best threshold on the gold (as benchmarks/mine_bucc.py), and wall / CPU seconds of
everything from raw text to scored pairs, measured one after the other in this process.

    .venv/bin/python benchmarks/mine_two_stage.py --static static-small --full bundled \
        --keep 0.05 0.1 0.2 0.4 --out runs/mine/two_stage.json

`--keep F`: the first stage keeps its F x (source sentences) best candidate pairs (LASER's
max selection over both kNN directions). The second stage scores a kept pair by the full
model's cosine (`cos`) or by its ratio margin with the neighbours taken among the kept
sentences (`margin`). A gold pair the first stage drops is a miss.
"""
from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

from xlingua.data.benchmarks import read_bucc
from xlingua.encoders.loading import load_encoder
from xlingua.evaluation.tasks.bucc import gold_flags, mine_rows
from xlingua.io import write_json
from xlingua.similarity.calibrate import best_threshold
from xlingua.similarity.cosine import paired_cosine
from xlingua.similarity.margin import pair_scores, side_knn_means


class Clock:
    def __enter__(self):
        self.t0, self.c0 = time.perf_counter(), time.process_time()
        return self

    def __exit__(self, *exc):
        self.wall, self.cpu = time.perf_counter() - self.t0, time.process_time() - self.c0


def f1_row(name: str, scores, a, b, gold, clock: Clock, **extra) -> dict:
    order = np.argsort(-scores, kind="stable")
    c = best_threshold(scores[order], gold_flags(a[order], b[order], gold), len(gold))
    return {"row": name, "P": round(100 * c["precision"], 1), "R": round(100 * c["recall"], 1),
            "F1": round(100 * c["f1"], 1), "wall_s": round(clock.wall, 1), "cpu_s": round(clock.cpu, 1), **extra}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--static", default="static-small")
    ap.add_argument("--full", default="bundled")
    ap.add_argument("--keep", type=float, nargs="+", default=[0.05, 0.1, 0.2, 0.4])
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args()

    data = read_bucc("zh")
    src_ids, tgt_ids = sorted(data.src), sorted(data.tgt)
    src = [data.src[i] for i in src_ids]
    tgt = [data.tgt[i] for i in tgt_ids]
    row_of_src = {s: i for i, s in enumerate(src_ids)}
    row_of_tgt = {t: j for j, t in enumerate(tgt_ids)}
    gold = {(row_of_src[s], row_of_tgt[t]) for s, t in data.gold}
    static, full = load_encoder(args.static), load_encoder(args.full)
    static.encode(src[:32]), full.encode(src[:32])  # warm-up
    rows = []

    def add(row):
        rows.append(row)
        print(json.dumps(row), flush=True)
        write_json(args.out, {"static": args.static, "full": args.full, "src": len(src), "tgt": len(tgt),
                              "gold": len(gold), "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
                              "rows": rows})

    for name, enc in ((args.full, full), (args.static, static)):
        with Clock() as clock:
            s, a, b = mine_rows(enc.encode(src), enc.encode(tgt))
        add(f1_row(f"one stage: {name}", s, a, b, gold, clock, embedded=len(src) + len(tgt)))
    for keep in args.keep:
        with Clock() as clock:
            s, a, b = mine_rows(static.encode(src), static.encode(tgt))
            n = int(keep * len(src))
            a, b = a[:n], b[:n]
            ua, ub = np.unique(a), np.unique(b)
            x = dict(zip(ua.tolist(), full.encode([src[i] for i in ua])))
            y = dict(zip(ub.tolist(), full.encode([tgt[j] for j in ub])))
            xa = np.stack([x[i] for i in a.tolist()])
            yb = np.stack([y[j] for j in b.tolist()])
            cos = paired_cosine(xa, yb)
        recall = float(np.mean([p in set(zip(a.tolist(), b.tolist())) for p in gold]))
        extra = {"keep": keep, "candidates": n, "embedded": len(ua) + len(ub), "gold_in_candidates": round(100 * recall, 1)}
        add(f1_row(f"two stage, keep {keep:g}: cos", cos, a, b, gold, clock, **extra))
        with Clock() as extra_clock:
            xm, ym = side_knn_means(np.stack(list(x.values())), np.stack(list(y.values())))
            xmean, ymean = dict(zip(x, xm)), dict(zip(y, ym))
            margin = pair_scores(cos, np.array([xmean[i] for i in a.tolist()]), np.array([ymean[j] for j in b.tolist()]))
        clock.wall += extra_clock.wall
        clock.cpu += extra_clock.cpu
        add(f1_row(f"two stage, keep {keep:g}: margin", margin, a, b, gold, clock, **extra))


if __name__ == "__main__":
    main()
