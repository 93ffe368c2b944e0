"""Two-stage mining on BUCC 2018 zh-en (sample split): a static encoder scores every pair by
ratio margin and proposes the best-scoring candidates, then `bundled` embeds only the sentences
of those candidates and re-scores them; beside one-stage mining with each encoder alone. F1 at
the F1-best threshold on the gold (as benchmarks/mine_bucc.py), and wall / CPU seconds of
everything from raw text to scored pairs, measured one after the other in this process.

    .venv/bin/python benchmarks/mine_two_stage.py --static static-small --full bundled \
        --keep 0.05 0.1 0.2 0.4 --out runs/mine/two_stage.json

`--keep F`: the first stage keeps its F x (source sentences) best candidate pairs (LASER's
max selection over both kNN directions). The second stage scores a kept pair by the full
model's cosine (as `xlingua mine --rescore`), or by its ratio margin with the neighbours taken
among the kept sentences. A gold pair the first stage drops is a miss. `--dev-langs` measures
the same on mining sets built from the general corpus's dev slice, where keep is chosen (each
language's dev pairs hidden among `--distractors` training sentences and 1.5 times as many
English ones: `xlingua.data.general.general_mining_set`, the sets the trainer's dev metric
`mining` scores):

    .venv/bin/python benchmarks/mine_two_stage.py --dev-langs de,zh,ru,hi,sw --out runs/mine/two_stage_dev.json
"""
from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

from xlingua.data.benchmarks import read_bucc
from xlingua.data.general import general_mining_set
from xlingua.encoders.loading import load_encoder
from xlingua.mining.memory import mine_rows, two_stage_rows
from xlingua.io import write_json
from xlingua.similarity.calibrate import best_pair_threshold
from xlingua.similarity.cosine import paired_cosine
from xlingua.similarity.margin import pair_scores, side_knn_means


class Clock:
    def __enter__(self):
        self.t0, self.c0 = time.perf_counter(), time.process_time()
        return self

    def __exit__(self, *exc):
        self.wall, self.cpu = time.perf_counter() - self.t0, time.process_time() - self.c0


def f1_row(name: str, scores, a, b, gold, clock: Clock, **extra) -> dict:
    c = best_pair_threshold(scores, a, b, gold)
    return {"row": name, "P": round(100 * c["precision"], 1), "R": round(100 * c["recall"], 1),
            "F1": round(100 * c["f1"], 1), "wall_s": round(clock.wall, 1), "cpu_s": round(clock.cpu, 1), **extra}


def by_threshold(src, tgt, gold, static, full, thresholds, tag: str = "") -> list[dict]:
    """Two-stage rows of `xlingua mine --rescore` as it runs now: candidates over a first-stage
    margin threshold, scored by the full model's margin over their re-embedded neighbours
    (mining.rescore; sides of one language each here, so no language check)."""
    rows = []
    for t in thresholds:
        with Clock() as clock:
            (s, a, b), plan = two_stage_rows(src, tgt, static, full, t)
        found = set(zip(plan["src"].tolist(), plan["tgt"].tolist()))
        extra = {"candidate_threshold": t, "candidates": len(plan["score"]),
                 "embedded": len(plan["src_rows"]) + len(plan["tgt_rows"]),
                 "gold_in_candidates": round(100 * float(np.mean([p in found for p in gold])), 1)}
        rows.append(f1_row(f"{tag}two stage, candidates over {t:g}", s, a, b, gold, clock, **extra))
    return rows


def compare(src, tgt, gold, static, full, keeps, tag: str = "", thresholds=()) -> list[dict]:
    """One-stage rows for both models, then two-stage rows for every keep and threshold."""
    rows = []
    for name, enc in (("full", full), ("static", static)):
        with Clock() as clock:
            s, a, b = mine_rows(enc.encode(src), enc.encode(tgt))
        rows.append(f1_row(f"{tag}one stage: {name}", s, a, b, gold, clock, embedded=len(src) + len(tgt)))
    for keep in keeps:
        with Clock() as clock:
            s, a, b = mine_rows(static.encode(src), static.encode(tgt))
            n = int(np.ceil(keep * len(src)))
            a, b = a[:n], b[:n]
            ua, ia = np.unique(a, return_inverse=True)
            ub, ib = np.unique(b, return_inverse=True)
            x = full.encode([src[i] for i in ua])
            y = full.encode([tgt[j] for j in ub])
            cos = paired_cosine(x[ia], y[ib])
        found = set(zip(a.tolist(), b.tolist()))
        extra = {"keep": keep, "candidates": n, "embedded": len(ua) + len(ub),
                 "gold_in_candidates": round(100 * float(np.mean([p in found for p in gold])), 1)}
        rows.append(f1_row(f"{tag}two stage, keep {keep:g}", cos, a, b, gold, clock, **extra))
        with Clock() as extra_clock:
            xm, ym = side_knn_means(x, y)
            margin = pair_scores(cos, xm[ia], ym[ib])
        clock.wall += extra_clock.wall
        clock.cpu += extra_clock.cpu
        rows.append(f1_row(f"{tag}two stage, keep {keep:g}, margin among kept", margin, a, b, gold, clock, **extra))
    return rows + by_threshold(src, tgt, gold, static, full, thresholds, tag)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--static", default="static-small")
    ap.add_argument("--full", default="bundled")
    ap.add_argument("--keep", type=float, nargs="*", default=[0.05, 0.1, 0.2, 0.4],
                    help="the earlier rule: the first stage's F x (source sentences) best pairs, scored by cosine")
    ap.add_argument("--candidate-threshold", type=float, nargs="*", default=[],
                    help="the rule of `xlingua mine --rescore`: list pairs over this first-stage margin")
    ap.add_argument("--dev-langs", help="Instead of BUCC: mining sets built from the general corpus's dev slice "
                                        "(comma-separated dev languages), where `--keep` is chosen.")
    ap.add_argument("--distractors", type=int, default=4000)
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args()

    static, full = load_encoder(args.static), load_encoder(args.full)
    static.encode(["warm up"] * 32), full.encode(["warm up"] * 32)
    head = {"static": args.static, "full": args.full, "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}
    rows = []
    if args.dev_langs:
        for lang in args.dev_langs.split(","):
            src, tgt, gold = general_mining_set(lang, args.distractors)
            rows += compare(src, tgt, gold, static, full, args.keep, tag=f"{lang}: ",
                            thresholds=args.candidate_threshold)
            for r in rows[-(2 + 2 * len(args.keep) + len(args.candidate_threshold)):]:
                print(json.dumps(r), flush=True)
            write_json(args.out, {**head, "set": f"general dev + {args.distractors} distractors", "rows": rows})
        return
    data = read_bucc("zh")
    src_ids, tgt_ids = sorted(data.src), sorted(data.tgt)
    row_of_src = {s: i for i, s in enumerate(src_ids)}
    row_of_tgt = {t: j for j, t in enumerate(tgt_ids)}
    gold = {(row_of_src[s], row_of_tgt[t]) for s, t in data.gold}
    rows = compare([data.src[i] for i in src_ids], [data.tgt[i] for i in tgt_ids], gold, static, full, args.keep,
                   thresholds=args.candidate_threshold)
    for r in rows:
        print(json.dumps(r), flush=True)
    write_json(args.out, {**head, "set": "BUCC 2018 zh-en sample", "src": len(src_ids), "tgt": len(tgt_ids),
                          "gold": len(gold), "rows": rows})


if __name__ == "__main__":
    main()
