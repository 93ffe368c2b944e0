"""The work behind `xlingua eval` (the typer command in xlingua.cli only parses arguments)."""
from __future__ import annotations

from pathlib import Path

import typer

from xlingua.evaluation.registry import get_task, task_names
from xlingua.io import check_writable, write_text


def eval_main(tasks: list[str], *, model: str, limit: int | None, data_dir: str | None, output: str | None,
              opts: list[str], list_tasks: bool, compare: bool, no_cache: bool, batch_size: int) -> int:
    from rich.console import Console

    from xlingua.evaluation import report, runner

    console = Console()
    if list_tasks:
        for name in task_names():
            t = get_task(name)
            options = ", ".join(f"{k}={v}" for k, v in t.default_options.items()) or "-"
            console.print(f"[bold]{name:10}[/] {t.description}\n{'':11}data: {t.data}\n{'':11}options: {options}")
        return 0
    if compare:
        if len(tasks) != 2:
            raise ValueError("--compare takes two result files: --compare A.json B.json")
        a, b = (runner.load_result(p) for p in tasks)
        typer.echo(report.compare(a, b))
        return 0
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
    result = runner.run(encoder, tasks, model=model, limit=limit, data_dir=data_dir, options=opts,
                        output=output, batch_size=batch_size, echo=console.print)
    md = report.to_markdown(result)
    typer.echo(md)
    if output:
        md_path = Path(output).with_suffix(".md")
        runner.write_json(output, result)
        write_text(md_path, md)
        console.print(f"results: {output} and {md_path}")
    return 0
