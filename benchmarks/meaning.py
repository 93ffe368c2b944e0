"""Meaning embeddings vs their base encoder on WMT20 QE (test20) and STS 2017.

    .venv/bin/python benchmarks/meaning.py --base bundled \
        --model full=/work/runs/meaning/bundled --model no_LM=/work/runs/meaning/bundled_noLM ...

QE: Pearson of cos(original, translation) with z_mean, for each of the 6 pairs (the paper's
Table 2 setting: no QE training, just similarity). STS17: Pearson of cosine with the gold score
for each track (Tables 4 and 5). Base vectors are computed once and cached
(xlingua.meaning.data.embed_cached); meaning vectors are MLP_M of them.

The evaluation package had no QE/STS task when this was written, so the two metrics are small
functions here.
"""
from __future__ import annotations

import argparse
import csv
import json
import sys
import time
from pathlib import Path

import numpy as np
from scipy.stats import pearsonr

from xlingua.encoders.loading import load_encoder
from xlingua.encoders.meaning import MeaningEncoder
from xlingua.meaning.data import embed_cached
from xlingua.paths import benchmarks_dir

QE_PAIRS = ["en-de", "en-zh", "et-en", "ne-en", "ro-en", "si-en"]
# STS 2017 as distributed with the extended cross-lingual pairs (sts17_extended): the six original
# SemEval files plus en-de/fr-en/it-en/nl-en made from en-en.
STS_MONO = ["ar-ar", "en-en", "es-es"]
STS_CROSS = ["en-ar", "en-de", "en-tr", "es-en", "fr-en", "it-en", "nl-en"]


def read_qe(pair: str, root: Path):
    path = root / "mlqe" / pair / f"test20.{pair.replace('-', '')}.df.short.tsv"
    csv.field_size_limit(sys.maxsize)
    with open(path, encoding="utf-8", newline="") as f:
        rows = list(csv.DictReader(f, delimiter="\t", quoting=csv.QUOTE_NONE))
    return [r["original"] for r in rows], [r["translation"] for r in rows], np.array([float(r["z_mean"]) for r in rows])


def read_sts(pair: str, root: Path):
    path = root / "sts17_extended" / f"STS.{pair}.txt"
    a, b, gold = [], [], []
    for lineno, line in enumerate(path.read_text(encoding="utf-8").rstrip("\n").split("\n"), 1):
        parts = line.split("\t")
        if len(parts) != 3:
            raise ValueError(f"{path}:{lineno}: expected s1<TAB>s2<TAB>score, got {len(parts)} fields")
        a.append(parts[0])
        b.append(parts[1])
        gold.append(float(parts[2]))
    return a, b, np.array(gold)


def cos_rows(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    a = a / np.maximum(np.linalg.norm(a, axis=1, keepdims=True), 1e-12)
    b = b / np.maximum(np.linalg.norm(b, axis=1, keepdims=True), 1e-12)
    return (a * b).sum(1)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--base", default="bundled")
    ap.add_argument("--model", action="append", default=[], help="NAME=PATH of a meaning model trained on --base")
    ap.add_argument("--tasks", default="qe,sts")
    ap.add_argument("--data", default=None, help="benchmarks root (default ../shared/benchmarks)")
    ap.add_argument("--out", default=None, help="write the results as JSON here")
    args = ap.parse_args(argv)
    root = benchmarks_dir(args.data)
    base = load_encoder(args.base)
    heads = {"base": None}
    for item in args.model:
        name, path = item.split("=", 1)
        heads[name] = MeaningEncoder(base, path)

    sets = []
    tasks = args.tasks.split(",")
    if "qe" in tasks:
        sets += [("qe", p, *read_qe(p, root)) for p in QE_PAIRS]
    if "sts" in tasks:
        sets += [("sts", p, *read_sts(p, root)) for p in STS_MONO + STS_CROSS]
    results = {name: {} for name in heads}
    done = {}

    def embedded(task):
        # Each distinct text of a task once (STS pairs share sentences), in first-seen order.
        if task not in done:
            texts = list(dict.fromkeys(t for k, _, a, b, _ in sets if k == task for t in a + b))
            done[task] = (embed_cached(base, texts), {t: i for i, t in enumerate(texts)})
        return done[task]

    t0 = time.time()
    for task, label, a, b, gold in sets:
        vecs, row = embedded(task)
        va, vb = vecs[[row[t] for t in a]], vecs[[row[t] for t in b]]
        for name, head in heads.items():
            xa, xb = (va, vb) if head is None else (head.project(va), head.project(vb))
            results[name][f"{task}:{label}"] = float(pearsonr(cos_rows(xa, xb), gold)[0])
    groups = {"qe:avg": [f"qe:{p}" for p in QE_PAIRS], "sts-mono:avg": [f"sts:{p}" for p in STS_MONO],
              "sts-cross:avg": [f"sts:{p}" for p in STS_CROSS]}
    for name in results:
        for key, members in groups.items():
            vals = [results[name][m] for m in members if m in results[name]]
            if vals:
                results[name][key] = float(np.mean(vals))
    cols = list(results["base"])
    print("| model | " + " | ".join(cols) + " |")
    print("|---" * (len(cols) + 1) + "|")
    for name, row in results.items():
        print(f"| {args.base} {name} | " + " | ".join(f"{row[c]:.3f}" for c in cols) + " |")
    print(f"({time.time() - t0:.0f}s)")
    if args.out:
        Path(args.out).write_text(json.dumps({"base": args.base, "results": results}, indent=1))


if __name__ == "__main__":
    main()
