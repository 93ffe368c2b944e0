"""`xlingua eval`: lists, compares or runs the tasks of xlingua.evaluation (its runner and report)."""
from __future__ import annotations

from pathlib import Path

import typer

from xlingua.cli.options import MODEL_OPTION, option


def eval_command(
    tasks: list[str] = typer.Argument(None, help="Tasks (see --list); TASK:SUBSET picks a subset, e.g. tatoeba:all."),
    model: str = MODEL_OPTION,
    limit: int = typer.Option(None, "--limit", help="At most N items per language / set (quick runs)."),
    data_dir: str = typer.Option(None, "--data-dir", help="Benchmark root (default $XLINGUA_DATA or ../shared/benchmarks)."),
    output: str = option(None, "--output", help="Result JSON; a .md table is written beside it."),
    opt: list[str] = option(None, "--set", "--opt", help="A task option as KEY=VALUE or TASK.KEY=VALUE, e.g. alpha=0.3 (repeatable)."),
    list_tasks: bool = typer.Option(False, "--list", help="List the tasks and their options."),
    compare: bool = typer.Option(False, "--compare", help="Set two result JSONs (given as the arguments; a pipe or - "
                                 "works for either) side by side."),
    no_cache: bool = typer.Option(False, "--no-cache", help="Don't use the on-disk embedding cache."),
    batch_size: int = typer.Option(64, help="Encoder batch size."),
):
    """Evaluate an encoder on the standard benchmarks (Tatoeba, BUCC, STS, QE, XNLI, ...)."""
    from rich.console import Console

    from xlingua.evaluation import report, runner
    from xlingua.evaluation.registry import get_task, task_names
    from xlingua.io import check_writable, write_text

    tasks = tasks or []
    console = Console()
    if list_tasks:
        for name in task_names():
            t = get_task(name)
            options = ", ".join(f"{k}={v}" for k, v in t.default_options.items()) or "-"
            console.print(f"[bold]{name:10}[/] {t.description}\n{'':11}data: {t.data}\n{'':11}options: {options}")
        return
    if compare:
        from xlingua.data.spool import Spool

        if len(tasks) != 2:
            raise ValueError("--compare takes two result files: --compare A.json B.json")
        with Spool(tasks, max_chars=None) as spool:  # pipes and - (for one of them) too
            a, b = (runner.load_result(p) for p in spool.paths)
        typer.echo(report.compare(a, b))
        return
    if not tasks:
        raise ValueError("name at least one task (see --list)")
    runner.check(tasks, limit)
    if output:
        check_writable(output)
    from xlingua.encoders.cache import CachedEncoder
    from xlingua.encoders.loading import load_encoder

    encoder = load_encoder(model)
    if not no_cache:
        encoder = CachedEncoder(encoder)
    result = runner.run(encoder, tasks, model=model, limit=limit, data_dir=data_dir, options=opt or [],
                        output=output, batch_size=batch_size, echo=console.print)
    md = report.to_markdown(result)
    typer.echo(md)
    if output:
        md_path = Path(output).with_suffix(".md")
        runner.write_json(output, result)
        write_text(md_path, md)
        console.print(f"results: {output} and {md_path}")
