"""Dev-only studies of the own-model recipe: what each task contributes, and how far to mix the
trained weights with the start model's. Only dev data is read: the recipe's dev retrieval sets,
stsb_multi_mt dev (Spearman, per language) and WMT20 QE dev (Pearson).

    # each variant (a subset of the recipe's tasks) trained for the same number of steps
    .venv/bin/python benchmarks/own_model_dev.py ablation configs/train_own_model.yaml \
        --steps 240 --out runs/own_model_ablation
    # WiSE-FT mixes start + alpha * (trained - start), alpha chosen on dev
    .venv/bin/python benchmarks/own_model_dev.py mix configs/train_own_model.yaml \
        runs/train/own_model/best --alphas 0.25,0.5,0.75,1 --out runs/own_model_mix
    # an `xlingua extend` run: its directory stands for the config (the recipe its log records),
    # mixed with the model it started from (new pieces included), held to today's default
    .venv/bin/python benchmarks/own_model_dev.py mix runs/extend/tta-v2 runs/extend/tta-v2/best \
        --start bundled --alphas 0.5,0.75,1 --out runs/extend/tta-v2-mix

    # other trained models held to the recipe at equal steps (an ablation row, e.g. the recipe
    # trained for 600 steps of 32 as every reproduction run is)
    .venv/bin/python benchmarks/own_model_dev.py ablation configs/train_own_model.yaml \
        --steps 600 --variants distill+rank+sts --out runs/reproduce/recipe_dev
    .venv/bin/python benchmarks/own_model_dev.py score configs/train_own_model.yaml \
        --models runs/reproduce/{dueam,onealigner,muse}/*/final --against distill+rank+sts \
        --out runs/reproduce/recipe_dev

`mix` chooses the largest alpha whose dev figures all hold the start model's level, the gate of
the evaluation table mirrored on dev: retrieval mean, stsb_multi_mt dev mean and QE dev not
below the start's, and no stsb_multi_mt dev language more than 2 points below it. It writes
OUT/alpha{A} for every alpha and OUT/dev.json; `xlingua ship OUT/alpha{A}` ships the choice.
`--start` names the model the dev level is held to (default: the one training started from).
Runs, mixes and scores already in OUT are reused, so an interrupted study continues.
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path

from xlingua.encoders.cpu import native_bf16
from xlingua.encoders.loading import load_encoder
from xlingua.encoders.e5 import model_dir
from xlingua.evaluation import runner
from xlingua.io import write_json
from xlingua.training.config import config_from_dict, load_config
from xlingua.training.evaluate import DevEvaluator
from xlingua.training.mix import mix_weights
from xlingua.training.trainer import train

VARIANTS = ("distill", "rank", "distill+rank", "distill+rank+sts")
KEYS = ("retrieval_mean", "stsb_multi_mt_dev", "qe_dev")
STS_LANG_DROP = 2.0  # points, as the evaluation gate's per-language Tatoeba rule


def trained_spec(path) -> str:
    """A trained directory's spec: bf16 where the CPU multiplies bf16 in hardware, else fp32 torch
    (emulated bf16 is several times slower than fp32 and no closer to the shipped paths)."""
    return f"bf16:{path}" if native_bf16() else str(path)


def dev_scores(spec: str, config, limit: int) -> dict:
    """Dev retrieval (the recipe's eval sets), stsb_multi_mt dev and QE dev of one model."""
    enc = load_encoder(spec)
    scores = DevEvaluator(config.eval)(enc)  # the training run's own dev evaluation
    scores["retrieval_mean"] = scores.pop("mean")
    res = runner.run(enc, ["sts:stsb_multi_mt", "qe"], limit=limit or None, options=["qe.split=dev"],
                     show_progress=False, echo=lambda *_: None)
    sts = res["tasks"]["sts:stsb_multi_mt"]
    scores["stsb_multi_mt_dev"] = sts["summary"]["stsb_multi_mt spearman"]
    for name, row in sts["rows"].items():
        scores[f"sts_{name.split('.')[-1]}"] = row["spearman"]
    scores["qe_dev"] = res["tasks"]["qe"]["summary"]["pearson"]
    scores["dev_limit"] = limit
    return scores


def shortfalls(row: dict, start: dict) -> list[str]:
    """The dev figures where `row` falls below the start's level (empty: it holds)."""
    short = [f"{k} {row[k]:.3f} < {start[k]:.3f}" for k in KEYS if row[k] < start[k]]
    return short + [f"{k} {row[k]:.1f} < {start[k]:.1f} - {STS_LANG_DROP:g}" for k in start
                    if k.startswith("sts_") and row[k] < start[k] - STS_LANG_DROP]


def holds_start(row: dict, start: dict) -> bool:
    return not shortfalls(row, start)


def _table(path: Path) -> dict:
    return json.loads(path.read_text()) if path.exists() else {}


def beats(row: dict, against: dict) -> bool:
    """Above `against` on every dev figure (retrieval mean, stsb_multi_mt dev, QE dev)."""
    return all(row[k] > against[k] for k in KEYS)


def _print(table: dict, against: str | None = None) -> None:
    extra = f" | above {against} on all three |" if against else " |"
    print("| model | " + " | ".join(KEYS) + " | worst stsb_multi_mt dev language vs start | below the start" + extra)
    print("|---|" + "---:|" * (len(KEYS) + 1) + "---|" + ("---|" if against else ""))
    start = table["start"]
    for name, row in table.items():
        if not isinstance(row, dict):
            continue
        worst = min((row[k] - start[k], k[4:]) for k in start if k.startswith("sts_"))
        short = "; ".join(shortfalls(row, start)) or "none (holds)"
        vs = "" if not against else (" | -" if name == against else f" | {'yes' if beats(row, table[against]) else 'no'}")
        print(f"| {name} | " + " | ".join(f"{row[k]:.3f}" for k in KEYS) + f" | {worst[0]:+.1f} ({worst[1]}) | {short}{vs} |")


def ablation(args, table_path: Path, table: dict) -> None:
    out = Path(args.out)
    for variant in args.variants.split(","):
        if variant in table and table[variant]["steps"] == args.steps:
            continue
        tasks = variant.split("+")
        overrides = {"output_dir": str(out / variant), "max_steps": args.steps,
                     "warmup_steps": max(1, args.steps // 10), "eval_every": 0, "checkpoint_every": 40}
        cfg = load_config(args.config, overrides)
        unknown = set(tasks) - {t.name for t in cfg.tasks}
        if unknown:
            raise SystemExit(f"{args.config}: no task(s) {sorted(unknown)}; it has {[t.name for t in cfg.tasks]}")
        cfg.tasks = [t for t in cfg.tasks if t.name in tasks]
        final = train(cfg, resume=True)
        table[variant] = {"steps": args.steps, **dev_scores(trained_spec(final), cfg, args.limit)}
        write_json(table_path, table)


def score(args, table_path: Path, table: dict, config) -> None:
    """Score each of `args.models` (model directories, read in bf16) on the dev figures; a
    model's name in the table is its directory (the run's name for a run's `final`)."""
    for model in args.models:
        path = Path(model)
        name = str(path.parent if path.name == "final" else path)
        if name not in table:
            table[name] = {"model": model, **dev_scores(trained_spec(path), config, args.limit)}
            write_json(table_path, table)


def recipe(path: str):
    """The training config of a YAML file, or the one a run directory's log.jsonl recorded."""
    run = Path(path)
    if not run.is_dir():
        return load_config(run)
    log = run / "log.jsonl"
    first = {}
    if log.exists():
        with open(log, encoding="utf-8") as f:
            first = json.loads(f.readline() or "{}")
    if "config" not in first:
        raise SystemExit(f"{log}: no recorded config on its first line; give the run's YAML instead")
    return config_from_dict(first["config"], where=str(log))


def start_dir(model: str) -> Path:
    """The weights training started from: a model directory as it is, a shipped name's directory."""
    name = model.split(":")[0]
    return Path(name) if Path(name).is_dir() else model_dir(name)


def mix(args, table_path: Path, table: dict, config) -> float | None:
    """Score every alpha's mix on dev; the chosen alpha (also recorded in OUT/dev.json)."""
    base = start_dir(config.model)
    for alpha in (float(a) for a in args.alphas.split(",")):
        name = f"alpha{alpha:g}"
        if name not in table:
            mixed = Path(args.out) / name
            if not mixed.exists():
                mix_weights(args.model, base, alpha, mixed)
            table[name] = {"alpha": alpha, **dev_scores(trained_spec(mixed), config, args.limit)}
            write_json(table_path, table)
    held = [row["alpha"] for row in table.values() if "alpha" in row and holds_start(row, table["start"])]
    chosen = max(held) if held else None
    write_json(table_path, {**table, "chosen_alpha": chosen})
    return chosen


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("study", choices=("ablation", "mix", "score"))
    ap.add_argument("config", help="a training YAML, or a run directory (the recipe its log.jsonl recorded)")
    ap.add_argument("model", nargs="?", help="mix: the trained model directory")
    ap.add_argument("--steps", type=int, default=240, help="ablation: optimizer steps per variant")
    ap.add_argument("--variants", default=",".join(VARIANTS), help="ablation: comma-separated; tasks joined by +")
    ap.add_argument("--alphas", default="0.25,0.5,0.75,1", help="mix: weights of the trained model")
    ap.add_argument("--limit", type=int, default=0, help="first N pairs per STS / QE dev set (0 = all; "
                    "stsb_multi_mt dev is ordered by genre, so a prefix is captions only)")
    ap.add_argument("--models", nargs="+", default=[], help="score: model directories (e.g. runs' final/)")
    ap.add_argument("--against", help="score: a row of OUT/dev.json to hold them to (e.g. distill+rank+sts)")
    ap.add_argument("--start", help="the model whose dev level must hold (default: the one training started from)")
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    if args.study == "mix" and not args.model:
        ap.error("mix needs the trained model directory")
    if args.study == "score" and not args.models:
        ap.error("score needs --models")
    config = recipe(args.config)
    table_path = Path(args.out) / "dev.json"
    start = args.start or config.model.split(":")[0]
    table = {k: v for k, v in _table(table_path).items()
             if isinstance(v, dict) and v.get("dev_limit") == args.limit and (k != "start" or v.get("model") == start)}
    if args.study == "score" and args.against and args.against not in table:
        raise SystemExit(f"{table_path}: no row {args.against!r} to hold the models to; "
                         f"it has {sorted(k for k, v in table.items() if isinstance(v, dict))}")
    if "start" not in table:  # scored on the default path, as every trained model below
        table["start"] = {"steps": 0, "model": start, **dev_scores(start, config, args.limit)}
        write_json(table_path, table)
    if args.study == "ablation":
        ablation(args, table_path, table)
        _print(table)
    elif args.study == "score":
        score(args, table_path, table, config)
        _print(table, args.against)
    else:
        chosen = mix(args, table_path, table, config)
        _print(table)
        print(f"chosen alpha (largest holding the start's dev level): {chosen}")


if __name__ == "__main__":
    main()
