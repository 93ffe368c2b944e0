"""The sentence-encoder recipe of `xlingua train`, run by the one training loop (training.loop).

mUSE-style multi-task training: with `sampling: cycle` tasks take turns, one optimizer step
each; with `sampling: proportional` each step draws a task with probability proportional to
weight x number of examples (`weighted`: to weight alone). AdamW with warm-up and a
constant/linear/cosine schedule, gradient accumulation, freezing by parameter name (or the first
rows of a parameter), a student made of some of the start model's layers (`layers`; its teacher
in a distillation task is whatever model the task names), and a PNG plot of the log. Checkpoints hold everything that decides the
rest of the run (weights, heads, optimizer, schedule, sampler positions; the loop adds the RNG
states), so `resume=True` after a kill ends with the same weights as an unbroken run.
Under torchrun every process takes its slice of each global batch (see objectives.distributed).
"""
from __future__ import annotations

import dataclasses
import json
import math
import random
from pathlib import Path
from typing import Callable

import numpy as np
import torch

from xlingua.data.examples import make_sampler
from xlingua.io import atomic_open
from xlingua.objectives import distributed as ddp
from xlingua.training.checkpoint import CHECKPOINT, changed_settings
from xlingua.training.config import EvalConfig, TaskConfig, TrainConfig
from xlingua.training.evaluate import dev_evaluators
from xlingua.training.loop import LOG, LoopSettings, TrainingLoop
from xlingua.training.model import SentenceModel
from xlingua.training.tasks import build_task

__all__ = ["CHECKPOINT", "LOG", "Trainer", "config_changes", "train"]
#: settings a resumed run may change freely (they change nothing already done)
#: the optimizer group of the parameters whose fixed rows stay and whose other rows train at rows_lr
ROWS = "rows"
RESUME_FREE = ("output_dir", "log_every", "checkpoint_every", "max_minutes")
#: settings `--override` may change on resume; the rest (model, tasks, seed, batch...) fix the
#: data order and the weights, so changing them needs a new output directory
RESUME_OVERRIDABLE = ("lr", "weight_decay", "max_steps", "warmup_steps", "schedule", "max_grad_norm",
                      "eval_every", "early_stopping_patience", "eval", "precision")


def config_changes(old: dict, new: dict) -> dict[str, tuple]:
    """{key: (old, new)} for the settings that differ, other than RESUME_FREE. A setting the
    old config lacks (added to xlingua after it was written) ran at its default."""
    return changed_settings(_recorded(old), new, _defaults(TrainConfig), RESUME_FREE)


def _recorded(old: dict) -> dict:
    """`old` with the defaults of settings added to the eval block and to each task after it was written."""
    if isinstance(old.get("eval"), dict):
        old = {**old, "eval": {**_defaults(EvalConfig), **old["eval"]}}
    if isinstance(old.get("tasks"), list):
        old = {**old, "tasks": [{**_defaults(TaskConfig), **t} if isinstance(t, dict) else t for t in old["tasks"]]}
    return old


def _defaults(cls) -> dict:
    out = {}
    for f in dataclasses.fields(cls):
        if f.default is not dataclasses.MISSING:
            out[f.name] = f.default
        elif f.default_factory is not dataclasses.MISSING:
            out[f.name] = f.default_factory()
    return out


def set_seed(seed: int) -> None:
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


def freeze(model: torch.nn.Module, patterns: list[str]) -> int:
    """Stop gradients for parameters whose name contains any pattern; returns how many."""
    count = 0
    for name, p in model.named_parameters():
        if any(pat in name for pat in patterns):
            p.requires_grad_(False)
            count += p.numel()
    if patterns and not count:
        raise ValueError(f"freeze patterns {patterns} match no parameter")
    return count


def freeze_rows(model: torch.nn.Module, rows: dict[str, int]) -> list[str]:
    """Zero the gradient of the first N rows of every trainable parameter whose name contains a
    key of `rows`; returns their names. Such a parameter takes no weight decay either, so AdamW
    leaves those rows bit-identical."""
    names = []
    for name, p in model.named_parameters():
        for pattern, n in rows.items():
            if pattern in name and p.requires_grad:
                p.register_hook(lambda g, n=int(n): torch.cat([torch.zeros_like(g[:n]), g[n:]]))
                names.append(name)
    if rows and not names:
        raise ValueError(f"freeze_rows patterns {sorted(rows)} match no trainable parameter")
    return names


def lr_lambda(config: TrainConfig) -> Callable[[int], float]:
    def f(step: int) -> float:
        if step < config.warmup_steps:
            return (step + 1) / config.warmup_steps
        if config.schedule == "constant":
            return 1.0
        progress = (step - config.warmup_steps) / max(1, config.max_steps - config.warmup_steps)
        if config.schedule == "linear":
            return max(0.0, 1.0 - progress)
        return 0.5 * (1 + math.cos(math.pi * min(1.0, progress)))
    return f


class Trainer(TrainingLoop):
    free = RESUME_FREE
    overridable = RESUME_OVERRIDABLE

    def __init__(self, config: TrainConfig, model: SentenceModel | None = None):
        super().__init__(config.output_dir, LoopSettings(
            max_steps=config.max_steps, max_minutes=config.max_minutes, log_every=config.log_every,
            eval_every=config.eval_every, checkpoint_every=config.checkpoint_every,
            patience=config.early_stopping_patience, select=config.eval.select))
        self.config = config
        ddp.init_from_env()
        set_seed(config.seed)
        self.model = model if model is not None else SentenceModel.load(config.model, config.max_seq_length)
        if config.layers is not None:  # before anything counts or copies the parameters
            self.model.keep_layers(config.layers, where=f"model {config.model}")
        if config.intermediate_size is not None:
            self.model.narrow_feed_forward(config.intermediate_size, where=f"model {config.model}")
        self.model.max_seq_length = config.max_seq_length
        self.model.precision = config.precision
        if config.dropout is not None:
            self.model.set_dropout(config.dropout)
        self.frozen = freeze(self.model, config.freeze)
        self.start_info = {"frozen_params": self.frozen,
                           **({"layers_from": self.model.layers_from} if config.layers is not None else {})}
        self.fixed_rows = freeze_rows(self.model, config.freeze_rows)
        self.tasks = torch.nn.ModuleList([build_task(t, self.model.dim, config.seed) for t in config.tasks])
        for task in self.tasks:
            task.prepare(self.model, self.out)
        self.samplers = [make_sampler(t.examples, t.config.temperature, config.seed, salt=i,
                                     one_language=t.config.one_language)
                         for i, t in enumerate(self.tasks)]
        self.params = [p for p in list(self.model.parameters()) + list(self.tasks.parameters()) if p.requires_grad]
        self.optimizer = torch.optim.AdamW(_param_groups(self.model, self.tasks, config.weight_decay, self.fixed_rows,
                                                         config.rows_lr), lr=config.lr)
        self.scheduler = torch.optim.lr_scheduler.LambdaLR(self.optimizer, lr_lambda(config))
        # their metrics are merged into one dict ("mean" stays the retrieval sets' mean)
        self.evaluators = dev_evaluators(config.eval)
        sizes = np.array([t.config.weight * (len(t.examples) if config.sampling == "proportional" else 1)
                          for t in self.tasks], dtype=np.float64)
        self.task_probs = sizes / sizes.sum()

    # -- one step ---------------------------------------------------------------------------
    def pick_task(self, step: int) -> int:
        if self.config.sampling == "cycle":
            return step % len(self.tasks)
        return int(np.random.default_rng([self.config.seed, 7919, step]).choice(len(self.tasks), p=self.task_probs))

    def train_step(self) -> dict:
        ti = self.pick_task(self.step)
        task = self.tasks[ti]
        world, rank, b = ddp.world_size(), ddp.rank(), self.config.batch_size
        total = 0.0
        for _ in range(self.config.grad_accum):
            idx = self.samplers[ti].next(b * world)[rank * b : (rank + 1) * b]
            loss = task.loss(self.model, [task.examples[i] for i in idx], idx) / self.config.grad_accum
            loss.backward()
            total += float(loss.detach())
        ddp.average_gradients(self.params)
        if self.config.max_grad_norm:
            torch.nn.utils.clip_grad_norm_(self.params, self.config.max_grad_norm)
        self.optimizer.step()
        self.scheduler.step()
        self.optimizer.zero_grad(set_to_none=True)
        self.step += 1
        return {"task": task.name, "loss": total, "lr": self.scheduler.get_last_lr()[0]}

    # -- what the loop checkpoints ----------------------------------------------------------
    def identity(self) -> dict:
        return self.config.to_dict()

    def defaults(self) -> dict:
        return _defaults(TrainConfig)

    def upgrade(self, state: dict) -> dict:
        if "config" in state:
            state["config"] = _recorded(state["config"])
        return state

    def state_dict(self) -> dict:
        return {"model": self.model.state_dict(), "tasks": self.tasks.state_dict(),
                "optimizer": self.optimizer.state_dict(), "scheduler": self.scheduler.state_dict(),
                "samplers": [s.state_dict() for s in self.samplers]}

    def load_state_dict(self, state: dict, changes: dict) -> None:
        self.model.load_state_dict(state["model"])
        self.tasks.load_state_dict(state["tasks"])
        self.optimizer.load_state_dict(state["optimizer"])
        self.scheduler.load_state_dict(state["scheduler"])
        if "lr" in changes or "weight_decay" in changes:  # the optimizer state holds the old ones
            factor = lr_lambda(self.config)(self.scheduler.last_epoch)
            for group in self.optimizer.param_groups:
                group["initial_lr"] = self.config.rows_lr if group.get("name") == ROWS else self.config.lr
                group["lr"] = group["initial_lr"] * factor
                if group["weight_decay"]:
                    group["weight_decay"] = self.config.weight_decay
            self.scheduler.base_lrs = [g["initial_lr"] for g in self.optimizer.param_groups]
        for s, st in zip(self.samplers, state["samplers"]):
            s.load_state_dict(st)

    def save_best(self) -> None:
        self.model.save(self.out / "best")

    def train(self, resume: bool = False, on_step: Callable[[int], None] | None = None,
              show_progress: bool = True, override=()) -> Path:
        self.model.train()
        self.run(resume=resume, on_step=on_step, show_progress=show_progress, override=override)
        final = self.out / "final"
        if ddp.rank() == 0:
            self.model.save(final)
            plot_log(self.out / LOG, self.out / "training.png", self.select_key())
        return final


def train(config: TrainConfig, resume: bool = False, show_progress: bool = True, override=()) -> Path:
    return Trainer(config).train(resume=resume, show_progress=show_progress, override=override)


def _param_groups(model, tasks, weight_decay: float, fixed_rows=(), rows_lr: float = 0.0) -> list[dict]:
    """Decayed, undecayed and (with rows_lr) the parameters with fixed rows at their own rate."""
    decay, no_decay, rows = [], [], []
    for module in (model, tasks):
        for name, p in module.named_parameters():
            if not p.requires_grad:
                continue
            if rows_lr and module is model and name in fixed_rows:
                rows.append(p)
            elif p.ndim < 2 or "LayerNorm" in name or (module is model and name in fixed_rows):
                no_decay.append(p)
            else:
                decay.append(p)
    groups = [{"params": decay, "weight_decay": weight_decay}, {"params": no_decay, "weight_decay": 0.0}]
    if rows:  # frozen rows get zero gradients, so AdamW leaves them as they are at any rate
        groups.append({"params": rows, "weight_decay": 0.0, "lr": rows_lr, "name": ROWS})
    return groups


def plot_log(log: Path, png: Path, select: str = "mean") -> Path | None:
    """Loss per task (moving average) and dev metrics against steps, the one that picks the best
    step (`select`) in bold."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    records = [json.loads(l) for l in log.read_text(encoding="utf-8").splitlines() if l]
    losses: dict[str, list] = {}
    evals: dict[str, list] = {}
    for r in records:
        if "loss" in r:
            losses.setdefault(r["task"], []).append((r["step"], r["loss"]))
        if "eval" in r:
            for k, v in r["eval"].items():
                evals.setdefault(k, []).append((r["step"], v))
    if not losses and not evals:
        return None
    legend_columns = 1 + len(evals) // 13  # many dev sets: a legend in columns beside the plot
    fig, axes = plt.subplots(1, 2, figsize=(10.5 + legend_columns * 1.5, 4.5))
    for name, pts in losses.items():
        steps, vals = zip(*pts)
        trailing = [float(np.mean(vals[max(0, i - 4) : i + 1])) for i in range(len(vals))]
        axes[0].plot(steps, trailing, label=name)
    axes[0].set(xlabel="step", ylabel="loss (mean of the last 5 logs)", title="training loss")
    axes[0].legend()
    for name, pts in evals.items():
        steps, vals = zip(*pts)
        style = dict(color="black", linewidth=2.5, zorder=3) if name == select else dict(linewidth=1)
        axes[1].plot(steps, vals, marker="o", label=name, **style)
    axes[1].set(xlabel="step", ylabel="dev figure x100 (accuracy, F1, Pearson)", title="dev evaluation")
    if evals:  # beside the plot: many dev sets would otherwise cover the curves
        axes[1].legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1), ncol=legend_columns)
    fig.tight_layout()
    with atomic_open(png, "wb") as f:
        fig.savefig(f, format="png", dpi=100)
    plt.close(fig)
    return png
