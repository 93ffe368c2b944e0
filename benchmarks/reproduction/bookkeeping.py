"""The bookkeeping of runs: recipes derived from configs/, equal compute checked, each run placed
and its state read (done, resume, new, blocked), done.json written, evaluation results and job
markers recognised."""

import copy
import datetime as _dt
import hashlib
import json
import shlex
from dataclasses import dataclass, replace
from pathlib import Path

import yaml

from xlingua.io import write_json

from .comparison import Comparison, Eval, Job, PlanError, Run
from .settings import CONFIGS, DONE, EVAL_SPECS, RECIPE, VARIED


def now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")


# -- recipes and equal compute ----------------------------------------------------------------
def derive_recipe(run: Run, configs: Path = CONFIGS) -> dict:
    """The base recipe with the run's overrides; early stopping and time budgets off (they
    would end runs at unequal steps). `output_dir` is set when the run is placed."""
    base = yaml.safe_load((Path(configs) / run.recipe).read_text(encoding="utf-8")) or {}
    recipe = {**base, **copy.deepcopy(run.overrides)}
    recipe["early_stopping_patience"] = 0
    recipe["max_minutes"] = 0.0
    return recipe


def fill(value, data: dict):
    """`value` with every {placeholder} string of `data` replaced (recipes, job arguments)."""
    if isinstance(value, dict):
        return {k: fill(v, data) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(fill(v, data) for v in value)
    if isinstance(value, str):
        for key, path in data.items():
            value = value.replace("{" + key + "}", str(path))
    return value


def recipe_hash(recipe: dict) -> str:
    """What decides a run: the recipe without its output directory."""
    ident = {k: v for k, v in recipe.items() if k != "output_dir"}
    return hashlib.sha256(json.dumps(ident, sort_keys=True, default=str).encode()).hexdigest()[:16]


def task_steps(recipe: dict) -> dict | None:
    """Optimizer steps per task: tasks take turns under `sampling: cycle`; None when drawn at random."""
    names = [t["name"] for t in recipe["tasks"]]
    steps = int(recipe["max_steps"])
    if recipe.get("sampling", "cycle") != "cycle":
        return None
    return {n: steps // len(names) + (i < steps % len(names)) for i, n in enumerate(names)}


def examples_seen(recipe: dict) -> int:
    """Pairs (examples) one run sees: steps x batch x gradient accumulation (one process)."""
    return int(recipe["max_steps"]) * int(recipe["batch_size"]) * int(recipe.get("grad_accum", 1))


def plan_row(run: Run, recipe: dict) -> dict:
    per_task = task_steps(recipe)
    batch = int(recipe["batch_size"]) * int(recipe.get("grad_accum", 1))
    return {"run": run.name, "recipe": run.recipe, "model": recipe["model"], "seed": recipe.get("seed", 0),
            "steps": int(recipe["max_steps"]), "batch": batch, "pairs_seen": examples_seen(recipe),
            "task_steps": per_task,
            "task_pairs": {k: v * batch for k, v in per_task.items()} if per_task else None,
            "objectives": [t["objective"] for t in recipe["tasks"]], "note": run.note}


def check_equal_compute(recipes: dict[str, dict]) -> dict:
    """Every run of a comparison must agree on every setting but the tasks and the seed (so on
    steps, batch and pairs seen, start model, length, schedule); returns the shared settings,
    or raises PlanError naming each difference."""
    if not recipes:
        raise PlanError("a comparison needs at least one run")
    keys = sorted({k for r in recipes.values() for k in r} - set(VARIED))
    differ = {}
    for key in keys:
        values = {name: r.get(key) for name, r in recipes.items()}
        if len({json.dumps(v, sort_keys=True, default=str) for v in values.values()}) > 1:
            differ[key] = values
    if differ:
        said = "; ".join(f"{k}: " + ", ".join(f"{n}={v!r}" for n, v in vals.items()) for k, vals in differ.items())
        raise PlanError(f"unequal compute or settings between the runs of one comparison ({said})")
    first = next(iter(recipes.values()))
    return {k: first.get(k) for k in keys}


def preflight(recipe: dict, where: str = "recipe") -> str | None:
    """Why the run cannot start, or None: the recipe is read as `xlingua train` reads it, and
    each task's objective is built with its options (no data, no model)."""
    from xlingua.objectives import task_class
    from xlingua.training.config import config_from_dict

    try:
        config = config_from_dict(recipe, where=where)
    except ValueError as exc:
        return str(exc)
    for task in config.tasks:
        try:
            task_class(task.objective)(task, [("a", "b", 0)], 8)
        except (TypeError, ValueError) as exc:
            return f"objective {task.objective!r} does not take options {task.options}: {exc}"
    return None


def run_state(run_dir: Path, recipe: dict, evaluated: bool = False) -> str:
    """"done" (its done.json matches the recipe, and final/ is there or every evaluation of
    the run is read, so its weights are no longer needed), "resume" (a checkpoint to go on
    from) or "new". A done.json of another recipe raises PlanError."""
    run_dir = Path(run_dir)
    done = run_dir / DONE
    if done.exists():
        record = json.loads(done.read_text(encoding="utf-8"))
        if record.get("recipe_hash") != recipe_hash(recipe):
            raise PlanError(f"{run_dir} holds a finished run of another recipe (hash {record.get('recipe_hash')}, "
                            f"planned {recipe_hash(recipe)}): remove it or use another --root")
        if (run_dir / "final").is_dir() or evaluated:
            return "done"
    return "resume" if (run_dir / "checkpoint.pt").exists() else "new"


# -- a run's state and results ----------------------------------------------------------------
def train_command(run_dir: Path, state: str) -> list[str]:
    argv = ["train", str(Path(run_dir) / RECIPE), "-o", str(run_dir)]
    return argv + (["--resume"] if state == "resume" else [])


def read_log(run_dir: Path) -> list[dict]:
    path = Path(run_dir) / "log.jsonl"
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def finish_run(run_dir: Path, recipe: dict) -> dict:
    """After `xlingua train` exits 0: check the log reached max_steps and write done.json
    (steps, pairs seen, seconds, the last dev figures)."""
    log = read_log(run_dir)
    steps = max((r["step"] for r in log if "loss" in r), default=0)
    if steps != int(recipe["max_steps"]) or not (Path(run_dir) / "final").is_dir():
        raise RuntimeError(f"{run_dir}: training stopped at step {steps} of {recipe['max_steps']}")
    evals = [r for r in log if "eval" in r]
    seconds = max((r.get("seconds", 0.0) for r in log if "loss" in r), default=0.0)
    record = {"recipe_hash": recipe_hash(recipe), "steps": steps, "pairs_seen": examples_seen(recipe),
              "task_steps": _steps_from_log(log), "seconds": seconds,
              "dev": evals[-1]["eval"] if evals else {}, "dev_step": evals[-1]["step"] if evals else None,
              "dev_start": evals[0]["eval"] if evals and evals[0]["step"] == 0 else {},
              "date": now()}
    write_json(Path(run_dir) / DONE, record)
    return record


def _steps_from_log(log: list[dict]) -> dict:
    """Steps each task took, from the log (only exact when every step is logged)."""
    counts: dict[str, int] = {}
    for r in log:
        if "task" in r:
            counts[r["task"]] = counts.get(r["task"], 0) + 1
    return counts


def eval_done(path: Path, model: str, opts: tuple = ()) -> bool:
    """A complete result of `model` made with exactly the options `opts` (read back from the
    command line the result records)."""
    if not Path(path).exists():
        return False
    result = json.loads(Path(path).read_text(encoding="utf-8"))
    return bool(result.get("complete")) and result.get("model") == model and set(recorded_opts(result)) == set(opts)


def recorded_opts(result: dict) -> tuple:
    """The --opt values of the command line a result records."""
    argv = shlex.split(result.get("command", ""))
    return tuple(argv[i + 1] for i, a in enumerate(argv[:-1]) if a == "--opt")


def eval_command(model: str, e: Eval, out: Path) -> list[str]:
    argv = ["eval", "-m", model, *e.tasks, "-o", str(out)]
    for o in e.opts:
        argv += ["--opt", o]
    return argv


# -- placing the runs -----------------------------------------------------------------------------
@dataclass
class Planned:
    run: Run
    template: dict      # the recipe before its paths are filled in: what done.json is checked against
    recipe: dict        # what `xlingua train` reads
    dir: Path
    state: str          # new | resume | done | blocked
    blocked: str | None = None


def plan(comp: Comparison, paper_dir: Path, configs: Path = CONFIGS) -> tuple[list[Planned], dict]:
    """Every run placed under paper_dir, checked for equal compute (PlanError otherwise) and
    preflighted; returns the runs and the settings they share."""
    templates = {r.name: derive_recipe(r, configs) for r in comp.runs}
    shared = check_equal_compute(templates) if templates else {}
    paths = data_paths(comp, paper_dir)
    out = []
    for run in comp.runs:
        run_dir = paper_dir / run.name
        recipe = {**fill(templates[run.name], paths), "output_dir": str(run_dir)}
        why = preflight(recipe, where=f"{run.name} ({run.recipe} + overrides)")
        evaluated = all(eval_done(paper_dir / "eval" / f"{e.name}.json", run_model(run_dir, comp.precision), e.opts)
                        for e in comp.evals if e.model == run.name)
        state = "blocked" if why else run_state(run_dir, templates[run.name], evaluated)
        out.append(Planned(run, templates[run.name], recipe, run_dir, state, why))
    return out, shared


def data_paths(comp: Comparison, paper_dir: Path) -> dict:
    """{placeholder: path}: the paper's directory, and the data files its recipes read (absolute
    in the recipe, so that it reads the same whatever the working directory)."""
    return {"dir": paper_dir, **{k: (paper_dir / rel).resolve() for k, (rel, _) in comp.data.items()}}


def run_model(run_dir: Path, precision: str = "fp32") -> str:
    """The encoder spec a run's final model is evaluated through."""
    return EVAL_SPECS[precision][0].format(Path(run_dir) / "final")


def eval_model(e: Eval, planned: dict[str, Planned], precision: str = "fp32") -> str:
    if e.model in planned:
        return run_model(planned[e.model].dir, precision)
    return EVAL_SPECS[precision][1].get(e.model, e.model)


def in_precision(comp: "Comparison", precision: str) -> "Comparison":
    """The comparison with every run trained in `precision` (bf16: autocast, for CPUs with bf16
    units, where it is about twice as fast); all runs of a comparison share it, so they stay at
    equal compute, and the evaluations read the models in the same precision."""
    if precision not in EVAL_SPECS:
        raise PlanError(f"precision must be one of {', '.join(EVAL_SPECS)}, got {precision!r}")
    if precision == "fp32":
        return comp
    runs = [replace(r, overrides={**r.overrides, "precision": precision}) for r in comp.runs]
    return replace(comp, runs=runs, precision=precision)


def job_marker(job: Job, paper_dir: Path) -> tuple[Path, str]:
    ident = hashlib.sha256(json.dumps(list(job.argv)).encode()).hexdigest()[:16]
    return paper_dir / "jobs" / f"{job.name}.done.json", ident


def job_done(job: Job, paper_dir: Path) -> bool:
    """The job exited 0 with these arguments."""
    marker, ident = job_marker(job, paper_dir)
    return marker.exists() and json.loads(marker.read_text(encoding="utf-8")).get("argv_hash") == ident
