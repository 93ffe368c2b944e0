"""Seconds per training step with and without dropout, on the same batches, side by side.

    .venv/bin/python benchmarks/train_dropout.py --lowres --steps 12 --rounds 2
    .venv/bin/python benchmarks/train_dropout.py configs/train_own_model.yaml

Builds the recipe's trainer (`--lowres`: the one `xlingua extend --lowres` runs; else a training
config), draws its first `--steps` batches once (task and examples, as training would), then
replays them under each variant in turn, `--rounds` times, so every variant sees the same text
and load changes hit all alike. A step here is the forward, the loss and the backward (no
optimizer step, so the weights stay the same for every variant). Variants: bf16 with the model's
own dropout (torch's fused attention), bf16 without dropout on the fused attention, bf16 without
dropout on eager attention (what training picks then: training.model), and fp32 with the model's
dropout.
"""
from __future__ import annotations

import argparse
import json
import tempfile
import time

from torch import nn

from xlingua.bench.embed import _machine
from xlingua.training.trainer import Trainer

VARIANTS = {  # name: (precision, dropout off, eager attention allowed)
    "bf16, dropout on (fused attention)": ("bf16", False, True),
    "bf16, no dropout, fused attention": ("bf16", True, False),
    "bf16, no dropout (eager attention)": ("bf16", True, True),
    "fp32, dropout on": ("fp32", False, True),
}


def trainer_for(args, tmp: str) -> Trainer:
    overrides = {"output_dir": tmp, "eval_every": 0, "checkpoint_every": 0}
    if args.lowres:
        from xlingua.training.extend.run import ExtendOptions, build_config, check, trainable_spec

        opts = ExtendOptions(langs=[], out=tmp, lowres=True)
        langs, pair_files = check(opts)
        spec = trainable_spec(opts.model)
        cfg = build_config(opts, langs, pair_files, spec, spec, None)
        for key, value in overrides.items():
            setattr(cfg, key, value)
    else:
        from xlingua.training.config import load_config

        cfg = load_config(args.config, overrides)
    return Trainer(cfg)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("config", nargs="?", help="a training config (YAML); or give --lowres")
    ap.add_argument("--lowres", action="store_true", help="the recipe of `xlingua extend --lowres`")
    ap.add_argument("--steps", type=int, default=12, help="batches drawn and replayed under every variant")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--json")
    args = ap.parse_args()
    if bool(args.config) == args.lowres:
        ap.error("give a training config or --lowres")
    with tempfile.TemporaryDirectory() as tmp:
        trainer = trainer_for(args, tmp)
        model = trainer.model
        model.train()
        own = {m: m.p for m in model.model.modules() if isinstance(m, nn.Dropout)}
        eager_rule = model._eager_attention
        draws = []
        for step in range(args.steps):
            ti = trainer.pick_task(step)
            draws.append((ti, trainer.samplers[ti].next(trainer.config.batch_size)))
        wall = {name: 0.0 for name in VARIANTS}
        cpu = dict(wall)
        for _ in range(args.rounds):
            for name, (precision, off, eager) in VARIANTS.items():
                model.precision = precision
                for module, p in own.items():
                    module.p = 0.0 if off else p
                model._eager_attention = eager_rule if eager else (lambda: False)
                t0, c0 = time.perf_counter(), time.process_time()
                for ti, idx in draws:
                    task = trainer.tasks[ti]
                    task.loss(model, [task.examples[i] for i in idx], idx).backward()
                    trainer.optimizer.zero_grad(set_to_none=True)
                wall[name] += time.perf_counter() - t0
                cpu[name] += time.process_time() - c0
    steps = args.steps * args.rounds
    base = wall["bf16, dropout on (fused attention)"]
    machine = _machine()
    print(f"\n{'--lowres' if args.lowres else args.config}: batch {trainer.config.batch_size}, "
          f"{args.steps} batches x {args.rounds} rounds; {machine}")
    print(f"{'variant':38s} {'s/step':>8s} {'CPU s/step':>11s} {'speed-up':>9s}")
    for name in VARIANTS:
        print(f"{name:38s} {wall[name] / steps:8.2f} {cpu[name] / steps:11.2f} {base / wall[name]:8.2f}x")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"args": vars(args), "machine": machine, "steps": steps,
                       "s_per_step": {k: v / steps for k, v in wall.items()},
                       "cpu_s_per_step": {k: v / steps for k, v in cpu.items()}}, f, indent=2)


if __name__ == "__main__":
    main()
