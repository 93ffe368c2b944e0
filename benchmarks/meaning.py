"""Meaning embeddings vs their base encoder on WMT20 QE (test20) and STS 2017 (the paper's
Tables 2, 4, 5), through the evaluation package's `qe` and `sts` tasks.

    .venv/bin/python benchmarks/meaning.py --base bundled \
        --model full=runs/meaning/bundled --model no_LM=runs/meaning/bundled_noLM \
        --out runs/meaning/results_bundled.json

QE: Pearson of cos(original, translation) with z_mean on each of the 6 pairs (no QE training).
STS: Pearson x100 on STS2017-extended (monolingual ar-ar, en-en, es-es; cross-lingual en-ar,
en-de, en-tr, es-en, fr-en, it-en, nl-en). Base vectors come from the shared embedding cache,
so each text is embedded once for the base and all its meaning models.
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path

from xlingua.encoders.cache import CachedEncoder
from xlingua.encoders.loading import load_encoder
from xlingua.encoders.meaning import MeaningEncoder
from xlingua.evaluation.runner import run

QE_PAIRS = ["en-de", "en-zh", "et-en", "ne-en", "ro-en", "si-en"]
STS_SUMMARY = ["sts17_extended monolingual pearson", "sts17_extended cross-lingual pearson"]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--base", default="bundled")
    ap.add_argument("--model", action="append", default=[], help="NAME=DIR of a meaning model trained on --base")
    ap.add_argument("--tasks", default="qe sts:sts17_extended",
                    help="space-separated task specs, e.g. 'qe:en-de,en-zh sts:sts17_extended'")
    ap.add_argument("--data", default=None, help="benchmarks root (default ../shared/benchmarks)")
    ap.add_argument("--out", default=None, help="write all results as JSON here")
    args = ap.parse_args(argv)
    base = CachedEncoder(load_encoder(args.base))
    encoders = {"base": base}
    for item in args.model:
        name, path = item.split("=", 1)
        encoders[name] = MeaningEncoder(base, path)
    tasks = args.tasks.split()
    results = {}
    for name, enc in encoders.items():
        spec = args.base if name == "base" else f"{args.base}+meaning:{dict(m.split('=', 1) for m in args.model)[name]}"
        results[name] = run(enc, tasks, model=spec, data_dir=args.data, show_progress=False, echo=lambda *_: None)
        if args.out:
            Path(args.out).write_text(json.dumps(results, indent=1))
    header = ["model"]
    qe_pairs = [p for p in QE_PAIRS if any(p in v["rows"] for k, v in results["base"]["tasks"].items() if k.startswith("qe"))]
    if qe_pairs:
        header += [f"QE {p}" for p in qe_pairs] + ["QE avg"]
    if any(t.startswith("sts") for t in tasks):
        header += ["STS17 mono", "STS17 cross"]
    print("| " + " | ".join(header) + " |")
    print("|---" * len(header) + "|")
    for name, res in results.items():
        cells = [f"{args.base} {name}"]
        qe = next((v for k, v in res["tasks"].items() if k.startswith("qe")), None)
        if qe:
            cells += [f"{qe['rows'][p]['pearson']:.3f}" for p in qe_pairs] + [f"**{qe['summary']['pearson']:.3f}**"]
        sts = next((v for k, v in res["tasks"].items() if k.startswith("sts")), None)
        if sts:
            cells += [f"{sts['summary'][k]:.1f}" for k in STS_SUMMARY]
        print("| " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
