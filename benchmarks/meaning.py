"""Meaning embeddings, the token-level scorers beside them and a supervised baseline, on WMT20
QE and STS 2017 (the paper's Tables 2, 4, 5), through the evaluation package's `qe` and `sts`
tasks. One command gives the whole table:

    python benchmarks/meaning.py --base bundled --model chosen=runs/meaning/chosen \
        --model no_LM=runs/meaning/chosen_noLM --out runs/meaning/table.json

Rows: the base encoder with every scorer (cosine; OneAligner's in-batch normalized cosine;
BERTScore F over its content token embeddings; in-batch normalized BERTScore, OneAligner's own
similarity; `regressor`, a ridge regressor on (u, v, |u-v|, u*v) fitted on the QE train split,
its penalty chosen on dev), then each meaning model with the sentence-vector scorers. Columns:
QE dev average (where models are chosen), QE test20 per pair and average (Pearson), STS2017-
extended monolingual and cross-lingual Pearson x100 with the same scorer (the regressor is a
QE model: no STS). `--snapshots NAME=RUN_DIR` adds every model_epochN.pt of a run, for the
epoch curves of the STS analysis. Base vectors come from the shared embedding cache, so each
text is embedded once for the base and all its meaning models. With --out, a rerun keeps the
rows already in the file for the same base and model and computes only the missing ones
(--recompute: all of them), so a killed run resumes.
"""
from __future__ import annotations

import argparse
import json
import re
from pathlib import Path

from xlingua.encoders.cache import CachedEncoder
from xlingua.encoders.loading import load_encoder
from xlingua.encoders.meaning import MeaningEncoder
from xlingua.evaluation.runner import run
from xlingua.io import write_json

QE_PAIRS = ["en-de", "en-zh", "et-en", "ne-en", "ro-en", "si-en"]
STS_SUMMARY = ["sts17_extended monolingual pearson", "sts17_extended cross-lingual pearson"]
TOKEN_SCORERS = ("bertscore", "bertscore-inbatch")
ALL_SCORERS = "cosine,inbatch,bertscore,bertscore-inbatch,regressor"


def snapshots(run_dir: str) -> list[tuple[int, Path]]:
    """(epoch, path) of every model_epochN.pt in a training run directory, by epoch."""
    found = [(int(m.group(1)), p) for p in Path(run_dir).glob("model_epoch*.pt")
             if (m := re.fullmatch(r"model_epoch(\d+)\.pt", p.name))]
    if not found:
        raise FileNotFoundError(f"no model_epochN.pt in {run_dir} (train with --snapshot-every)")
    return sorted(found)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--base", default="bundled")
    ap.add_argument("--model", action="append", default=[], help="NAME=PATH of a meaning model (run directory or .pt)")
    ap.add_argument("--snapshots", action="append", default=[], help="NAME=RUN_DIR: every model_epochN.pt of a run")
    ap.add_argument("--scorers", default=ALL_SCORERS,
                    help=f"comma-separated, of {ALL_SCORERS}; meaning models get those on sentence vectors")
    ap.add_argument("--alpha", type=float, default=0.5, help="in-batch normalization weight (OneAligner)")
    ap.add_argument("--layer", default="", help="token layer for BERTScore (default: the encoder's)")
    ap.add_argument("--no-sts", action="store_true", help="QE only")
    ap.add_argument("--data", default=None, help="benchmarks root (default ../shared/benchmarks)")
    ap.add_argument("--limit", type=int, default=None, help="at most this many pairs per set (quick runs)")
    ap.add_argument("--out", default=None, help="write all results as JSON here (after every row); a rerun "
                    "keeps the rows already there for the same base and model")
    ap.add_argument("--recompute", action="store_true", help="compute every row again, even those in --out")
    args = ap.parse_args(argv)

    scorers = [s.strip() for s in args.scorers.split(",") if s.strip()]
    base = CachedEncoder(load_encoder(args.base))
    models = [("base", args.base, base)]
    for item in args.model:
        name, path = item.split("=", 1)
        models.append((name, f"{args.base}+meaning:{path}", MeaningEncoder(base, path)))
    for item in args.snapshots:
        name, run_dir = item.split("=", 1)
        for epoch, path in snapshots(run_dir):
            models.append((f"{name}@{epoch}", f"{args.base}+meaning:{path}", MeaningEncoder(base, str(path))))

    settings = {"alpha": args.alpha, "layer": args.layer, "limit": args.limit, "data": args.data}
    results = previous_rows(args.out)  # rows not asked for this time stay in the file
    done = {} if args.recompute else {k: v for k, v in results.items() if v.get("benchmark") == settings}
    rows = []
    for name, spec, enc in models:
        for scorer in scorers:
            if name != "base" and scorer in TOKEN_SCORERS:
                continue  # meaning vectors have no tokens
            key = f"{name} {scorer}"
            if done.get(key, {}).get("model") == spec and (scorer == "regressor" or args.no_sts
                                                            or "sts:sts17_extended" in done[key]["tasks"]):
                results[key] = done[key]
                rows.append((name, scorer, done[key]))
                continue
            opts = [f"qe.scorer={scorer}", f"qe.alpha={args.alpha}", f"qe.layer={args.layer}"]
            kw = dict(model=spec, data_dir=args.data, limit=args.limit, show_progress=False, echo=lambda *_: None)
            dev = run(enc, ["qe"], options=[*opts, "qe.split=dev"], **kw)
            tasks = ["qe"]
            if scorer != "regressor" and not args.no_sts:
                tasks.append("sts:sts17_extended")
                opts += [f"sts.scorer={scorer}", f"sts.alpha={args.alpha}", f"sts.layer={args.layer}"]
            res = run(enc, tasks, options=opts, **kw)
            res["tasks"]["qe dev"] = dev["tasks"]["qe"]
            res["benchmark"] = settings
            results[key] = res
            rows.append((name, scorer, res))
            if args.out:
                write_json(args.out, results)
    print_table(args.base, rows, with_sts=not args.no_sts)


def previous_rows(out: str | None) -> dict:
    """Finished rows of an earlier run written to `out` (none if there is no such file)."""
    if not out or not Path(out).exists():
        return {}
    data = json.loads(Path(out).read_text(encoding="utf-8"))
    return {k: v for k, v in data.items() if v.get("complete") and "qe dev" in v.get("tasks", {})}


def print_table(base: str, rows, with_sts: bool = True) -> None:
    header = ["model", "scorer", "QE dev avg", *[f"QE {p}" for p in QE_PAIRS], "QE test20 avg"]
    if with_sts:
        header += ["STS17 mono", "STS17 cross"]
    print("| " + " | ".join(header) + " |")
    print("|---" * len(header) + "|")
    for name, scorer, res in rows:
        qe, dev = res["tasks"]["qe"], res["tasks"]["qe dev"]
        cells = [f"{base} {name}", scorer, f"{dev['summary']['pearson']:.3f}"]
        cells += [f"{qe['rows'][p]['pearson']:.3f}" if p in qe["rows"] else "" for p in QE_PAIRS]
        cells.append(f"**{qe['summary']['pearson']:.3f}**")
        if with_sts:
            sts = res["tasks"].get("sts:sts17_extended")
            cells += [f"{sts['summary'][k]:.1f}" for k in STS_SUMMARY] if sts else ["-", "-"]
        print("| " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
