"""Seconds per training step of a recipe in fp32 and under bfloat16 autocast, side by side.

    .venv/bin/python benchmarks/train_precision.py configs/train_own_model.yaml --steps 6 --rounds 3

Builds the recipe's trainer (its tasks, data and teacher vectors: computed once and cached), then
alternates rounds of `--steps` real optimizer steps in fp32 and in bf16, so load changes hit both.
Every step is the recipe's own (the tasks take turns as in training). Also reports how close the
bf16 forward is to fp32: cosine of pooled embeddings of the dev sentences, same weights.
"""
from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time

import torch

from xlingua.training.config import load_config
from xlingua.training.trainer import Trainer


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("config")
    ap.add_argument("--steps", type=int, default=6, help="steps per round (a multiple of the task count is fair)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--json")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        cfg = load_config(args.config, {"output_dir": tmp, "eval_every": 0, "checkpoint_every": 0})
        trainer = Trainer(cfg)
        trainer.model.train()
        times = {"fp32": {}, "bf16": {}}
        cpu = {"fp32": 0.0, "bf16": 0.0}
        for _ in range(args.rounds):
            for precision in ("fp32", "bf16"):
                trainer.model.precision = precision
                for _ in range(args.steps):
                    t0, c0 = time.perf_counter(), time.process_time()
                    name = trainer.train_step()["task"]
                    times[precision].setdefault(name, []).append(time.perf_counter() - t0)
                    cpu[precision] += time.process_time() - c0
        texts = [t for xs, ys in list(trainer.evaluators[0].sets.values())[:4] for t in xs[:32] + ys[:32]]
        trainer.model.eval()
        with torch.no_grad():
            trainer.model.precision = "fp32"
            a = trainer.model(texts)["embedding"]
            trainer.model.precision = "bf16"
            b = trainer.model(texts)["embedding"]
        cos = torch.nn.functional.cosine_similarity(a, b)
    print(f"\n{args.config}: batch {cfg.batch_size}, max length {cfg.max_seq_length}, "
          f"{args.rounds} rounds x {args.steps} steps per precision, torch threads {torch.get_num_threads()}")
    print(f"{'task':12s} {'fp32 s/step':>12s} {'bf16 s/step':>12s} {'speed-up':>9s}")
    result = {}
    for name in times["fp32"]:
        f, b_ = statistics.median(times["fp32"][name]), statistics.median(times["bf16"][name])
        result[name] = {"fp32_s": f, "bf16_s": b_}
        print(f"{name:12s} {f:12.3f} {b_:12.3f} {f / b_:8.2f}x")
    tf, tb = (sum(sum(v) for v in times[p].values()) for p in ("fp32", "bf16"))
    print(f"{'all steps':12s} {tf:11.1f}s {tb:11.1f}s {tf / tb:8.2f}x   (CPU s: fp32 {cpu['fp32']:.1f}, bf16 {cpu['bf16']:.1f})")
    print(f"bf16 vs fp32 forward on {len(texts)} dev sentences: cosine mean {cos.mean():.5f}, min {cos.min():.5f}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"args": vars(args), "per_task": result, "total_s": {"fp32": tf, "bf16": tb}, "cpu_s": cpu,
                       "cosine_mean": float(cos.mean()), "cosine_min": float(cos.min())}, f, indent=2)


if __name__ == "__main__":
    main()
