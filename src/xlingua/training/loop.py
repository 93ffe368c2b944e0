"""The one training loop. A recipe (the sentence-encoder trainer, LASER, the meaning MLPs)
subclasses TrainingLoop and gives it a step of training, the state only it knows and its dev
evaluators; the loop owns the rest: checkpoints and exact resume (the rule of
training.checkpoint), a progress bar, OUTPUT/log.jsonl, a time budget summed over resumes,
snapshots, keeping the dev-best model and early stopping.

Under torchrun every process runs the loop; only rank 0 writes, and every process stops at the
same step (objectives.distributed)."""
from __future__ import annotations

import json
import math
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np
import torch

from xlingua.io import disk_full, save_torch
from xlingua.objectives import distributed as ddp
from xlingua.training.checkpoint import (CHECKPOINT, resume_changes, rng_state, set_rng_state,
                                         truncate_log)

LOG = "log.jsonl"


@dataclass
class LoopSettings:
    max_steps: int
    max_minutes: float = 0.0      # training time summed over resumes (0 = none)
    log_every: int = 1
    eval_every: int = 0           # steps between dev evaluations (0 = none)
    eval_at_start: bool = True    # also score the start model (step 0)
    eval_at_end: bool = False     # also score the last step when eval_every does not fall on it
    checkpoint_every: int = 0
    checkpoint_at_end: bool = False
    snapshot_every: int = 0
    patience: int = 0             # evaluations without improvement before stopping (0 = never)
    select: str = ""              # the dev metric that picks the best step ("" = first evaluator's main score)
    label: str = "train"          # the progress bar's


class TrainingLoop:
    """A recipe's training: subclasses give `train_step`, `identity`, `state_dict` /
    `load_state_dict` and their evaluators; `run` does the rest (the module docstring)."""

    free: tuple = ()           # settings a resumed run may change freely
    overridable: tuple = ()    # settings it may change when named in `override`
    legacy_files: tuple = ()   # older checkpoint names, read when CHECKPOINT is absent

    def __init__(self, out, settings: LoopSettings, evaluators=()):
        self.out = Path(out)
        self.out.mkdir(parents=True, exist_ok=True)
        self.settings = settings
        self.evaluators = list(evaluators)
        self.step = 0
        self.best = -math.inf  # the selected dev score, higher is better (negated where lower is)
        self.best_step = 0
        self.bad_evals = 0
        self.elapsed = 0.0     # training seconds, summed over resumes
        self.start_info: dict = {}  # logged with the settings at step 0

    # -- what a recipe gives (and self.model, what the evaluators score) ---------------------
    def train_step(self) -> dict:
        """One step of training; adds 1 to self.step and returns the fields to log ("loss", ...)."""
        raise NotImplementedError

    def identity(self) -> dict:
        """The settings (and data) a resumed run is compared on."""
        return {}

    def defaults(self) -> dict:
        """The values of settings a checkpoint does not record."""
        return {}

    def state_dict(self) -> dict:
        """Everything besides the loop's own counters that decides the rest of the run."""
        return {}

    def load_state_dict(self, state: dict, changes: dict) -> None:
        pass

    def upgrade(self, state: dict) -> dict:
        """A checkpoint in an older recipe's layout, in today's."""
        return state

    def save_best(self) -> None:
        pass

    def save_snapshot(self) -> None:
        pass

    def on_checkpoint(self) -> None:
        pass

    # -- checkpoints ------------------------------------------------------------------------
    def checkpoint_path(self) -> Path:
        path = self.out / CHECKPOINT
        if not path.exists():
            for name in self.legacy_files:
                if (self.out / name).exists():
                    return self.out / name
        return path

    def read_checkpoint(self) -> dict | None:
        path = self.checkpoint_path()
        return self.upgrade(torch.load(path, map_location="cpu", weights_only=False)) if path.exists() else None

    def save_checkpoint(self) -> None:
        if ddp.rank() == 0:
            save_torch(self.out / CHECKPOINT, {
                "step": self.step, "best": self.best, "best_step": self.best_step, "bad_evals": self.bad_evals,
                "elapsed": self.elapsed, "select": self.select_key(), "config": self.identity(), "rng": rng_state(),
                **self.state_dict()})
            self.on_checkpoint()

    def load_checkpoint(self, override=(), state: dict | None = None) -> bool:
        """Resume from the checkpoint: False when there is none. A changed setting is an error
        naming it unless the rule allows it (training.checkpoint.resume_changes)."""
        state = state if state is not None else self.read_checkpoint()
        if state is None:
            return False
        changes = resume_changes(self.checkpoint_path(), state.get("config"), self.identity(), self.defaults(),
                                 self.free, self.overridable, override, ddp.rank())
        self.load_state_dict(state, changes)
        if "rng" in state:
            set_rng_state(state["rng"])
        self.step, self.best, self.bad_evals = state["step"], state.get("best", -math.inf), state.get("bad_evals", 0)
        self.best_step, self.elapsed = state.get("best_step", 0), state.get("elapsed", 0.0)
        if state.get("select", self.select_key()) != self.select_key():
            # a best score on another metric is no bar for this one: the next evaluation sets it
            self.best, self.best_step, self.bad_evals = -math.inf, 0, 0
        truncate_log(self.out / LOG, self.step)
        return True

    # -- log and dev choice -----------------------------------------------------------------
    def log(self, record: dict) -> None:
        record["time"] = round(time.time(), 1)
        if ddp.rank() == 0:
            try:
                with open(self.out / LOG, "a", encoding="utf-8") as f:
                    f.write(json.dumps(record) + "\n")
            except OSError as exc:  # a full disk names the log, like every other write
                raise disk_full(exc, self.out / LOG) or exc

    def evaluate(self) -> dict[str, float] | None:
        if not self.evaluators:
            return None
        metrics, higher = {}, {}
        for evaluator in self.evaluators:
            found = evaluator(self.model)
            metrics.update(found)
            higher.update(dict.fromkeys(found, getattr(evaluator, "greater_is_better", True)))
        key = self.select_key()
        if key not in metrics:
            raise ValueError(f"the dev metric {key!r} to select on is not among the dev metrics {sorted(metrics)}")
        score = metrics[key] if higher[key] else -metrics[key]
        if score > self.best + 1e-6:  # a tie keeps the earlier step
            self.best, self.best_step, self.bad_evals = score, self.step, 0
            if ddp.rank() == 0:
                self.save_best()
        else:
            self.bad_evals += 1
        self.log({"step": self.step, "eval": metrics})
        return metrics

    def select_key(self) -> str:
        """The dev metric that picks the best step ("" where there are no evaluators)."""
        return self.settings.select or (self.evaluators[0].main_score if self.evaluators else "")

    def out_of_time(self) -> bool:
        if not self.settings.max_minutes:
            return False
        # every process stops at the same step, or the collectives would wait forever
        return ddp.all_reduce_mean(float(self.elapsed >= self.settings.max_minutes * 60)) > 0

    def patience_spent(self) -> bool:
        return bool(self.settings.patience) and self.bad_evals >= self.settings.patience

    # -- the loop ---------------------------------------------------------------------------
    def run(self, resume: bool = True, on_step: Callable[[int], None] | None = None, show_progress: bool = True,
            override=(), state: dict | None = None) -> None:
        """Train to `max_steps`, the time budget or early stopping, resuming from OUTPUT's
        checkpoint unless resume=False; `override` names the settings a resume may change."""
        s = self.settings
        if resume:
            if not self.load_checkpoint(override, state) and ddp.rank() == 0:
                print(f"no checkpoint in {self.out} to resume from: starting at step 0", file=sys.stderr)
        elif ddp.rank() == 0:
            (self.out / LOG).unlink(missing_ok=True)
        if self.step == 0:
            self.log({"step": 0, "config": self.identity(), "world_size": ddp.world_size(), **self.start_info})
            if s.eval_every and s.eval_at_start:
                self.evaluate()
        progress = _progress(s.label, s.max_steps, self.step) if show_progress and ddp.rank() == 0 else None
        window, t0, done0, elapsed0 = [], time.perf_counter(), self.step, self.elapsed
        try:
            while self.step < s.max_steps and not self.patience_spent():
                self.elapsed = elapsed0 + time.perf_counter() - t0
                if self.out_of_time():
                    if s.eval_every and self.step % s.eval_every and self.step > done0:
                        self.evaluate()  # the dev choice sees the last steps too
                    self.save_checkpoint()  # a rerun with a larger budget goes on from here
                    self.log({"step": self.step, "time_limit": True, "minutes": round(self.elapsed / 60, 2)})
                    break
                fields = self.train_step()
                self.elapsed = elapsed0 + time.perf_counter() - t0
                window.append(fields["loss"])
                if self.step % s.log_every == 0 or self.step == s.max_steps:
                    self._log_step(fields, (self.step - done0) / (time.perf_counter() - t0), show_progress)
                if progress:
                    progress[0].update(progress[1], completed=self.step, loss=f"{np.mean(window[-20:]):.4f}")
                if on_step:
                    on_step(self.step)
                if s.eval_every and (self.step % s.eval_every == 0 or s.eval_at_end and self.step == s.max_steps):
                    self.evaluate()
                if s.snapshot_every and self.step % s.snapshot_every == 0 and ddp.rank() == 0:
                    self.save_snapshot()
                if s.checkpoint_every and self.step % s.checkpoint_every == 0:
                    self.save_checkpoint()
                if self.patience_spent():
                    self.log({"step": self.step, "early_stop": True})
        finally:
            if progress:
                progress[0].stop()
        if s.checkpoint_at_end:
            self.save_checkpoint()

    def _log_step(self, fields: dict, rate: float, show_progress: bool) -> None:
        record = {"step": self.step, **fields, "loss": ddp.all_reduce_mean(fields["loss"]), "steps_per_s": rate,
                  "seconds": round(self.elapsed, 1)}
        self.log(record)
        if show_progress and ddp.rank() == 0 and not sys.stdout.isatty():  # no bar drawn: keep logs readable
            print(json.dumps(record), flush=True)


def _progress(label: str, total: int, start: int):
    from xlingua.progress import progress_bar

    return progress_bar(f"[bold]{label}[/]", total, completed=start, rate="step",
                        extra="loss {task.fields[loss]}", loss="-")
