"""What a checkpoint holds and which settings a resumed run may change: one rule for every recipe.

A recipe declares the settings a rerun may change freely (budgets, logging: they change nothing
already done) and those it may change when asked (`override`, e.g. the learning rate); any other
change would mix two runs in one directory and is refused, naming the settings. A setting a
checkpoint does not record ran at the recipe's default for it (or at the value older code used)."""
from __future__ import annotations

import json
import random
import sys
from pathlib import Path

import numpy as np
import torch

from xlingua.data.text import InputError
from xlingua.io import write_text

CHECKPOINT = "checkpoint.pt"


def changed_settings(old: dict, new: dict, defaults: dict, free=()) -> dict[str, tuple]:
    """{key: (old, new)} for the settings that differ, other than `free`; `old` lacking a key
    means it ran at defaults[key]."""
    old = {**defaults, **old}
    return {k: (old.get(k), new.get(k)) for k in sorted(set(old) | set(new))
            if k not in free and old.get(k) != new.get(k)}


def resume_changes(path: Path, old: dict | None, new: dict, defaults: dict, free=(), overridable=(),
                   override=(), rank: int = 0) -> dict[str, tuple]:
    """The changes a resume applies, or InputError naming those it may not. `old` None: a
    checkpoint that recorded no settings (nothing to compare; only `override` is applied)."""
    if old is None:
        unrecorded = [k for k in override if k not in overridable]
        if unrecorded:
            raise InputError(f"{path}: predates config checks, so it did not record {', '.join(unrecorded)} "
                             "and they cannot be overridden; resume without --override, or train into a new "
                             "output directory")
        if rank == 0:
            print(f"note: {path} predates config checks: resuming without comparing settings", file=sys.stderr)
        return {k: (None, new.get(k)) for k in override}
    changes = changed_settings(old, new, defaults, free)
    refused = [k for k in changes if k not in override]
    if refused:
        said = "; ".join(f"{k}: {changes[k][0]!r} -> {changes[k][1]!r}" for k in refused)
        hint = (f"pass --override {','.join(refused)} to apply them" if set(refused) <= set(overridable)
                else "train into a new output directory")
        raise InputError(f"{path}: the settings differ from the run being resumed ({said}); resume with the "
                         f"original settings, or {hint}")
    fixed = [k for k in changes if k not in overridable]
    if fixed:
        raise InputError(f"{path}: {', '.join(fixed)} cannot change when resuming (they fix the data order "
                         "and the weights so far); train into a new output directory")
    return changes


def rng_state() -> dict:
    return {"torch": torch.get_rng_state(), "numpy": np.random.get_state(), "python": random.getstate()}


def set_rng_state(state: dict) -> None:
    torch.set_rng_state(state["torch"])
    np.random.set_state(state["numpy"])
    random.setstate(state["python"])


def truncate_log(path: Path, step: int) -> None:
    """Drop log lines written after the checkpoint we resume from (they will be redone)."""
    if not path.exists():
        return
    keep = [l for l in path.read_text(encoding="utf-8").splitlines() if l and json.loads(l)["step"] <= step]
    write_text(path, "".join(l + "\n" for l in keep))


def read_log(path: Path) -> list[dict]:
    if not path.exists():
        return []
    return [json.loads(l) for l in path.read_text(encoding="utf-8").splitlines() if l]


def seed_log(path: Path, records: list[dict]) -> None:
    """Start the log with the records a checkpoint of an older layout kept itself (kept as it is
    when the log exists)."""
    if not path.exists():
        write_text(path, "".join(json.dumps(r) + "\n" for r in records))
