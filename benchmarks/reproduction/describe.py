"""The plan in words (what --dry-run prints): each run, job and evaluation with its state, its
command and its estimated time."""

from pathlib import Path

from .bookkeeping import (Planned, eval_command, eval_done, eval_model, examples_seen, fill, job_done, plan_row,
                          train_command)
from .comparison import Comparison
from .cost import Rates, encoder_passes, known_sentences, measured_rates, other_comparisons_work, train_estimate


def _hours(seconds: float | None) -> str:
    if seconds is None:
        return "?"
    return f"{seconds / 60:.0f} min" if seconds < 3600 else f"{seconds / 3600:.1f} h"


def sized_evals(comp: Comparison, planned: dict[str, Planned], paper_dir: Path) -> list[tuple]:
    """(eval, model or None when its run is blocked, sentences it embeds or None, done) of each
    evaluation."""
    evals = []
    counted: dict[str, int | None] = {}
    seen: set = set()  # a task already run on the same model embeds nothing new (the cache)
    for e in comp.evals:
        if e.model in planned and planned[e.model].state == "blocked":
            evals.append((e, None, None, False))
            continue
        sizes = []
        for t in e.tasks:
            if t not in counted:
                counted[t] = known_sentences(t)
            base = counted[t]
            sizes.append(0 if (e.model, t) in seen else None if base is None else base * encoder_passes(t, e.opts))
        seen.update((e.model, t) for t in e.tasks)
        n = None if any(x is None for x in sizes) else sum(sizes)
        model = eval_model(e, planned, comp.precision)
        evals.append((e, model, n, eval_done(paper_dir / "eval" / f"{e.name}.json", model, e.opts)))
    return evals


def plan_rates(comp: Comparison, runs: list[Planned], evals: list[tuple], paper_dir: Path) -> Rates:
    """The rates measured on what this comparison has finished, else on the other comparisons'
    work, else the reference ones."""
    planned = {p.run.name for p in runs}
    # a fixed model's sentence vectors are often in the cache already: its evaluation times only
    # when no trained model's has finished
    timed = [(n, paper_dir / "eval" / f"{e.name}.json", e.model in planned) for e, _, n, done in evals if done]
    timed = [t[:2] for t in timed if t[2]] or [t[:2] for t in timed]
    rates = measured_rates([(p.dir, p.recipe) for p in runs if p.state == "done"], timed, paper_dir)
    if rates == Rates():  # nothing of its own finished yet
        rates = measured_rates(*other_comparisons_work(paper_dir, comp.precision), paper_dir,
                               name="the other comparisons under the same root, in the same precision")
    return rates


def _shared_line(runs: list[Planned], shared: dict) -> str:
    s = {k: shared.get(k, "default") for k in ("max_steps", "batch_size", "grad_accum", "model",
                                               "max_seq_length", "lr", "schedule", "warmup_steps", "precision")}
    return (f"equal compute: every run {s['max_steps']} steps x batch {s['batch_size']} "
            f"(gradient accumulation {s['grad_accum']}) = {examples_seen(runs[0].template):,} pairs seen; "
            f"start {s['model']}, max length {s['max_seq_length']}, lr {s['lr']}, {s['schedule']} schedule, "
            f"warm-up {s['warmup_steps']}, precision {s['precision']}; only tasks and seed differ")


def _run_lines(runs: list[Planned], rates: Rates) -> tuple[list[str], list[float]]:
    """Two lines per run (what it is, its command) and the seconds each has still to take."""
    lines, costs = [], []
    for p in runs:
        row = plan_row(p.run, p.template)
        per = ", ".join(f"{k} {v} steps / {row['task_pairs'][k]:,} pairs" for k, v in row["task_steps"].items()) \
            if row["task_steps"] else "drawn at random"
        if p.state == "blocked":
            lines.append(f"  {p.run.name:16} BLOCKED: {p.blocked}")
            continue
        cost = train_estimate(p.recipe, rates)
        costs.append(cost if p.state != "done" else 0.0)
        lines.append(f"  {p.run.name:16} {p.state:7} seed {row['seed']}  {row['steps']} steps x {row['batch']} = "
                     f"{row['pairs_seen']:,} pairs ({per}); ~{_hours(cost)}: {p.run.note}")
        lines.append(f"  {'':16} $ xlingua {' '.join(train_command(p.dir, p.state))}")
    return lines, costs


def _job_lines(comp: Comparison, paper_dir: Path) -> tuple[list[str], list[float]]:
    lines, costs = [], []
    for job in comp.jobs:
        state = "done" if job_done(job, paper_dir) else "new"
        costs.append((job.seconds or 0.0) if state == "new" else 0.0)
        lines.append(f"  {job.name:16} {state:7} ~{_hours(job.seconds)}: {job.note}")
        lines.append(f"  {'':16} $ {' '.join(fill(list(job.argv), {'dir': paper_dir}))}")
    return lines, costs


def _eval_lines(evals: list[tuple], rates: Rates, paper_dir: Path) -> tuple[list[str], list[float]]:
    lines, costs = [], []
    for e, model, n, done in evals:
        if model is None:
            lines.append(f"  {e.name:16} skipped: its run is blocked")
            continue
        cost = None if n is None else n / rates.sentences_per_s
        costs.append(0.0 if done or cost is None else cost)
        lines.append(f"  {e.name:16} {'done' if done else 'new':7} "
                     f"{'?' if n is None else f'{n:,}'} sentences, ~{_hours(cost)}")
        lines.append(f"  {'':16} $ xlingua {' '.join(eval_command(model, e, paper_dir / 'eval' / f'{e.name}.json'))}")
    return lines, costs


def describe_plan(comp: Comparison, runs: list[Planned], shared: dict, paper_dir: Path) -> str:
    evals = sized_evals(comp, {p.run.name: p for p in runs}, paper_dir)
    rates = plan_rates(comp, runs, evals, paper_dir)
    lines = [f"# {comp.paper}: {comp.title} -> {paper_dir}"]
    run_lines, run_costs = _run_lines(runs, rates)
    if runs:
        lines += [_shared_line(runs, shared), "runs (training; dev = general dev slices at step 0 and at the end):"]
    lines += run_lines
    job_lines, job_costs = _job_lines(comp, paper_dir)
    if comp.jobs:
        lines += ["jobs:"] + job_lines
    eval_lines, eval_costs = _eval_lines(evals, rates, paper_dir)
    if comp.evals:
        lines += ["evaluations (evaluation sets, read once after every run has finished):"] + eval_lines
    total = 0.0
    for cost in run_costs + job_costs + eval_costs:  # plain addition in order (sum() compensates from 3.12)
        total += cost
    lines.append(f"claims: {len(comp.claims)}; estimated time still to spend: ~{_hours(total)} "
                 f"(at the rates of {rates.source}; a GPU takes a fraction of it)")
    return "\n".join(lines)
