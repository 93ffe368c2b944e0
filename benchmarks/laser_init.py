"""Distilled LASER students against training time: general-dev retrieval accuracy (20 languages x
200 held-out English sentences, cosine, mean of both directions) of every snapshot
(encoder_stepN.pt) of each run, at the training minutes its train_log.json records for that
step; one picture, one line per run. Runs train one after the other with the machine to
themselves, so wall minutes are CPU minutes / threads alike for every run.

    xlingua laser train --objective distill -o runs/laser/R --layers 1 --hidden 192 --vocab-size 8000 \
        --center-teacher --max-minutes 12 --snapshot-every 100
    xlingua laser train --objective distill -o runs/laser/S --layers 1 --hidden 192 --embed-dim 256 \
        --init static:runs/static/S1/model --center-teacher --max-minutes 12 --snapshot-every 100
    .venv/bin/python benchmarks/laser_init.py --run random=runs/laser/R --run static=runs/laser/S \
        --out runs/laser/init.json --png docs/img/laser-init.png
"""
from __future__ import annotations

import argparse
import json
import re
from pathlib import Path

import numpy as np

from xlingua.data.general import DEV_LANGS
from xlingua.encoders.laser import LaserEncoder
from xlingua.io import write_json
from xlingua.training.config import EvalConfig
from xlingua.training.evaluate import DevEvaluator


def curve(run: Path, evaluator: DevEvaluator) -> list[dict]:
    # the training seconds of every logged step, from log.jsonl (a run still going, or stopped
    # to be resumed, has no train_log.json yet)
    records = [json.loads(line) for line in (run / "log.jsonl").read_text(encoding="utf-8").splitlines() if line]
    seconds = {r["step"]: r["seconds"] for r in records if "seconds" in r}
    points = []
    for snap in sorted(run.glob("encoder_step*.pt"), key=lambda p: int(re.findall(r"\d+", p.name)[-1])):
        step = int(re.findall(r"\d+", snap.name)[-1])
        if step not in seconds:
            continue  # a snapshot between logged steps has no recorded time
        points.append({"step": step, "minutes": round(seconds[step] / 60, 2),
                       "dev": round(evaluator(LaserEncoder(str(snap)))["mean"], 2)})
        print(json.dumps({"run": str(run), **points[-1]}), flush=True)
    return points


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--run", action="append", required=True, help="NAME=RUN_DIR (repeatable)")
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--png", type=Path)
    ap.add_argument("--x", choices=("minutes", "step"), default="minutes",
                    help="the picture's axis: training minutes, or steps (for runs that did not all have the "
                    "machine to themselves, when a step costs the same in each)")
    ap.add_argument("--title", default="Distilled BiLSTM students: embedding start")
    args = ap.parse_args()
    evaluator = DevEvaluator(EvalConfig(l10n_langs=[], tatoeba_langs=[], general_langs=list(DEV_LANGS)))
    curves = {}
    for item in args.run:
        name, _, path = item.partition("=")
        curves[name] = curve(Path(path), evaluator)
        write_json(args.out, {"dev": "general dev, 20 languages, cosine retrieval accuracy", "curves": curves})
    if args.png:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(figsize=(6, 4))
        for name, points in curves.items():
            ax.plot([p[args.x] for p in points], [p["dev"] for p in points], marker="o", ms=3, label=name)
        ax.set_xlabel("training minutes (2 threads, machine to itself)" if args.x == "minutes"
                      else "training steps (128 pairs each)")
        ax.set_ylabel("general dev retrieval accuracy (%)")
        ax.set_title(args.title)
        ax.grid(alpha=0.3)
        ax.legend()
        fig.tight_layout()
        args.png.parent.mkdir(parents=True, exist_ok=True)
        fig.savefig(args.png, dpi=120)
        print(f"wrote {args.png}; best: " + ", ".join(f"{n} {max((p['dev'] for p in c), default=np.nan):.1f}"
                                                   for n, c in curves.items()))


if __name__ == "__main__":
    main()
