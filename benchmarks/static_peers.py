"""Static encoders side by side on the general corpus's dev split (20 languages x 200 held-out
English sentences; xx<->en retrieval accuracy, cosine, mean of both directions): model2vec's
distillation of the teacher (`model2vec.distill`, PCA + SIF, no training), xlingua's start
(the teacher's piece vectors, PCA + SIF: step 0 of a `static train` run), xlingua's trained
model, and the teacher itself; with sentences per second on the same dev sentences.

    .venv/bin/pip install "model2vec[distill]"
    .venv/bin/python benchmarks/static_peers.py --teacher xlingua-small --run runs/static/S1 \
        --out runs/static/peers.json

Rows already in --out for the same settings are kept (a rerun computes only the missing ones).
"""
from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

from xlingua.data.general import DEV_LANGS
from xlingua.training.config import EvalConfig
from xlingua.training.evaluate import DevEvaluator


def timed_dev(name: str, encoder, evaluator: DevEvaluator, texts: list[str]) -> dict:
    metrics = evaluator(encoder)
    t0, c0 = time.perf_counter(), time.process_time()
    encoder.encode(texts)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    return {"row": name, "dev": round(metrics["mean"], 2), "sentences_per_s": round(len(texts) / wall, 1),
            "cpu_s": round(cpu, 2), "wall_s": round(wall, 2),
            "languages": {k.removeprefix("general_"): round(v, 1) for k, v in metrics.items() if k != "mean"}}


def model2vec_row(teacher: str, dims: int):
    from model2vec.distill import distill

    from xlingua.encoders.e5 import model_dir

    t0 = time.perf_counter()
    model = distill(model_name=str(model_dir(teacher)), pca_dims=dims)
    return model, round(time.perf_counter() - t0, 1)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--teacher", default="xlingua-small")
    ap.add_argument("--run", action="append", default=[], help="A `static train` run directory (repeatable).")
    ap.add_argument("--dims", type=int, default=256, help="model2vec's PCA size.")
    ap.add_argument("--no-teacher", action="store_true", help="Leave the (slow) teacher row out.")
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args()

    from xlingua.encoders.loading import load_encoder
    from xlingua.encoders.static import StaticEncoder
    from xlingua.io import write_json

    evaluator = DevEvaluator(EvalConfig(l10n_langs=[], tatoeba_langs=[], general_langs=list(DEV_LANGS)))
    texts = [t for xs, ys in evaluator.sets.values() for t in xs + ys]
    done = {r["row"]: r for r in json.loads(args.out.read_text())["rows"]} if args.out.exists() else {}
    rows = []

    def add(row):
        rows.append(row)
        print(json.dumps({k: v for k, v in row.items() if k != "languages"}), flush=True)
        write_json(args.out, {"teacher": args.teacher, "dev_sentences": len(texts),
                              "rows": rows + [r for k, r in done.items() if k not in {x["row"] for x in rows}]})

    name = f"model2vec.distill({args.teacher}, pca {args.dims})"
    if name in done:
        add(done[name])
    else:
        model, seconds = model2vec_row(args.teacher, args.dims)
        add({**timed_dev(name, model, evaluator, texts), "build_s": seconds})
    for run in args.run:
        log = [json.loads(l) for l in (Path(run) / "log.jsonl").read_text().splitlines()]
        # the training loop's dev records, or those of a run by the trainer before it
        devs = [r["eval"]["dev"] if "eval" in r else r["dev"] for r in log if "eval" in r or "dev" in r]
        add({"row": f"xlingua start ({run}, step 0)", "dev": round(devs[0], 3)})
        name = f"xlingua trained ({run})"
        add(done.get(name) or timed_dev(name, StaticEncoder(Path(run) / "model"), evaluator, texts))
    if not args.no_teacher:
        name = f"teacher {args.teacher}"
        add(done.get(name) or timed_dev(name, load_encoder(args.teacher), evaluator, texts))


if __name__ == "__main__":
    main()
