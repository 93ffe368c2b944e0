"""Running what a comparison plans: `xlingua ...` and `python benchmarks/...` commands as this
interpreter runs them, each logged, and the results they leave collected."""

import json
import os
import subprocess
import sys
from pathlib import Path

import yaml

from xlingua.io import write_json

from .bookkeeping import (Planned, eval_done, eval_model, fill, finish_run, job_done, job_marker, now,
                          train_command)
from .comparison import Comparison, Job, PlanError
from .settings import DONE, RECIPE, REPO


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
        f.write(f"\n$ {' '.join(map(str, argv))}  # {now()}\n")
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


def run_job(job: Job, paper_dir: Path, runner=execute) -> None:
    if job_done(job, paper_dir):
        return
    argv = fill(list(job.argv), {"dir": paper_dir})
    runner(argv, paper_dir / "jobs" / f"{job.name}.out")
    marker, ident = job_marker(job, paper_dir)
    write_json(marker, {"argv_hash": ident, "argv": argv, "date": now()})


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
