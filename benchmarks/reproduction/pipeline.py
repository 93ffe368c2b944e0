"""A comparison from plan to table: train what is not done, evaluate once every run is done,
write the table and the plot, keep the records."""

from pathlib import Path

from xlingua.io import write_json, write_text

from .bookkeeping import eval_command, eval_done, eval_model, in_precision, plan
from .commands import collect, execute, run_job, train_run
from .comparison import Comparison, PlanError
from .describe import describe_plan
from .papers import COMPARISONS
from .plot import claim_bars, write_claims_plot
from .records import restore_records, save_records
from .settings import CONFIGS, DEFAULT_ROOT
from .table import build_table, table_markdown


def write_table(paper_dir: Path, table: dict) -> None:
    write_json(paper_dir / "table.json", table)
    write_text(paper_dir / "table.md", table_markdown(table))
    if claim_bars(table):
        write_claims_plot(table, paper_dir / "claims.png")


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
