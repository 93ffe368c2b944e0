"""OneAligner's scale (an inverse temperature: the factor its in-batch normalised BERTScore is
multiplied by before the softmax), chosen on dev data only: short de-en runs from e5-small with the settings of
`reproduce.py onealigner` (batch 32, max length 64, lr 3e-5, bf16 with --precision bf16), one per
scale, each read on the general corpus's dev slices (20 languages, 200 pairs each) by
retrieval with in-batch normalised BERTScore (the paper's similarity) and by pooled cosine.

    python benchmarks/onealigner_dev.py --scales 5 20 --steps 200 --precision bf16

Finished runs are kept (a run directory with `done.json` is read, not retrained); the table goes
to OUT/table.md and OUT/table.json.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import yaml

from xlingua.encoders.loading import load_encoder
from xlingua.evaluation.tasks.tatoeba import token_score_matrices
from xlingua.similarity import cosine_matrix, retrieval_accuracy
from xlingua.training.evaluators import general_dev_pairs

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # run as a script, only benchmarks/ is on the path
    sys.path.insert(0, str(ROOT))

from benchmarks.reproduction.bookkeeping import derive_recipe, in_precision  # noqa: E402
from benchmarks.reproduction.papers import onealigner  # noqa: E402
from benchmarks.reproduction.settings import DEV_LANGS, START  # noqa: E402


def recipe(scale: float, steps: int, precision: str, out: Path) -> dict:
    """reproduce.py's `de` run (one rich pair, de-en) with this scale and `steps` steps."""
    (run,) = [r for r in in_precision(onealigner(), precision).runs if r.name == "de"]
    rec = derive_recipe(run)
    rec.update(max_steps=steps, eval_every=steps, output_dir=str(out))
    rec["tasks"][0]["options"]["scale"] = scale
    return rec


def train(rec: dict, out: Path) -> None:
    if (out / "done.json").exists():
        return
    out.mkdir(parents=True, exist_ok=True)
    (out / "recipe.yaml").write_text(yaml.safe_dump(rec, sort_keys=False), encoding="utf-8")
    resume = ["--resume"] if (out / "checkpoint.pt").exists() else []
    subprocess.run([sys.executable, "-m", "xlingua.cli", "train", str(out / "recipe.yaml"), "-o", str(out), *resume],
                   check=True)


def dev_read(spec: str, langs: list[str], limit: int) -> dict:
    """Mean over the dev languages of the two directions' top-1 accuracy, x100."""
    enc = load_encoder(spec)
    by = {"cosine": [], "bertscore-inbatch": []}
    for lang, (xx, en) in general_dev_pairs(langs, limit=limit).items():
        cos = cosine_matrix(enc.encode(xx), enc.encode(en))
        bs = token_score_matrices(enc.encode_tokens(xx, content_only=True), enc.encode_tokens(en, content_only=True))
        for name, scores in (("cosine", cos), ("bertscore-inbatch", bs["bertscore-inbatch"])):
            by[name].append(float(np.mean(retrieval_accuracy(scores))))
    return {k: float(np.mean(v)) for k, v in by.items()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--scales", type=float, nargs="+", default=[5.0, 20.0])
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--precision", choices=("fp32", "bf16"), default="fp32")
    ap.add_argument("--limit", type=int, default=200, help="Dev pairs per language.")
    ap.add_argument("--out", default="runs/onealigner_dev")
    args = ap.parse_args()
    out = Path(args.out)
    start = START.split(":")[0] + (":bf16" if args.precision == "bf16" else ":torch")
    rows = [{"run": "start", "scale": None, "model": start, **dev_read(start, DEV_LANGS, args.limit)}]
    for t in args.scales:
        run_dir = out / f"scale{t:g}"
        train(recipe(t, args.steps, args.precision, run_dir), run_dir)
        model = f"{'bf16:' if args.precision == 'bf16' else ''}{run_dir / 'final'}"
        rows.append({"run": run_dir.name, "scale": t, "model": model, **dev_read(model, DEV_LANGS, args.limit)})
        print(json.dumps(rows[-1]), flush=True)
    lines = [f"dev: general corpus dev slices, {len(DEV_LANGS)} languages x {args.limit} pairs; "
             f"{args.steps} steps of de-en from {start}", "",
             "| run | scale | in-batch BERTScore | pooled cosine |", "|---|---:|---:|---:|"]
    for r in rows:
        t = "" if r["scale"] is None else f"{r['scale']:g}"
        lines.append(f"| {r['run']} | {t} | {r['bertscore-inbatch']:.2f} | {r['cosine']:.2f} |")
    out.mkdir(parents=True, exist_ok=True)
    for name, text in (("table.md", "\n".join(lines) + "\n"), ("table.json", json.dumps(rows, indent=1))):
        tmp = out / (name + ".partial")
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, out / name)
    print("\n".join(lines))


if __name__ == "__main__":
    main()
