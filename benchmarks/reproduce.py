"""Each paper's claim, reproduced at equal compute: one comparison per paper, one table a user
can rerun.

    python benchmarks/reproduce.py onealigner --dry-run   # the plan: runs, steps, pairs seen, cost
    python benchmarks/reproduce.py onealigner             # train, evaluate, write the table
    python benchmarks/reproduce.py muse --dev-only        # train and read dev only
    python benchmarks/reproduce.py muse --table-only      # the table of what has finished so far

Papers: onealigner, dueam, muse, laser, meaning (docs/reproductions.md says what each claims).

A comparison is a list of training runs (a base recipe from configs/ with overrides: tasks,
steps, batch, seed), the evaluations they need and the claims read from them. Every run starts
from e5-small, trains on ../shared/corpora/general plus the project's existing training sets
and is checked before anything runs:

- equal compute: every run of a comparison has the same settings (start model, steps, batch,
  sequence length, learning rate and schedule...), so the same steps and the same pairs seen;
  only the tasks and the seed differ, and a plan where anything else differs is refused;
- the objectives accept their options (a run whose objective lacks an option is reported as
  blocked and not started);
- one setting is repeated with another seed: the noise is |seed 0 - seed 1| of the claim's
  figure on that setting, and it stands beside every difference.

Training goes through the CLI only (`xlingua train RUN/recipe.yaml -o RUN [--resume]`, the
derived recipe written into the run directory). A run whose `done.json` matches its recipe is
not rerun; a run killed after a checkpoint resumes from it (`--resume`, which ends with the
weights of an unbroken run); a run killed before its first checkpoint starts again. Dev figures
(the general corpus's dev slices, retrieval) come from the trainer's log; the evaluation sets
are read once, by `xlingua eval`, after every run of the comparison has finished. The table
goes to runs/reproduce/PAPER/table.json and table.md, and a plot of the claims to claims.png.

With `--records DIR`, each result (a run's done.json, an evaluation's result, the table; no
weights) is also copied to DIR/PAPER as it is written, and what the root lacks is taken from
there first. A run whose done.json matches and whose evaluations are all read needs no weights,
so a comparison moved to another machine (same --root) trains and reads only what is left.

Verdict of a claim "A - B > t" (t = 0 for "A beats B"; t = -2 for "A within 2 points of B"):
"reproduced" when A - B - t > noise, "reproduced in direction" when 0 < A - B - t <= noise (or
the noise was not measured), "not reproduced" otherwise.
"""

import argparse
import copy
import datetime as _dt
import gzip
import hashlib
import json
import os
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass, field, replace
from pathlib import Path

import yaml

from xlingua.io import atomic_open, atomic_path, write_json, write_text

REPO = Path(__file__).resolve().parents[1]
CONFIGS = REPO / "configs"
DEFAULT_ROOT = Path("runs") / "reproduce"
START = "e5-small:torch"  # the start of the default model
# the general corpus's 20 dev languages (xlingua.data.general.DEV_LANGS): the dev slices
DEV_LANGS = ["ar", "de", "el", "es", "et", "fi", "fr", "hi", "ja", "ko",
             "ne", "ro", "ru", "si", "sw", "ta", "th", "tr", "vi", "zh"]
# Tatoeba's file codes of the languages the plans train on
TATOEBA_CODE = {"ar": "ara", "de": "deu", "es": "spa", "fr": "fra", "it": "ita", "ja": "jpn", "ko": "kor",
                "nl": "nld", "pl": "pol", "pt": "por", "ru": "rus", "th": "tha", "tr": "tur", "zh": "cmn",
                "zh-Hant": "cmn"}
# Cost model (docs/results.md, "Training" and "Embedding speed", 2-core AMD EPYC): 12 steps of
# batch 32 at max length 64 took 61.6 s in fp32; bundled:torch (fp32) embeds 46.4 sentences/s.
REF_STEP_SECONDS, REF_BATCH, REF_LENGTH = 61.6 / 12, 32, 64
SENTENCES_PER_SECOND = 46.4
HARD_NEGATIVE_COST = 1.5  # a third encoder pass per step
# settings a comparison may vary between its runs; everything else must be equal
VARIED = ("tasks", "seed", "output_dir")
DONE = "done.json"
RECIPE = "recipe.yaml"


class PlanError(ValueError):
    """A plan that must not run (unequal compute, a run directory holding another run)."""


class Missing(Exception):
    """A result a claim reads has not been written yet."""


# -- what a comparison is --------------------------------------------------------------------
@dataclass(frozen=True)
class Run:
    """A training run: `recipe` (a file of configs/) with `overrides` of its top-level keys."""
    name: str
    recipe: str
    overrides: dict
    note: str = ""


@dataclass(frozen=True)
class Eval:
    """One `xlingua eval` call: `model` is a run's name (its final model) or an encoder spec."""
    name: str
    model: str
    tasks: tuple
    opts: tuple = ()


@dataclass(frozen=True)
class Job:
    """Any other command (e.g. `xlingua meaning train`), done once it has exited 0 (rerun with
    the same arguments otherwise); `output` is a result file claims read. `{dir}` in either is
    the paper's directory."""
    name: str
    argv: tuple
    output: str = ""
    note: str = ""
    seconds: float | None = None  # the time a recorded run of the same command took


@dataclass(frozen=True)
class Measure:
    """A figure of one task of an eval result: the mean of `keys`, from the task's summary or
    averaged over its rows (`only` these rows, or all but `exclude`)."""
    task: str
    keys: tuple
    label: str
    rows: bool = False
    only: tuple = ()
    exclude: tuple = ()

    def value(self, result: dict) -> float:
        task = result["tasks"][self.task]
        if not self.rows:
            return _mean(task["summary"][k] for k in self.keys)
        names = [n for n in task["rows"] if (not self.only or n in self.only) and n not in self.exclude]
        if not names:
            raise KeyError(f"no rows of {self.task} left after only={self.only} exclude={self.exclude}")
        return _mean(_mean(task["rows"][n][k] for k in self.keys) for n in names)


@dataclass(frozen=True)
class Ref:
    """A measured figure: `measure` of the result of eval (or job) `source`; `entry` picks one
    result of a file holding several (benchmarks/meaning.py's)."""
    source: str
    measure: Measure
    entry: str = ""

    @property
    def key(self) -> str:
        """SOURCE, or SOURCE#ENTRY."""
        return f"{self.source}#{self.entry}" if self.entry else self.source


@dataclass(frozen=True)
class Fixed:
    """A figure already recorded: what it is, and where it is recorded (docs/results.md...)."""
    value: float
    what: str
    source: str = ""


@dataclass(frozen=True)
class Claim:
    """The paper claims A - B > threshold. Its noise is measured on the comparison's repeated
    setting, `noise_pair` = (Ref.key of seed 0, Ref.key of seed 1): |seed 0 - seed 1| of the
    claim's figure there (of A - B when A and B are two figures of one result); or it is
    `fixed_noise`, or unmeasured."""
    name: str
    a: Ref | Fixed
    b: Ref | Fixed
    threshold: float = 0.0
    noise_pair: tuple | None = None
    fixed_noise: Fixed | None = None
    paper: str = ""


@dataclass
class Comparison:
    paper: str
    title: str
    runs: list = field(default_factory=list)
    evals: list = field(default_factory=list)
    jobs: list = field(default_factory=list)
    claims: list = field(default_factory=list)
    data: dict = field(default_factory=dict)   # {placeholder: writer(path)} files the recipes read
    precision: str = "fp32"  # every run trained and every model read in it (in_precision)


def _mean(values) -> float:
    values = [float(v) for v in values]
    if not values:
        raise ValueError("mean of nothing")
    return sum(values) / len(values)


# -- bookkeeping: recipes, plan, equal compute, done / resume --------------------------------------
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
              "date": _now()}
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


# -- claims and verdicts ---------------------------------------------------------------------
def noise(seed0: float, seed1: float) -> float:
    """Run-to-run noise of one figure: |seed 0 - seed 1| on the repeated setting."""
    return abs(seed0 - seed1)


def verdict(diff: float, noise_level: float | None, threshold: float = 0.0) -> str:
    """The claim is diff = A - B > threshold: "reproduced" when it holds by more than the noise,
    "reproduced in direction" when it holds within the noise (or the noise is unmeasured),
    "not reproduced" when it does not hold."""
    margin = diff - threshold
    if margin <= 0:
        return "not reproduced"
    if noise_level is None or margin <= noise_level:
        return "reproduced in direction"
    return "reproduced"


def value_of(ref: Ref | Fixed, results: dict, key: str | None = None) -> float:
    """The figure `ref` names, or its measure read from the result `key` (SOURCE or SOURCE#ENTRY)."""
    if isinstance(ref, Fixed):
        return ref.value
    source, _, entry = (key or ref.key).partition("#")
    if source not in results or (entry and entry not in results[source]):
        raise Missing(source + (f"#{entry}" if entry else ""))
    result = results[source]
    return ref.measure.value(result[entry] if entry else result)


def claim_noise(claim: Claim, results: dict) -> float | None:
    """|seed 0 - seed 1| on the repeated setting of what the claim compares: the figure itself
    when A and B come from different runs, A - B when they are two figures of one result."""
    if claim.noise_pair is None:
        return None if claim.fixed_noise is None else claim.fixed_noise.value
    seed0, seed1 = claim.noise_pair
    a, b = claim.a, claim.b
    if isinstance(a, Ref) and isinstance(b, Ref) and a.key == b.key:
        return noise(value_of(a, results, seed0) - value_of(b, results, seed0),
                     value_of(a, results, seed1) - value_of(b, results, seed1))
    return noise(value_of(a, results, seed0), value_of(a, results, seed1))


def claim_row(claim: Claim, results: dict, blocked: dict | None = None) -> dict:
    """The claim's figures, difference, noise and verdict; a claim whose figures are missing
    says which (blocked runs, or not yet run)."""
    row = {"claim": claim.name, "paper": claim.paper, "threshold": claim.threshold,
           "measure": _measure_label(claim), "a": _describe(claim.a), "b": _describe(claim.b),
           "sources": sorted({r.source for r in (claim.a, claim.b, claim.fixed_noise)
                              if isinstance(r, Fixed) and r.source})}
    needed = ({r.source for r in (claim.a, claim.b) if isinstance(r, Ref)}
              | {k.partition("#")[0] for k in claim.noise_pair or ()})
    stopped = {s: (blocked or {})[s] for s in sorted(needed) if s in (blocked or {})}
    if stopped:
        return {**row, "verdict": "not run: " + "; ".join(f"{s}: {why}" for s, why in stopped.items())}
    try:
        a, b = value_of(claim.a, results), value_of(claim.b, results)
        level = claim_noise(claim, results)
    except Missing as missing:
        return {**row, "verdict": f"not yet run ({missing.args[0]})"}
    except KeyError as exc:  # a result without the figure: a wrong measure, not a missing run
        return {**row, "verdict": f"error: no figure {exc} in the result"}
    source = (f"|{claim.noise_pair[0]} - {claim.noise_pair[1]}|" if claim.noise_pair
              else claim.fixed_noise.what if claim.fixed_noise else "not measured")
    return {**row, "value_a": a, "value_b": b, "diff": a - b, "noise": level, "noise_source": source,
            "verdict": verdict(a - b, level, claim.threshold)}


def _label(ref) -> str:
    return ref.measure.label if isinstance(ref, Ref) else ref.what.split(", ")[0]


def _measure_label(claim: Claim) -> str:
    """The figure compared; both when A and B are read differently (each run by its own similarity)."""
    a, b = _label(claim.a), _label(claim.b)
    return a if a == b or not (isinstance(claim.a, Ref) and isinstance(claim.b, Ref)) else f"{a} (A) against {b} (B)"


def _describe(ref) -> str:
    if isinstance(ref, Fixed):
        return ref.what
    return f"{ref.source}" + (f" [{ref.entry}]" if ref.entry else "")


# -- data the recipes read ------------------------------------------------------------------
def write_ordered_english(path: Path, lang: str = "de", sources=("ntrex", "newstest")) -> Path:
    """English news in reading order for next-sentence (response) ranking: the English side of
    ../shared/corpora/general/SOURCE/LANG-en.tsv.gz (NTREX and the WMT news test sets keep
    their documents in order). A paragraph ends at every headline (a line not ending in . ! or ?,
    closing quotes and brackets aside) and at every sentence held out for the general dev slices; both are left out."""
    from xlingua.data.general import dev_english, general_root

    held = dev_english()
    paragraphs, current = [], []
    for source in sources:
        with gzip.open(general_root() / source / f"{lang}-en.tsv.gz", "rt", encoding="utf-8") as f:
            for line in f:
                english = line.rstrip("\n").split("\t")[1].strip()
                if english in held or not english.rstrip("\"'\u201d\u2019)").endswith((".", "!", "?")):
                    paragraphs.append(current)
                    current = []
                else:
                    current.append(english)
        paragraphs.append(current)
        current = []
    write_text(path, "\n\n".join("\n".join(p) for p in paragraphs if len(p) > 1) + "\n")
    return path


# -- the comparisons --------------------------------------------------------------------------
STEPS, BATCH, LENGTH = 600, 32, 64
COMMON = {"model": START, "max_steps": STEPS, "batch_size": BATCH, "grad_accum": 1, "max_seq_length": LENGTH,
          "warmup_steps": 60, "schedule": "linear", "sampling": "cycle", "precision": "fp32",
          "log_every": 1, "eval_every": STEPS, "checkpoint_every": 100,
          "eval": {"general_langs": DEV_LANGS, "limit": 200}}


def general(langs=None, limit=None) -> dict:
    spec = {"type": "general"}
    if langs is not None:
        spec["langs"] = list(langs)
    if limit:
        spec["limit"] = limit
    return spec


def ranking(data, name="translation", **options) -> dict:
    return {"name": name, "objective": "translation_ranking", "data": data,
            "options": {"scale": 20, "margin": 0.2, **options}}


def aligner(data, name="onealigner", **options) -> dict:
    return {"name": name, "objective": "onealigner", "data": data,
            "options": {"alpha": 0.5, "scale": 20, "layer": -1, **options}}


def _run(name, recipe, tasks, seed=0, note="") -> Run:
    return Run(name, recipe, {**COMMON, "tasks": tasks, "seed": seed}, note)


TATOEBA_BOTH = ("acc cosine xx-en", "acc cosine en-xx")
TATOEBA_ROWS = ("cosine xx-en", "cosine en-xx")  # the same per language (the task's row keys)
TATOEBA_MARGIN = ("acc margin xx-en", "acc margin en-xx")
TATOEBA_BERTSCORE = ("acc bertscore-inbatch xx-en", "acc bertscore-inbatch en-xx")


def tatoeba_codes(langs) -> tuple:
    return tuple(TATOEBA_CODE[l] for l in langs)


def onealigner() -> Comparison:
    recipe = "train_onealigner_de_en.yaml"
    runs = [
        _run("de", recipe, [aligner(general(["de"]))], note="one rich pair, de-en"),
        _run("de_seed1", recipe, [aligner(general(["de"]))], seed=1, note="the noise: de-en again, seed 1"),
        _run("zh", recipe, [aligner(general(["zh"]))], note="one pair of another family, zh-en"),
        _run("all", recipe, [{**aligner(general()), "temperature": 3.3}],
             note="all 158 pairs, languages drawn with p ~ n^0.3 (as the default model's recipe)"),
        _run("cosine", recipe, [aligner(general(["de"]), similarity="cosine")],
             note="(b) cosine of mean-pooled tokens as the training similarity (similarity=cosine)"),
        _run("row", recipe, [aligner(general(["de"]), negatives="row")],
             note="(c) N-1 negatives per row (negatives=row)"),
        _run("ranking_de", recipe, [ranking(general(["de"]), margin=0.0)],
             note="(b)+(c) together: cosine with N-1 negatives per row and direction (translation ranking)"),
    ]
    tasks = ("tatoeba:all", "sts:sts17,sts17_extended")
    # Tatoeba is also read the paper's way: retrieval by in-batch normalised BERTScore.
    opts = ("tatoeba.bertscore=true",)
    evals = [Eval("start", START, tasks, opts)] + [Eval(r.name, r.name, tasks, opts) for r in runs]
    tato = Measure("tatoeba:all", TATOEBA_BOTH, "Tatoeba, all 84 languages, cosine accuracy, both directions")
    tato_bs = Measure("tatoeba:all", TATOEBA_BERTSCORE,
                      "Tatoeba, all 84 languages, in-batch normalised BERTScore accuracy, both directions")
    sts = Measure("sts:sts17,sts17_extended", ("sts17 cross-lingual spearman",), "STS17 cross-lingual Spearman")
    repeat = ("de", "de_seed1")  # the noise: de-en twice, seeds 0 and 1
    paper_a = "one rich pair reaches within 2.0 points of all pairs at the same data budget (abstract)"
    claims = []
    for pair in ("de", "zh"):
        for m in (tato_bs, tato, sts):
            claims.append(Claim(f"(a) {pair}-en within 2 points of all pairs", Ref(pair, m), Ref("all", m), -2.0,
                                repeat, paper=paper_a))
    for name, other, what in (("(b) in-batch normalised BERTScore beats cosine", "cosine", "training similarity"),
                              ("(c) N^2-N negatives beat N-1", "row", "negatives"),
                              ("(b)+(c) OneAligner's loss beats cosine ranking", "ranking_de", "loss")):
        for m in (tato_bs, tato, sts):
            claims.append(Claim(name, Ref("de", m), Ref(other, m), 0.0, repeat, paper=f"OneAligner's {what}"))
        if other != "row":  # each run read with the similarity it trained: BERTScore against cosine
            claims.append(Claim(name, Ref("de", tato_bs), Ref(other, tato), 0.0, repeat, paper=f"OneAligner's {what}"))
    return Comparison("onealigner", "OneAligner (Niu et al. 2022)", runs, evals, claims=claims)


DUEAM_LANGS = ["de", "fr", "es", "ar", "tr"]
DUEAM_PAIRS = [p for l in DUEAM_LANGS for p in (f"en-{l}", f"{l}-en")]


def dueam() -> Comparison:
    recipe = "train_dueam_weak.yaml"
    rank = ranking(general(DUEAM_LANGS))
    weak = {"name": "dueam", "objective": "dueam", "data": {"type": "dueam_weak", "pairs": DUEAM_PAIRS},
            "options": {"lam": 0.003, "wmd_method": "emd"}}
    runs = [
        _run("ranking", recipe, [rank], note="translation ranking alone, general de/fr/es/ar/tr-en"),
        _run("ranking_seed1", recipe, [rank], seed=1, note="the noise: ranking alone again, seed 1"),
        _run("multitask", recipe, [rank, weak],
             note="translation ranking and the frozen anchor's WMD on XNLI dev pairs (labels unused), in turn"),
    ]
    tasks = ("tatoeba:all", "sts:sts17,sts17_extended")
    evals = [Eval("start", START, tasks)] + [Eval(r.name, r.name, tasks) for r in runs]
    sts = Measure("sts:sts17,sts17_extended", ("sts17 cross-lingual spearman",), "STS17 cross-lingual Spearman")
    outside = Measure("tatoeba:all", TATOEBA_ROWS, "Tatoeba languages outside the training pairs, cosine, both directions",
                      rows=True, exclude=tatoeba_codes(DUEAM_LANGS))
    paper = "the anchor's WMD as weak supervision, multi-task, helps cross-lingual STS and zero-shot languages"
    claims = [Claim("WMD weak supervision + ranking beats ranking alone", Ref("multitask", m), Ref("ranking", m),
                    0.0, ("ranking", "ranking_seed1"), paper=paper) for m in (sts, outside)]
    return Comparison("dueam", "DuEAM (Goswami et al. 2021)", runs, evals, claims=claims)


MUSE_LANGS = ["ar", "de", "es", "fr", "it", "ja", "ko", "nl", "pl", "pt", "ru", "th", "tr", "zh", "zh-Hant"]
XNLI_MUSE = ["ar", "de", "en", "es", "fr", "ru", "th", "tr", "zh"]


def muse() -> Comparison:
    recipe = "train_muse_multitask.yaml"
    data = general(MUSE_LANGS, limit=2000)
    rank = ranking(data)
    nli = {"name": "nli", "objective": "nli", "data": {"type": "xnli", "langs": XNLI_MUSE}, "options": {"hidden": 512}}
    nexts = {"name": "next_sentence", "objective": "response_ranking",
             "data": {"type": "ordered_text", "paths": ["{ordered_en}"]}, "options": {"hidden": 512, "scale": 20}}
    runs = [
        _run("ranking", recipe, [rank], note="translation ranking alone, mUSE's 15 languages, at most 2,000 pairs each"),
        _run("ranking_seed1", recipe, [rank], seed=1, note="the noise: ranking alone again, seed 1"),
        _run("multitask", recipe, [rank, nli, nexts],
             note="ranking + NLI (XNLI dev) + next-sentence ranking (English news in order), one step each in turn"),
        _run("hard_negatives", recipe, [ranking(data, hard_negatives=1)],
             note="ranking with 1 hard negative per pair, mined with the start model"),
    ]
    tasks = ("tatoeba", "sts:sts17,sts17_extended,stsb", "retrieval")
    evals = [Eval("start", START, tasks)] + [Eval(r.name, r.name, tasks) for r in runs]
    spec = "sts:sts17,sts17_extended,stsb"
    mono = Measure(spec, ("sts17 monolingual spearman",), "STS17 monolingual Spearman")
    cross = Measure(spec, ("sts17 cross-lingual spearman",), "STS17 cross-lingual Spearman")
    stsb = Measure(spec, ("stsb spearman",), "STSb test Spearman (English)")
    m30k = Measure("retrieval", ("multi30k p@1 xx-en", "multi30k p@1 en-xx"), "Multi30k P@1 among 1,000, both directions")
    tato = Measure("tatoeba", TATOEBA_BOTH, "Tatoeba-36 (27 present), cosine accuracy, both directions")
    rep = ("ranking", "ranking_seed1")
    claims = [Claim("multi-task beats translation ranking alone", Ref("multitask", m), Ref("ranking", m), 0.0, rep,
                    paper="representations are enhanced by multi-task training (abstract)")
              for m in (mono, cross, stsb, m30k, tato)]
    claims += [Claim("hard negatives beat in-batch negatives only", Ref("hard_negatives", m), Ref("ranking", m),
                     0.0, rep, paper="ranking with hard negatives (mUSE's translation task)") for m in (m30k, tato, cross)]
    ablation = "docs/xlingua-small.md, 'What each task contributes' (240 steps, dev; EPYC, 2026-11-24)"
    table1 = ("docs/history.md, '(e) mUSE Table 1' (50 translation steps each, l10n 4 languages, batch 16; "
              "EPYC, 2026-11-23)")
    claims += [
        Claim("default model's ablation: distill+rank+sts beats rank alone",
              Fixed(82.89, "stsb_multi_mt dev Spearman, distill+rank+sts", ablation),
              Fixed(72.85, "stsb_multi_mt dev Spearman, rank alone", ablation), paper="multi-task helps STS"),
        Claim("default model's ablation: distill+rank+sts beats rank alone",
              Fixed(98.88, "dev retrieval mean, distill+rank+sts", ablation),
              Fixed(99.12, "dev retrieval mean, rank alone", ablation), paper="multi-task helps retrieval"),
        Claim("earlier small run: multi-task beats ranking alone",
              Fixed(73.1, "STS17-extended cross-lingual Spearman, multi-task", table1),
              Fixed(73.6, "STS17-extended cross-lingual Spearman, ranking alone", table1), paper="multi-task helps STS"),
        Claim("earlier small run: multi-task beats ranking alone",
              Fixed(80.9, "STS17-extended monolingual Spearman, multi-task", table1),
              Fixed(81.4, "STS17-extended monolingual Spearman, ranking alone", table1), paper="multi-task helps STS"),
    ]
    return Comparison("muse", "mUSE (Chidambaram et al. 2019)", runs, evals, claims=claims,
                      data={"ordered_en": ("data/english_news_ordered.txt", write_ordered_english)})


# LASER's XNLI figures (src/xlingua/references/laser.json, the paper's Table 1)
LASER_XNLI_EN = 73.9
LASER_XNLI_OTHERS = (71.9, 72.9, 72.6, 72.8, 74.2, 72.1, 69.6, 71.4, 72.0, 69.2, 71.4, 65.5, 62.2, 61.0)
LASER_XNLI_DROP = LASER_XNLI_EN - sum(LASER_XNLI_OTHERS) / len(LASER_XNLI_OTHERS)


def laser() -> Comparison:
    model = "bundled"
    evals = [Eval("default", model, ("tatoeba", "bucc", "xnli")),
             Eval("default_bucc_cosine", model, ("bucc",), ("margin=absolute",)),
             Eval("default_xnli_seed1", model, ("xnli",), ("seed=1",))]
    margin = Measure("tatoeba", TATOEBA_MARGIN, "Tatoeba-36 (27 present), both directions")
    cosine = Measure("tatoeba", TATOEBA_BOTH, "Tatoeba-36 (27 present), both directions")
    bucc = Measure("bucc", ("zh-en f1 best",), "BUCC zh-en F1, best threshold")
    others = Measure("xnli", ("accuracy non-en",), "XNLI accuracy, 14 languages other than English")
    english = Measure("xnli", ("accuracy",), "XNLI accuracy, English", rows=True, only=("en",))
    exact = Fixed(0.0, "deterministic: no seed; one Tatoeba sentence is under 0.01 points")
    # BUCC's F1 moves in steps of about one gold pair of 257
    step = Fixed(round(100 / 257, 2), "deterministic: no seed; F1 moves in steps of about one of 257 gold pairs")
    e5 = "docs/results.md and docs/history.md, 'Evaluation' (e5-small, then the default; EPYC, 2026-11-22/23)"
    mining = "docs/history.md, 'Mining' (benchmarks/mine_bucc.py --only margin, mode max; EPYC, 2026-11-23)"
    mining_use = "docs/history.md, 'Mining' (benchmarks/mine_bucc.py --models use, mode max; Xeon, 2026-11-22)"
    margin_paper = "margin accounts for the scale inconsistencies of cosine (abstract)"
    paper_xnli = f"LASER's English-trained classifier loses {LASER_XNLI_DROP:.1f} points on the other 14 languages"
    claims = [
        Claim("ratio margin beats cosine (Tatoeba), default model", Ref("default", margin), Ref("default", cosine), 0.0,
              fixed_noise=exact, paper=margin_paper),
        Claim("ratio margin beats cosine (BUCC), default model", Ref("default", bucc),
              Ref("default_bucc_cosine", bucc), 0.0, fixed_noise=step, paper=margin_paper),
        Claim("zero-shot XNLI: the drop from English within LASER's, default model", Ref("default", others),
              Ref("default", english), -LASER_XNLI_DROP, ("default", "default_xnli_seed1"), paper=paper_xnli),
        Claim("ratio margin beats cosine (Tatoeba), e5-small", Fixed(89.5, "Tatoeba-36, ratio margin, e5-small", e5),
              Fixed(84.7, "Tatoeba-36, cosine, e5-small", e5), fixed_noise=exact, paper=margin_paper),
        Claim("ratio margin beats cosine (Tatoeba, 84 languages), e5-small",
              Fixed(76.1, "Tatoeba, all 84 languages, ratio margin (76.1 / 76.1), e5-small", e5),
              Fixed(69.9, "Tatoeba, all 84 languages, cosine (69.6 / 70.2), e5-small", e5), fixed_noise=exact,
              paper=margin_paper),
        Claim("ratio margin beats cosine (BUCC), e5-small", Fixed(87.7, "BUCC zh-en F1, ratio margin, e5-small", mining),
              Fixed(80.9, "BUCC zh-en F1, cosine, e5-small", mining), fixed_noise=step, paper=margin_paper),
        Claim("ratio margin beats cosine (BUCC), use", Fixed(92.0, "BUCC zh-en F1, ratio margin, use", mining_use),
              Fixed(91.7, "BUCC zh-en F1, cosine, use", mining_use), fixed_noise=step, paper=margin_paper),
        Claim("zero-shot XNLI: the drop from English within LASER's, e5-small",
              Fixed(57.6, "XNLI accuracy, 14 languages other than English, e5-small", e5),
              Fixed(66.6, "XNLI accuracy, English, e5-small (15 x 58.2 - 14 x 57.6, +-1.5 from their rounding)", e5),
              -LASER_XNLI_DROP, paper=paper_xnli),
    ]
    return Comparison("laser", "LASER as a mining system (Artetxe & Schwenk 2019)", evals=evals, claims=claims)


MEANING_ARGS = ("--langs=", "--pairs", "0", "--general", "mlqe-pe,flores-v1,newstest,ntrex",
                "--general-langs", "de,zh,et,ne,ro,si,ru", "--extra", "xnli-dev,stsb-mt-train",
                "--patience", "5", "--max-epochs", "40", "--snapshot-every", "1", "--residual", "--lr", "2e-5")


def meaning() -> Comparison:
    recorded = "docs/results.md 'Meaning embeddings' (EPYC, 2026-11-24)"
    # times: docs/history.md, 'Fifth round' (embedding the pairs once ~70 min, each run 2.5-4 min,
    # the table of one model ~28 min; EPYC, 2026-11-24)
    jobs = [Job("xs_seed0", ("xlingua", "meaning", "train", "-o", "{dir}/xs_seed0", "--base", "xlingua-small",
                             *MEANING_ARGS, "--seed", "0"), note="the recorded chosen run (xs_res_lr)",
                seconds=74 * 60),
            Job("xs_seed1", ("xlingua", "meaning", "train", "-o", "{dir}/xs_seed1", "--base", "xlingua-small",
                             *MEANING_ARGS, "--seed", "1"), note="the noise: the same MLPs, seed 1", seconds=4 * 60),
            Job("table", ("python", "benchmarks/meaning.py", "--base", "xlingua-small", "--scorers", "cosine",
                          "--model", "seed0={dir}/xs_seed0", "--model", "seed1={dir}/xs_seed1",
                          "--out", "{dir}/meaning_table.json"), output="{dir}/meaning_table.json",
                note="QE dev and test20, STS2017-extended: base cosine and both seeds' meaning vectors", seconds=40 * 60)]
    qe = Measure("qe", ("pearson",), "WMT20 QE test20 Pearson, mean of 6 pairs")
    cross = Measure("sts:sts17_extended", ("sts17_extended cross-lingual pearson",),
                    "STS2017-extended cross-lingual Pearson")
    paper = "meaning embeddings beat the original embedding on QE and cross-lingual STS (abstract)"
    repeat = ("table#seed0 cosine", "table#seed1 cosine")  # seed 1's MLPs against seed 0's
    claims = [Claim("meaning embeddings beat cosine, xlingua-small", Ref("table", m, "seed0 cosine"),
                    Ref("table", m, "base cosine"), 0.0, repeat, paper=paper) for m in (qe, cross)]
    for what, xs_cos, xs_mean, e5_cos, e5_mean in (("QE test20 Pearson", 0.371, 0.397, 0.270, 0.382),
                                                  ("STS2017-extended cross-lingual Pearson", 76.1, 75.3, 69.5, 63.2)):
        for base, cos, mean in (("xlingua-small", xs_cos, xs_mean), ("e5-small", e5_cos, e5_mean)):
            claims.append(Claim(f"meaning embeddings beat cosine, {base} (recorded)",
                                Fixed(mean, f"{what}, {base} + meaning MLPs", recorded),
                                Fixed(cos, f"{what}, {base} cosine", recorded), paper=paper))
    return Comparison("meaning", "Meaning embeddings (Tiyajamorn et al. 2021)", jobs=jobs, claims=claims)


COMPARISONS = {"onealigner": onealigner, "dueam": dueam, "muse": muse, "laser": laser, "meaning": meaning}


# -- running a comparison -----------------------------------------------------------------------
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


def cli_argv(argv) -> list[str]:
    """`xlingua ...` and `python benchmarks/...` as this interpreter runs them."""
    argv = [str(a) for a in argv]
    if argv[0] == "xlingua":
        return [sys.executable, "-m", "xlingua.cli", *argv[1:]]
    if argv[0] == "python" and argv[1].startswith("benchmarks/"):
        return [sys.executable, str(REPO / argv[1]), *argv[2:]]
    raise ValueError(f"not an xlingua or benchmarks/ command: {' '.join(argv)}")


def execute(argv, log: Path) -> None:
    """Run a command, its output appended to `log`; an error names the log and shows its end."""
    env = {**os.environ, "PYTHONPATH": str(REPO / "src") + os.pathsep + os.environ.get("PYTHONPATH", "")}
    log.parent.mkdir(parents=True, exist_ok=True)
    with open(log, "a", encoding="utf-8") as f:
        f.write(f"\n$ {' '.join(map(str, argv))}  # {_now()}\n")
        f.flush()
        code = subprocess.run(cli_argv(argv), env=env, stdout=f, stderr=subprocess.STDOUT).returncode
    if code:
        tail = "".join(log.read_text(encoding="utf-8", errors="replace").splitlines(True)[-15:])
        raise RuntimeError(f"exit {code}: {' '.join(map(str, argv))}\n(see {log})\n{tail}")


def train_run(p: Planned, runner=execute) -> dict:
    """Train one planned run through `xlingua train` unless done; returns its done.json."""
    if p.state == "done":
        return json.loads((p.dir / DONE).read_text(encoding="utf-8"))
    if p.state == "blocked":
        raise PlanError(f"{p.run.name} is blocked: {p.blocked}")
    p.dir.mkdir(parents=True, exist_ok=True)
    (p.dir / RECIPE).write_text(yaml.safe_dump(p.recipe, sort_keys=False, allow_unicode=True), encoding="utf-8")
    runner(["xlingua", *train_command(p.dir, p.state)], p.dir / "train.out")
    record = finish_run(p.dir, p.template)
    p.state = "done"
    return record


#: the encoder spec a run's final model (or the start model) is evaluated through, by precision
EVAL_SPECS = {"fp32": ("{}", {START: START}),
              "bf16": ("bf16:{}", {START: "e5-small:bf16", "bundled": "bundled:bf16"})}


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


def _job_marker(job: Job, paper_dir: Path) -> tuple[Path, str]:
    ident = hashlib.sha256(json.dumps(list(job.argv)).encode()).hexdigest()[:16]
    return paper_dir / "jobs" / f"{job.name}.done.json", ident


def job_done(job: Job, paper_dir: Path) -> bool:
    """The job exited 0 with these arguments."""
    marker, ident = _job_marker(job, paper_dir)
    return marker.exists() and json.loads(marker.read_text(encoding="utf-8")).get("argv_hash") == ident


def run_job(job: Job, paper_dir: Path, runner=execute) -> None:
    if job_done(job, paper_dir):
        return
    argv = fill(list(job.argv), {"dir": paper_dir})
    runner(argv, paper_dir / "jobs" / f"{job.name}.out")
    marker, ident = _job_marker(job, paper_dir)
    write_json(marker, {"argv_hash": ident, "argv": argv, "date": _now()})


def collect(comp: Comparison, paper_dir: Path, planned: dict[str, Planned]) -> dict:
    """Every finished result: evals by name, job outputs by job name."""
    results = {}
    for e in comp.evals:
        path = paper_dir / "eval" / f"{e.name}.json"
        if eval_done(path, eval_model(e, planned, comp.precision), e.opts):
            results[e.name] = json.loads(path.read_text(encoding="utf-8"))
    for job in comp.jobs:
        out = Path(fill(job.output, {"dir": paper_dir})) if job.output else None
        if out and job_done(job, paper_dir) and out.exists():
            results[job.name] = json.loads(out.read_text(encoding="utf-8"))
    return results


# -- records: the results without the weights -------------------------------------------------
TABLE_FILES = ("table.json", "table.md", "claims.png")


def record_files(comp: Comparison, paper_dir: Path) -> list[Path]:
    """The small files that hold a comparison's results, relative to its directory: each run's
    done.json, each evaluation's result, each job's marker and output, the table. Weights, logs
    and recipes (which name local data paths) stay out."""
    rels = [Path(r.name) / DONE for r in comp.runs] + [Path("eval") / f"{e.name}.json" for e in comp.evals]
    for job in comp.jobs:
        rels.append(_job_marker(job, Path())[0])
        out = Path(fill(job.output, {"dir": paper_dir})) if job.output else None
        if out and out.resolve().is_relative_to(Path(paper_dir).resolve()):
            rels.append(out.resolve().relative_to(Path(paper_dir).resolve()))
    return rels + [Path(f) for f in TABLE_FILES]


def _copy(src: Path, dst: Path) -> None:
    with atomic_path(dst) as tmp:
        shutil.copyfile(src, tmp)


def restore_records(comp: Comparison, paper_dir: Path, records: Path) -> list[Path]:
    """Copy from `records` what `paper_dir` lacks: results, and the done.json of runs it has no
    directory for at all (a run begun here keeps its own state). Returns what was copied."""
    copied = []
    for rel in record_files(comp, paper_dir):
        src, dst = Path(records) / rel, Path(paper_dir) / rel
        if not src.exists() or dst.exists() or (rel.name == DONE and dst.parent.exists()):
            continue
        _copy(src, dst)
        copied.append(rel)
    return copied


def save_records(comp: Comparison, paper_dir: Path, records: Path) -> None:
    """Copy each result file of `paper_dir` that `records` lacks or holds in another version."""
    for rel in record_files(comp, paper_dir):
        src, dst = Path(paper_dir) / rel, Path(records) / rel
        if src.exists() and (not dst.exists() or dst.read_bytes() != src.read_bytes()):
            _copy(src, dst)


def reproduce(paper: str, root: Path = DEFAULT_ROOT, dry_run: bool = False, dev_only: bool = False,
              configs: Path = CONFIGS, comparison: Comparison | None = None, runner=execute, echo=print,
              precision: str = "fp32", records: Path | None = None, table_only: bool = False,
              only: tuple = ()) -> dict:
    """Plan, (unless dry_run) train what is not done, evaluate once every run is done, write the
    table; returns it. With `records`, results are taken from there first and copied there as
    each one is written. `table_only` writes the table of the results there are, running
    nothing; `only` trains just the runs it names."""
    comp = in_precision(comparison or COMPARISONS[paper](), precision)
    paper_dir = Path(root) / comp.paper
    records = Path(records) / comp.paper if records else None
    if records:
        for rel in restore_records(comp, paper_dir, records):
            echo(f"== {comp.paper}: {rel} taken from {records}")

    def keep():
        if records:
            save_records(comp, paper_dir, records)

    runs, shared = plan(comp, paper_dir, configs)
    planned = {p.run.name: p for p in runs}
    unknown = set(only) - set(planned)
    if unknown:
        raise PlanError(f"{comp.paper} has no run {', '.join(sorted(unknown))}; its runs: {', '.join(planned)}")
    echo(describe_plan(comp, runs, shared, paper_dir))
    if dry_run:
        return {}
    if not table_only:
        for key, (rel, writer) in comp.data.items():
            if not (paper_dir / rel).exists():
                writer(paper_dir / rel)
        for p in runs:
            if p.state != "blocked" and (not only or p.run.name in only):
                echo(f"== {comp.paper}/{p.run.name}: {p.state}")
                train_run(p, runner)
                keep()
        for job in comp.jobs:
            echo(f"== {comp.paper}/{job.name}")
            run_job(job, paper_dir, runner)
            keep()
    trained = all(p.state in ("done", "blocked") for p in runs)
    if trained and not dev_only and not table_only:
        for e in comp.evals:
            model = eval_model(e, planned, comp.precision)
            if e.model in planned and planned[e.model].state == "blocked":
                continue
            out = paper_dir / "eval" / f"{e.name}.json"
            if not eval_done(out, model, e.opts):
                echo(f"== {comp.paper}/eval/{e.name}")
                runner(["xlingua", *eval_command(model, e, out)], paper_dir / "eval" / f"{e.name}.out")
                keep()
    table = build_table(comp, runs, shared, collect(comp, paper_dir, planned))
    write_table(paper_dir, table)
    keep()
    echo(table_markdown(table))
    return table


# -- cost -------------------------------------------------------------------------------------
def eval_sentences(spec: str, data_dir=None) -> int | None:
    """Sentences one `xlingua eval` task embeds at most (repeats counted; the cache embeds each
    once), or None for a task this does not count."""
    from xlingua.data import benchmarks as B

    name, _, subset = spec.partition(":")
    if name == "tatoeba":
        from xlingua.evaluation.tasks.tatoeba import subset_langs

        langs, _ = subset_langs(subset or "tatoeba36", B.tatoeba_langs(data_dir))
        return sum(2 * len(B.read_tatoeba(l, data_dir)[0]) for l in langs)
    if name == "sts":
        groups = subset.split(",") if subset and subset != "all" else list(B.STS_GROUPS)
        return sum(2 * len(p.s1) for g in groups for p in B.read_sts_group(g, data_dir))
    if name == "bucc":
        data = B.read_bucc("zh", "dev", data_dir)
        return len(data.src) + len(data.tgt)
    if name == "xnli":
        from xlingua.data.nli import XNLI_LANGS

        return 2 * (len(B.read_xnli_split("en", "dev", data_dir))
                    + sum(len(B.read_xnli_split(l, "test", data_dir)) for l in XNLI_LANGS))
    if name == "retrieval":
        from xlingua.evaluation.tasks.retrieval import MULTI30K_LANGS, l10n_langs

        sets = subset.split(",") if subset and subset != "all" else ["l10n", "multi30k"]
        n = sum(2 * len(B.read_l10n(l, "dev")[0]) for l in l10n_langs()) if "l10n" in sets else 0
        if "multi30k" in sets:
            n += len(B.read_multi30k("en", data_dir=data_dir)) * (1 + len(MULTI30K_LANGS))
        return n
    return None


@dataclass(frozen=True)
class Rates:
    """How fast this machine trains and embeds, relative to the reference machine: measured on
    the comparison's finished runs (optimizer steps/s in their logs) and evaluations (sentences
    over the seconds their results record), else the reference figures."""
    step_scale: float = 1.0
    sentences_per_s: float = SENTENCES_PER_SECOND
    source: str = "the reference 2-core CPU of docs/results.md (fp32)"


def step_estimate(recipe: dict) -> float:
    """Seconds of one optimizer step on the reference machine (see REF_STEP_SECONDS)."""
    hard = any(t.get("options", {}).get("hard_negatives") for t in recipe["tasks"])
    return REF_STEP_SECONDS * recipe["batch_size"] * recipe.get("grad_accum", 1) / REF_BATCH \
        * recipe["max_seq_length"] / REF_LENGTH * (HARD_NEGATIVE_COST if hard else 1.0)


def train_estimate(recipe: dict, rates: Rates | None = None) -> float:
    """CPU seconds of one run: its steps, the dev evaluations at step 0 and at the end, and
    mining hard negatives; at the reference rates, or at `rates` measured here."""
    rates = rates or Rates()
    ev = recipe.get("eval") or {}
    n_evals = (1 + recipe["max_steps"] // recipe["eval_every"]) if recipe.get("eval_every") else 0
    dev = n_evals * 2 * len(ev.get("general_langs", [])) * ev.get("limit", 500)
    mining = 0
    for t in recipe["tasks"]:
        data = t["data"] if isinstance(t["data"], dict) else {}
        if t.get("options", {}).get("hard_negatives") and data.get("limit") and data.get("langs"):
            mining += 2 * data["limit"] * len(data["langs"])
    return recipe["max_steps"] * step_estimate(recipe) * rates.step_scale + (dev + mining) / rates.sentences_per_s


def measured_rates(runs: list, evals: list, paper_dir: Path, name: str | None = None) -> Rates:
    """`runs`: (run directory, recipe) of finished runs; `evals`: (sentences, result path) of done
    evaluations; `name`: where they come from (paper_dir's name)."""
    scales = []
    for run_dir, recipe in runs:
        log = Path(run_dir) / "log.jsonl"
        rates = [json.loads(l)["steps_per_s"] for l in log.read_text(encoding="utf-8").splitlines()
                 if '"steps_per_s"' in l] if log.exists() else []
        if rates and rates[-1] > 0:
            scales.append(1.0 / rates[-1] / step_estimate(recipe))
    n = seconds = 0.0
    for sentences, path in evals:
        took = sum(t.get("seconds") or 0.0 for t in json.loads(Path(path).read_text(encoding="utf-8"))["tasks"].values())
        if sentences and took > 0:
            n, seconds = n + sentences, seconds + took
    if not scales and not seconds:
        return Rates()
    parts = ([f"{len(scales)} finished run(s)"] if scales else []) + (["the finished evaluations"] if seconds else [])
    return Rates(step_scale=sorted(scales)[len(scales) // 2] if scales else 1.0,
                 sentences_per_s=n / seconds if seconds else SENTENCES_PER_SECOND,
                 source=f"this machine, measured on {' and '.join(parts)} of {name or paper_dir.name}")


def other_comparisons_work(paper_dir: Path, precision: str) -> tuple[list, list]:
    """Finished runs (directory, recipe) and trained-model evaluations (sentences, result path)
    of the other comparisons under the same root in the same precision: the rates to estimate
    with before this comparison has finished anything of its own."""
    runs, evals = [], []
    root = Path(paper_dir).parent
    for d in sorted(root.iterdir()) if root.is_dir() else []:
        if d == Path(paper_dir) or not d.is_dir():
            continue
        for run_dir in sorted(x for x in d.iterdir() if (x / "done.json").exists() and (x / "recipe.yaml").exists()):
            recipe = yaml.safe_load((run_dir / "recipe.yaml").read_text(encoding="utf-8"))
            if recipe.get("precision", "fp32") == precision:
                runs.append((run_dir, recipe))
        for path in sorted((d / "eval").glob("*.json")):
            result = json.loads(path.read_text(encoding="utf-8"))
            model = result.get("model", "")
            # fixed models' vectors are often cached: only trained models' evaluations time the machine
            if not result.get("complete") or not model.endswith("final") or \
                    model.startswith("bf16:") != (precision == "bf16"):
                continue
            sizes = [_safe_count(t) for t in result["tasks"]]
            if sizes and None not in sizes:
                opts = recorded_opts(result)
                evals.append((sum(n * _passes(t, opts) for n, t in zip(sizes, result["tasks"])), path))
    return runs, evals


def _hours(seconds: float | None) -> str:
    if seconds is None:
        return "?"
    return f"{seconds / 60:.0f} min" if seconds < 3600 else f"{seconds / 3600:.1f} h"


def describe_plan(comp: Comparison, runs: list[Planned], shared: dict, paper_dir: Path) -> str:
    planned = {p.run.name: p for p in runs}
    evals = []  # (eval, model, sentences or None, done)
    counted: dict[str, int | None] = {}
    seen: set = set()  # a task already run on the same model embeds nothing new (the cache)
    for e in comp.evals:
        if e.model in planned and planned[e.model].state == "blocked":
            evals.append((e, None, None, False))
            continue
        sizes = []
        for t in e.tasks:
            if t not in counted:
                counted[t] = _safe_count(t)
            base = counted[t]
            sizes.append(0 if (e.model, t) in seen else None if base is None else base * _passes(t, e.opts))
        seen.update((e.model, t) for t in e.tasks)
        n = None if any(x is None for x in sizes) else sum(sizes)
        model = eval_model(e, planned, comp.precision)
        evals.append((e, model, n, eval_done(paper_dir / "eval" / f"{e.name}.json", model, e.opts)))
    # a fixed model's sentence vectors are often in the cache already: its evaluation times only
    # when no trained model's has finished
    timed = [(n, paper_dir / "eval" / f"{e.name}.json", e.model in planned) for e, _, n, done in evals if done]
    timed = [t[:2] for t in timed if t[2]] or [t[:2] for t in timed]
    rates = measured_rates([(p.dir, p.recipe) for p in runs if p.state == "done"], timed, paper_dir)
    if rates == Rates():  # nothing of its own finished yet
        rates = measured_rates(*other_comparisons_work(paper_dir, comp.precision), paper_dir,
                               name="the other comparisons under the same root, in the same precision")
    lines = [f"# {comp.paper}: {comp.title} -> {paper_dir}"]
    if runs:
        s = {k: shared.get(k, "default") for k in ("max_steps", "batch_size", "grad_accum", "model",
                                                   "max_seq_length", "lr", "schedule", "warmup_steps", "precision")}
        lines.append(f"equal compute: every run {s['max_steps']} steps x batch {s['batch_size']} "
                     f"(gradient accumulation {s['grad_accum']}) = {examples_seen(runs[0].template):,} pairs seen; "
                     f"start {s['model']}, max length {s['max_seq_length']}, lr {s['lr']}, {s['schedule']} schedule, "
                     f"warm-up {s['warmup_steps']}, precision {s['precision']}; only tasks and seed differ")
        lines.append("runs (training; dev = general dev slices at step 0 and at the end):")
    total = 0.0
    for p in runs:
        row = plan_row(p.run, p.template)
        per = ", ".join(f"{k} {v} steps / {row['task_pairs'][k]:,} pairs" for k, v in row["task_steps"].items()) \
            if row["task_steps"] else "drawn at random"
        if p.state == "blocked":
            lines.append(f"  {p.run.name:16} BLOCKED: {p.blocked}")
            continue
        cost = train_estimate(p.recipe, rates)
        total += cost if p.state != "done" else 0.0
        lines.append(f"  {p.run.name:16} {p.state:7} seed {row['seed']}  {row['steps']} steps x {row['batch']} = "
                     f"{row['pairs_seen']:,} pairs ({per}); ~{_hours(cost)}: {p.run.note}")
        lines.append(f"  {'':16} $ xlingua {' '.join(train_command(p.dir, p.state))}")
    if comp.jobs:
        lines.append("jobs:")
        for job in comp.jobs:
            state = "done" if job_done(job, paper_dir) else "new"
            total += (job.seconds or 0.0) if state == "new" else 0.0
            lines.append(f"  {job.name:16} {state:7} ~{_hours(job.seconds)}: {job.note}")
            lines.append(f"  {'':16} $ {' '.join(fill(list(job.argv), {'dir': paper_dir}))}")
    if comp.evals:
        lines.append("evaluations (evaluation sets, read once after every run has finished):")
        for e, model, n, done in evals:
            if model is None:
                lines.append(f"  {e.name:16} skipped: its run is blocked")
                continue
            cost = None if n is None else n / rates.sentences_per_s
            total += 0.0 if done or cost is None else cost
            lines.append(f"  {e.name:16} {'done' if done else 'new':7} "
                         f"{'?' if n is None else f'{n:,}'} sentences, ~{_hours(cost)}")
            lines.append(f"  {'':16} $ xlingua {' '.join(eval_command(model, e, paper_dir / 'eval' / f'{e.name}.json'))}")
    lines.append(f"claims: {len(comp.claims)}; estimated time still to spend: ~{_hours(total)} "
                 f"(at the rates of {rates.source}; a GPU takes a fraction of it)")
    return "\n".join(lines)


def _passes(task: str, opts: tuple) -> int:
    """Encoder passes over a task's sentences: Tatoeba with BERTScore encodes them again for tokens."""
    name = task.partition(":")[0]
    return 2 if name == "tatoeba" and any(o in (f"{name}.bertscore=true", "bertscore=true") for o in opts) else 1


def _safe_count(spec: str) -> int | None:
    try:
        return eval_sentences(spec)
    except (OSError, ValueError, KeyError):
        return None


# -- the table --------------------------------------------------------------------------------
def build_table(comp: Comparison, runs: list[Planned], shared: dict, results: dict) -> dict:
    blocked = {p.run.name: p.blocked for p in runs if p.state == "blocked"}
    blocked.update({e.name: blocked[e.model] for e in comp.evals if e.model in blocked})
    run_rows = []
    for p in runs:
        row = {**plan_row(p.run, p.template), "state": p.state, "blocked": p.blocked}
        if p.state == "done":
            done = json.loads((p.dir / DONE).read_text(encoding="utf-8"))
            row.update({"seconds": done.get("seconds"), "dev_mean": done.get("dev", {}).get("mean"),
                        "dev_mean_start": done.get("dev_start", {}).get("mean")})
        run_rows.append(row)
    measures = {}
    for c in comp.claims:
        for ref in (c.a, c.b):
            if isinstance(ref, Ref):
                measures[ref.measure.label] = ref.measure
    figures = {}
    for source, result in results.items():
        entries = [(source, result)] if "tasks" in result else [(f"{source}#{k}", v) for k, v in result.items()]
        for name, res in entries:
            for label, m in measures.items():
                try:
                    figures.setdefault(name, {})[label] = m.value(res)
                except (KeyError, ValueError):
                    pass
    return {"paper": comp.paper, "title": comp.title, "date": _now(), "shared_settings": shared,
            "runs": run_rows, "figures": figures,
            "claims": [claim_row(c, results, blocked) for c in comp.claims]}


def table_markdown(table: dict) -> str:
    out = [f"## {table['title']}", "", f"Written {table['date']}.", ""]
    out += ["| claim | figure | A | B | A - B | claimed | noise | verdict |", "|---|---|---|---|---:|---:|---:|---|"]
    sources: list[str] = []
    for c in table["claims"]:
        claimed = "> 0" if not c["threshold"] else f"> {_num(c['threshold'])}"
        marks = ""
        for src in c.get("sources", []):
            if src not in sources:
                sources.append(src)
            marks += f" [{sources.index(src) + 1}]"
        if "diff" in c:
            noise_ = "unmeasured" if c["noise"] is None else _num(c["noise"])
            out.append(f"| {c['claim']}{marks} | {c['measure']} | {_num(c['value_a'])} ({c['a']}) | "
                       f"{_num(c['value_b'])} ({c['b']}) | {_num(c['diff'], sign=True)} | {claimed} | {noise_} | "
                       f"{c['verdict']} |")
        else:
            out.append(f"| {c['claim']}{marks} | {c['measure']} | {c['a']} | {c['b']} | | {claimed} | | {c['verdict']} |")
    if sources:
        out += [""] + [f"[{i}] {src}" for i, src in enumerate(sources, 1)]
    if table["runs"]:
        out += ["", "| run | state | seed | steps x batch = pairs seen | steps per task | dev retrieval start -> end | training s |",
                "|---|---|---:|---|---|---|---:|"]
        for r in table["runs"]:
            per = ", ".join(f"{k} {v}" for k, v in (r["task_steps"] or {}).items())
            dev = (f"{r['dev_mean_start']:.2f} -> {r['dev_mean']:.2f}" if r.get("dev_mean") is not None
                   and r.get("dev_mean_start") is not None else "")
            state = r["state"] if r["state"] != "blocked" else f"blocked: {r['blocked']}"
            out.append(f"| {r['run']} | {state} | {r['seed']} | {r['steps']} x {r['batch']} = {r['pairs_seen']:,} | "
                       f"{per} | {dev} | {r.get('seconds') or ''} |")
    if table["figures"]:
        labels = sorted({l for f in table["figures"].values() for l in f})
        out += ["", "| result | " + " | ".join(labels) + " |", "|---" + "|---:" * len(labels) + "|"]
        for name, f in table["figures"].items():
            out.append(f"| {name} | " + " | ".join(f"{f[l]:.2f}" if l in f else "" for l in labels) + " |")
    return "\n".join(out) + "\n"


def _num(x: float, sign: bool = False) -> str:
    """Two decimals, three for figures under 1 (correlations)."""
    digits = 3 if abs(x) < 1 else 2
    return f"{x:+.{digits}f}" if sign else f"{x:.{digits}f}"


def write_table(paper_dir: Path, table: dict) -> None:
    write_json(paper_dir / "table.json", table)
    write_text(paper_dir / "table.md", table_markdown(table))
    if claim_bars(table):
        write_claims_plot(table, paper_dir / "claims.png")


VERDICT_COLOURS = {"reproduced": "tab:green", "reproduced in direction": "tab:olive",
                   "not reproduced": "tab:red"}


def claim_bars(table: dict) -> list[dict]:
    """One bar per measured claim: how far A − B lies past the claim's threshold (A − B − t; the
    claim holds where it is positive) and the noise beside it (None where unmeasured)."""
    return [{"label": f"{c['claim']}: {c['measure']}", "margin": c["diff"] - c["threshold"],
             "noise": c["noise"], "verdict": c["verdict"]}
            for c in table["claims"] if "diff" in c]


def write_claims_plot(table: dict, path: Path) -> None:
    """Horizontal bars of claim_bars, the seed noise as error bars, coloured by verdict."""
    import textwrap

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    bars = claim_bars(table)[::-1]  # the table's first claim on top
    labels = [textwrap.wrap(b["label"], 55) for b in bars]
    rows = [max(0.55, 0.14 * len(lines)) for lines in labels]  # room for a long label's lines
    y = [sum(rows[:i]) + rows[i] / 2 for i in range(len(rows))]
    fig, ax = plt.subplots(figsize=(11, 1.2 + sum(rows)))
    ax.barh(y, [b["margin"] for b in bars], height=0.4,
            xerr=[b["noise"] or 0.0 for b in bars],
            color=[VERDICT_COLOURS.get(b["verdict"], "tab:gray") for b in bars], capsize=3)
    ax.set_yticks(y, ["\n".join(lines) for lines in labels], fontsize=7)
    ax.set_ylim(0, sum(rows))
    for i, b in enumerate(bars):  # the figures in words: QE's Pearson and accuracy points share one axis
        noise = "no noise measured" if b["noise"] is None else f"noise {_num(b['noise'])}"
        ax.annotate(f"{_num(b['margin'], sign=True)} ({noise})", (0, y[i]), fontsize=6,
                    xytext=(-4 if b["margin"] > 0 else 4, 0), textcoords="offset points", va="center",
                    ha="right" if b["margin"] > 0 else "left")
    ax.axvline(0, color="black", linewidth=0.8)
    ax.margins(x=0.3)  # room for the words beside short bars
    ax.set_xlabel("A − B − threshold (points; the claim holds right of 0), error bar = seed noise")
    ax.set_title(f"{table['title']}: claims ({table['date'][:10]})", fontsize=10)
    ax.legend(handles=[matplotlib.patches.Patch(color=c, label=v) for v, c in VERDICT_COLOURS.items()],
              fontsize=7, loc="best")
    with atomic_open(path, "wb") as f:
        fig.savefig(f, format="png", dpi=110, bbox_inches="tight")
    plt.close(fig)


def _now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("paper", choices=sorted(COMPARISONS))
    ap.add_argument("--root", default=str(DEFAULT_ROOT), help="where runs, evaluations and the table go")
    ap.add_argument("--dry-run", action="store_true", help="print the plan and the commands; run nothing")
    ap.add_argument("--dev-only", action="store_true", help="train and read dev figures; leave the evaluation sets")
    ap.add_argument("--precision", default="fp32", choices=sorted(EVAL_SPECS),
                    help="bf16: train and evaluate under bfloat16 (about twice as fast on CPUs with AMX or "
                    "AVX512-BF16); every run of a comparison in the same precision")
    ap.add_argument("--table-only", action="store_true",
                    help="write the table of the results there are (claims not yet measured stay open); run nothing")
    ap.add_argument("--only", default="", help="train only these runs (comma-separated names), e.g. for "
                    "their dev figures; the evaluation sets wait until every run is done")
    ap.add_argument("--records", help="also keep each result (done.json of runs, evaluation results, the "
                    "table; no weights) under RECORDS/PAPER, and take from there what the root lacks: with "
                    "the same --root, a comparison goes on elsewhere without retraining the runs already "
                    "evaluated")
    args = ap.parse_args(argv)
    try:
        reproduce(args.paper, Path(args.root), dry_run=args.dry_run, dev_only=args.dev_only,
                  precision=args.precision, records=Path(args.records) if args.records else None,
                  table_only=args.table_only, only=tuple(n for n in args.only.split(",") if n))
    except PlanError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except RuntimeError as exc:  # a command failed: rerun to go on from where it stopped
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
