"""Tatoeba similarity-search accuracy (and optionally BUCC zh-en F1) of LASER encoders beside
any other encoder, through the evaluation package's `tatoeba` and `bucc` tasks.

Two tables:

  default   the LASER training languages and unseen languages of the same families (the
            translation objective's comparison), cosine scoring:
    .venv/bin/python benchmarks/laser.py --model laser:runs/laser/L1 --limit 200

  --goals   XTREME's Tatoeba-36 (its languages present in the data), full sets, ratio-margin scoring, split into the languages in
            and not in the student's training data (read from its train_log.json, or the
            manifest of a shipped model), BUCC zh-en F1 and the model file size:
    .venv/bin/python benchmarks/laser.py --goals --model laser:runs/laser/shipped --model bundled --bucc

Tatoeba (Artetxe & Schwenk 2019): nearest neighbour in both directions; a language's accuracy
is the mean of xx->en and en->xx (LASER reports 100 - this as error). BUCC: the `bucc` task
(ratio margin, F1 at the best threshold and cross-validated), all of the sample split.
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from xlingua.data.benchmarks import tatoeba_langs
from xlingua.encoders.loading import load_encoder
from xlingua.evaluation.runner import run
from xlingua.evaluation.tasks.tatoeba import XTREME36, subset_langs

SEEN = ["deu", "nld", "fra", "por", "rus", "ces", "pol"]
UNSEEN = ["afr", "dan", "swe", "glg", "oci", "ast", "ukr", "bul", "slk", "hrv"]
# Tatoeba's ISO 639-3 file codes of XTREME-36 -> the training corpora's codes (general README)
CORPUS_CODE = {"afr": "af", "ara": "ar", "ben": "bn", "bul": "bg", "cmn": "zh", "deu": "de", "ell": "el",
               "est": "et", "eus": "eu", "fin": "fi", "fra": "fr", "heb": "he", "hin": "hi", "hun": "hu",
               "ind": "id", "ita": "it", "jav": "jv", "jpn": "ja", "kat": "ka", "kaz": "kk", "kor": "ko",
               "mal": "ml", "mar": "mr", "nld": "nl", "pes": "fa", "por": "pt", "rus": "ru", "spa": "es",
               "swh": "sw", "tam": "ta", "tel": "te", "tgl": "fil", "tha": "th", "tur": "tr", "urd": "ur",
               "vie": "vi"}
assert set(CORPUS_CODE) == set(XTREME36)


def tatoeba_row(result: dict, langs: list[str], scoring: str = "cosine", groups=None) -> dict:
    """Per-language accuracy x100 (mean of both directions) and each group's mean."""
    rows = next(iter(result["tasks"].values()))["rows"]
    row = {l: (rows[l][f"{scoring} xx-en"] + rows[l][f"{scoring} en-xx"]) / 2 for l in langs if l in rows}
    for group, members in (groups or {"seen": SEEN, "unseen": UNSEEN}).items():
        row[f"{group}:avg"] = float(np.mean([row[l] for l in row if l in members] or [np.nan]))
        row[f"{group}:n"] = sum(l in members for l in row)
    return row


def training_languages(encoder) -> set[str] | None:
    """The corpus codes a LASER student was trained on: its run's train_log.json, else the
    manifest of a shipped model; None when unknown (not a distilled LASER encoder)."""
    path = getattr(encoder, "path", None)
    if path is not None and (Path(path) / "train_log.json").exists():
        data = json.loads((Path(path) / "train_log.json").read_text(encoding="utf-8")).get("data")
        if isinstance(data, dict) and data.get("pairs_per_language"):
            return set(data["pairs_per_language"])
    manifest = getattr(encoder, "manifest", None)
    if manifest and manifest.get("source", {}).get("languages"):
        return set(manifest["source"]["languages"])
    return None


def model_megabytes(encoder) -> float | None:
    weights = getattr(encoder, "weights", None)
    if weights is None:
        return None
    # the weights and the vocabulary (spm.model, or a static encoder's pieces)
    return (Path(weights).stat().st_size + sum((Path(encoder.path) / f).stat().st_size
                                               for f in encoder.vocab_files)) / 1e6


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", action="append", required=True)
    ap.add_argument("--goals", action="store_true", help="Tatoeba-36, margin, seen/unseen by training data, MB")
    ap.add_argument("--seen-from", default=None, help="--goals: the laser spec whose training languages define "
                    "seen/unseen for every row (default: each model's own; the first student's for others)")
    ap.add_argument("--langs", default=None, help="Tatoeba languages (default: the translation comparison's, "
                    "or XTREME-36 with --goals)")
    ap.add_argument("--scoring", default=None, help="cosine | margin | inbatch (default cosine; margin with --goals)")
    ap.add_argument("--limit", type=int, default=None, help="first N pairs of each Tatoeba language")
    ap.add_argument("--bucc", action="store_true", help="also BUCC 2018 zh-en (all of the sample split)")
    ap.add_argument("--data", default=None, help="benchmarks root (default ../shared/benchmarks)")
    ap.add_argument("--out", default=None, help="write all results as JSON here")
    ap.add_argument("--cached", action="store_true", help="embed through the shared embedding cache (reuses "
                    "vectors other commands stored, e.g. the bundled model's; tatoeba_seconds then times the cache)")
    args = ap.parse_args(argv)
    if args.langs:
        langs = args.langs.split(",")
    elif args.goals:  # the XTREME-36 languages the data holds (the tatoeba task's own subset)
        langs = subset_langs("tatoeba36", tatoeba_langs(args.data))[0]
    else:
        langs = SEEN + UNSEEN
    scoring = args.scoring or ("margin" if args.goals else "cosine")
    quiet = dict(data_dir=args.data, show_progress=False, echo=lambda *_: None)
    encoders = {spec: load_encoder(spec) for spec in args.model}
    fixed = training_languages(load_encoder(args.seen_from)) if args.seen_from else None
    fallback = next((t for t in map(training_languages, encoders.values()) if t), None)
    results = {}
    for spec, enc in encoders.items():
        groups = None
        if args.goals:
            trained = fixed or training_languages(enc) or fallback or set()
            groups = {"seen": [l for l in langs if CORPUS_CODE.get(l) in trained],
                      "unseen": [l for l in langs if CORPUS_CODE.get(l) not in trained], "all": langs}
        if args.cached:
            from xlingua.encoders.cache import CachedEncoder

            enc = CachedEncoder(enc)  # training languages and size were read from the encoder itself
        tat = run(enc, [f"tatoeba:{','.join(langs)}"], model=spec, limit=args.limit, **quiet)
        row = tatoeba_row(tat, langs, scoring, groups)
        row["tatoeba_seconds"] = round(next(iter(tat["tasks"].values()))["seconds"], 1)
        if args.bucc:
            summary = next(iter(run(enc, ["bucc"], model=spec, **quiet)["tasks"].values()))["summary"]
            row.update({f"bucc {k}": v for k, v in summary.items()})
        row["MB"] = model_megabytes(encoders[spec])
        results[spec] = row
        print(spec, json.dumps(row), flush=True)
    bucc_cols = ["bucc zh-en f1 best", "bucc zh-en f1 cv"] if args.bucc else []
    if args.goals:
        cols = ["seen:avg", "seen:n", "unseen:avg", "unseen:n", "all:avg"] + bucc_cols + ["MB"]
        print(f"Tatoeba, the {len(langs)} XTREME-36 languages in the data ({scoring}, "
              f"{'first %d pairs' % args.limit if args.limit else 'full sets'})")
    else:
        cols = langs + ["seen:avg", "unseen:avg"] + bucc_cols
    print("| model | " + " | ".join(cols) + " |")
    print("|---" * (len(cols) + 1) + "|")
    for spec, row in results.items():
        cells = ["-" if row.get(c) is None or (isinstance(row[c], float) and np.isnan(row[c]))
                 else str(row[c]) if c.endswith(":n") else f"{row[c]:.1f}" for c in cols]
        print(f"| {spec} | " + " | ".join(cells) + " |")
    if args.out:
        Path(args.out).write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
