"""`xlingua prepare` (thin: the work is in xlingua.mining.prepare)."""
from __future__ import annotations

import typer

from xlingua.cli.options import option


def prepare_command(
    inputs: list[str] = typer.Argument(..., help="Documents (plain or .gz): one a line, blank-line separated, or id<TAB>text (see --format); pipes such as <(zcat x.gz) work, and - for stdin."),
    output: str = option(..., "--output", help="Output directory: LANG.txt (id<TAB>sentence, what `mine` reads) and LANG.summary.json."),
    lang: str = option(..., "--lang", help="Language to keep (ISO 639, optionally with a script: sr-Latn)."),
    fmt: str = typer.Option("line", "--format", help="line (a document a line) | blank (documents separated by blank lines) | tsv (id<TAB>text)."),
    workdir: str = typer.Option(None, "--workdir", help="Cache of every step (default $XLINGUA_HOME/prepare); a rerun resumes."),
    ray: str = typer.Option(None, "--ray", help="Run shard tasks on Ray: 'local' or a cluster address."),
    shard_docs: int = typer.Option(10_000, help="Documents per shard task."),
    min_chars: int = typer.Option(10, help="Shorter sentences are dropped."),
    max_chars: int = typer.Option(500, help="Longer sentences are dropped."),
    lid_threshold: float = typer.Option(None, help="Language-identification probability to keep a sentence (default: the language's measured threshold, 0.5 for most)."),
    no_lid: bool = typer.Option(False, "--no-lid", help="Skip language identification (the script check stays)."),
    no_dedup: bool = typer.Option(False, "--no-dedup", help="Keep repeated sentences."),
    errors: str = typer.Option("strict", help="Invalid UTF-8: strict (error with file:line) | replace (sentences with U+FFFD are dropped and counted)."),
    max_doc_chars: int = typer.Option(1_000_000, help="A longer document (input line) is an error."),
):
    """Split documents into sentences, filter, identify the language, deduplicate: the input `mine` wants."""
    from rich.console import Console
    from rich.table import Table

    from xlingua.mining.filters import FilterConfig
    from xlingua.mining.prepare import PrepareConfig, output_paths, prepare

    config = PrepareConfig(lang, format=fmt, filters=FilterConfig(min_chars=min_chars, max_chars=max_chars),
                           lid=not no_lid, lid_threshold=lid_threshold, dedup=not no_dedup,
                           shard_docs=shard_docs, errors=errors, max_doc_chars=max_doc_chars)
    summary = prepare(inputs, output, config, workdir=workdir, ray=ray)
    table = Table(title=f"kept {summary['kept']:,} of {summary['sentences']:,} sentences -> {summary['output']}")
    table.add_column("dropped by")
    table.add_column("sentences", justify="right")
    for rule, n in summary["dropped"].items():
        if n:
            table.add_row(rule, f"{n:,}")
    Console().print(table)
    if not summary["lid"]["used"]:
        typer.echo(f"language identification: {summary['lid']['reason']}")
    typer.echo(f"summary: {output_paths(output, summary['lang'])[1]}")
