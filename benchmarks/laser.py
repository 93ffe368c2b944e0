"""Tatoeba similarity-search accuracy (and optionally BUCC zh-en F1) of one or more encoders.

    .venv/bin/python benchmarks/laser.py --model laser:/work/runs/laser/L1 --model laser:/work/runs/laser/L3

Tatoeba (Artetxe & Schwenk 2019): for each xxx-eng pair, nearest neighbour by cosine in both
directions; accuracy = mean of the two directions (LASER reports 100 - this as error).
Languages: those in the LASER training data (deu nld fra por rus ces pol) and unseen languages
of the same families (Germanic afr dan swe, Romance glg oci ast, Slavic ukr bul slk hrv).
BUCC: ratio margin (k=4) best candidate in both directions, F1 at the best threshold on gold.
The evaluation package had no Tatoeba/BUCC task when this was written, so these are small
functions here; similarity code comes from xlingua.similarity.
"""
from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

from xlingua.encoders.loading import load_encoder
from xlingua.paths import benchmarks_dir
from xlingua.similarity import cosine_matrix, margin_matrix

SEEN = ["deu", "nld", "fra", "por", "rus", "ces", "pol"]
UNSEEN = ["afr", "dan", "swe", "glg", "oci", "ast", "ukr", "bul", "slk", "hrv"]


def read_lines(path: Path, limit: int | None) -> list[str]:
    lines = path.read_text(encoding="utf-8").rstrip("\n").split("\n")
    return lines[:limit] if limit else lines


def tatoeba_accuracy(x: np.ndarray, y: np.ndarray) -> float:
    """Mean over both directions of the share of rows whose cosine nearest neighbour is their pair."""
    sim = cosine_matrix(x, y)
    gold = np.arange(len(x))
    return float(((sim.argmax(1) == gold).mean() + (sim.argmax(0) == gold).mean()) / 2)


def bucc_f1(zh_ids, zh_vecs, en_ids, en_vecs, gold: set[tuple[str, str]]) -> dict:
    m = margin_matrix(zh_vecs, en_vecs, k=4, margin="ratio")
    fwd, bwd = m.argmax(1), m.argmax(0)
    cands = {}
    for i, j in enumerate(fwd):
        cands[(i, int(j))] = m[i, j]
    for j, i in enumerate(bwd):
        cands[(int(i), j)] = m[i, j]
    scored = sorted(((s, (zh_ids[i], en_ids[j])) for (i, j), s in cands.items()), reverse=True)
    best = {"f1": 0.0, "precision": 0.0, "recall": 0.0, "threshold": None}
    tp = 0
    for n, (s, pair) in enumerate(scored, 1):
        tp += pair in gold
        p, r = tp / n, tp / len(gold)
        f1 = 2 * p * r / (p + r) if tp else 0.0
        if f1 > best["f1"]:
            best = {"f1": f1, "precision": p, "recall": r, "threshold": float(s)}
    return best


def read_bucc(root: Path):
    def ids_texts(path):
        rows = [line.split("\t", 1) for line in path.read_text(encoding="utf-8").rstrip("\n").split("\n")]
        return [r[0] for r in rows], [r[1] for r in rows]

    zh_ids, zh = ids_texts(root / "zh-en.dev.zh")
    en_ids, en = ids_texts(root / "zh-en.dev.en")
    gold = {tuple(line.split("\t")) for line in (root / "zh-en.dev.gold").read_text().split("\n") if line}
    return zh_ids, zh, en_ids, en, gold


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", action="append", required=True)
    ap.add_argument("--langs", default=",".join(SEEN + UNSEEN))
    ap.add_argument("--limit", type=int, default=None, help="first N pairs of each Tatoeba language")
    ap.add_argument("--bucc", action="store_true")
    ap.add_argument("--data", default=None)
    ap.add_argument("--out", default=None)
    args = ap.parse_args(argv)
    root = benchmarks_dir(args.data)
    langs = args.langs.split(",")
    results = {}
    for spec in args.model:
        enc = load_encoder(spec)
        row, t0 = {}, time.time()
        for lang in langs:
            xx = read_lines(root / "tatoeba" / f"tatoeba.{lang}-eng.{lang}", args.limit)
            en = read_lines(root / "tatoeba" / f"tatoeba.{lang}-eng.eng", args.limit)
            row[lang] = tatoeba_accuracy(enc.encode(xx), enc.encode(en))
        row["seen:avg"] = float(np.mean([row[l] for l in langs if l in SEEN] or [np.nan]))
        row["unseen:avg"] = float(np.mean([row[l] for l in langs if l in UNSEEN] or [np.nan]))
        row["tatoeba_seconds"] = round(time.time() - t0, 1)
        if args.bucc:
            zh_ids, zh, en_ids, en, gold = read_bucc(root / "bucc2018")
            row["bucc_zh_en"] = bucc_f1(zh_ids, enc.encode(zh), en_ids, enc.encode(en), gold)
        results[spec] = row
        print(spec, json.dumps(row), flush=True)
    cols = langs + ["seen:avg", "unseen:avg"]
    print("| model | " + " | ".join(cols) + " |")
    print("|---" * (len(cols) + 1) + "|")
    for spec, row in results.items():
        print(f"| {spec} | " + " | ".join(f"{100 * row[c]:.1f}" for c in cols) + " |")
    if args.out:
        Path(args.out).write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
