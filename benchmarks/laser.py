"""Tatoeba similarity-search accuracy on the LASER training languages and on unseen languages
of the same families (and optionally BUCC zh-en F1), for one or more encoders, through the
evaluation package's `tatoeba` and `bucc` tasks.

    .venv/bin/python benchmarks/laser.py --model laser:runs/laser/L1 --model laser:runs/laser/L3 --limit 200

Tatoeba (Artetxe & Schwenk 2019): cosine nearest neighbour in both directions; a language's
accuracy is the mean of xx->en and en->xx (LASER reports 100 - this as error). "seen" are the
languages of the LASER training data (deu nld fra por rus ces pol); "unseen" are Germanic afr
dan swe, Romance glg oci ast, Slavic ukr bul slk hrv. BUCC: the `bucc` task (ratio margin,
F1 at the best threshold and cross-validated), on all of the sample split (no --limit).
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from xlingua.encoders.loading import load_encoder
from xlingua.evaluation.runner import run

SEEN = ["deu", "nld", "fra", "por", "rus", "ces", "pol"]
UNSEEN = ["afr", "dan", "swe", "glg", "oci", "ast", "ukr", "bul", "slk", "hrv"]


def tatoeba_row(result: dict, langs: list[str]) -> dict:
    """Per-language accuracy x100 (mean of both cosine directions) and the seen/unseen means."""
    rows = next(iter(result["tasks"].values()))["rows"]
    row = {l: (rows[l]["cosine xx-en"] + rows[l]["cosine en-xx"]) / 2 for l in langs}
    for group, members in (("seen", SEEN), ("unseen", UNSEEN)):
        row[f"{group}:avg"] = float(np.mean([row[l] for l in langs if l in members] or [np.nan]))
    return row


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", action="append", required=True)
    ap.add_argument("--langs", default=",".join(SEEN + UNSEEN))
    ap.add_argument("--limit", type=int, default=None, help="first N pairs of each Tatoeba language")
    ap.add_argument("--bucc", action="store_true", help="also BUCC 2018 zh-en (all of the sample split)")
    ap.add_argument("--data", default=None, help="benchmarks root (default ../shared/benchmarks)")
    ap.add_argument("--out", default=None, help="write all results as JSON here")
    args = ap.parse_args(argv)
    langs = args.langs.split(",")
    quiet = dict(data_dir=args.data, show_progress=False, echo=lambda *_: None)
    results = {}
    for spec in args.model:
        enc = load_encoder(spec)
        tat = run(enc, [f"tatoeba:{','.join(langs)}"], model=spec, limit=args.limit, **quiet)
        row = tatoeba_row(tat, langs)
        row["tatoeba_seconds"] = round(next(iter(tat["tasks"].values()))["seconds"], 1)
        if args.bucc:
            summary = next(iter(run(enc, ["bucc"], model=spec, **quiet)["tasks"].values()))["summary"]
            row.update({f"bucc {k}": v for k, v in summary.items()})
        results[spec] = row
        print(spec, json.dumps(row), flush=True)
    cols = langs + ["seen:avg", "unseen:avg"] + (["bucc zh-en f1 best", "bucc zh-en f1 cv"] if args.bucc else [])
    print("| model | " + " | ".join(cols) + " |")
    print("|---" * (len(cols) + 1) + "|")
    for spec, row in results.items():
        print(f"| {spec} | " + " | ".join(f"{row[c]:.1f}" for c in cols) + " |")
    if args.out:
        Path(args.out).write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
