"""`xlingua mine` (thin: the work is in xlingua.mining)."""
from __future__ import annotations

import typer

from xlingua.cli.options import MODEL_OPTION, SRC_LANG_HELP, TGT_LANG_HELP, option


def mine_command(
    src: str = typer.Argument(..., help="Source corpus: one sentence a line (or id<TAB>sentence), plain or .gz; a pipe such as <(zcat x.gz) works, and - (stdin) for one side."),
    tgt: str = typer.Argument(..., help="Target corpus, same format."),
    output: str = option(..., "--output", help="Output pairs, gzipped TSV (score, src, tgt[, ids])."),
    src_lang: str = option(..., "--src-lang", help=SRC_LANG_HELP),
    tgt_lang: str = option(..., "--tgt-lang", help=TGT_LANG_HELP),
    model: str = MODEL_OPTION,
    workdir: str = typer.Option(None, "--workdir", help="Cache of every step (default $XLINGUA_HOME/mine)."),
    margin: str = typer.Option("ratio", help="ratio | distance | absolute (plain cosine) | csls | inbatch."),
    k: int = typer.Option(4, "--k", help="Neighbours for the margin."),
    mode: str = typer.Option("max", help="forward | backward | intersect | max | union."),
    threshold: float = option(None, "--threshold", help="Keep pairs with score >= T (default: all pairs the mode chooses; with --rescore, 1.04 on the second model's margin)."),
    dedup: bool = typer.Option(False, "--dedup", help="Drop repeated sentences on each side before mining."),
    calibrate: str = typer.Option(None, "--calibrate", help="Gold pairs (src-id<TAB>tgt-id; a file or a pipe): use the F1-best threshold, report P/R/F1."),
    ray: str = typer.Option(None, "--ray", help="Run shard tasks on Ray: 'local' or a cluster address (ray://host:10001 or auto)."),
    index: str = typer.Option("auto", help="auto (exact Flat up to 200k lines, then IVF<n>,Flat lists searched as multiplies, IVF-PQ beyond 4 GiB of vectors), Flat, or a FAISS factory string."),
    nprobe: int = typer.Option(128, help="Inverted lists visited per query (IVF indexes)."),
    shard_size: int = typer.Option(100_000, help="Sentences per shard (bounds memory)."),
    batch_size: int = typer.Option(64, help="Encoder batch size (encoders batched by count; the bundled paths batch by tokens). Not part of the cache key: it moves no vector."),
    skip_lang_check: bool = typer.Option(False, "--skip-lang-check", help="Don't check that each corpus is written in its language's script."),
    src_embeddings: str = typer.Option(None, "--src-embeddings", help="DIR that `xlingua embed SRC -o DIR --shard-size N` wrote (--ids for id<TAB>sentence corpora): its rows are used, SRC is not embedded again."),
    tgt_embeddings: str = typer.Option(None, "--tgt-embeddings", help="The same for TGT; both sides must come from the same model."),
    prepare: bool = typer.Option(False, "--prepare", help="The corpora are raw documents: run `xlingua prepare` (default settings) on each first."),
    prepare_format: str = typer.Option("line", "--prepare-format", help="Document format for --prepare: line | blank | tsv."),
    rescore: str = typer.Option(None, "--rescore", help="Two stages: --model (e.g. static-small) proposes candidates "
                                "by margin, this model (e.g. bundled) embeds only their sentences and neighbours and scores them by its margin."),
    candidate_threshold: float = typer.Option(None, "--candidate-threshold", help="With --rescore: the first model's margin a pair needs to be re-scored (default 1.0, chosen on dev)."),
    lid: bool = typer.Option(None, "--lid/--no-lid", help="Mine only the lines identified as --src-lang and --tgt-lang (language identification of every line first, as stopes does). Default: on with --rescore, off otherwise."),
    keep: float = typer.Option(None, help="With --rescore: at most this fraction of the source sentences' count of candidates, best first."),
):
    """Mine parallel sentence pairs from two monolingual corpora (LASER / stopes style)."""
    from rich.console import Console
    from rich.table import Table

    from xlingua.mining import MineConfig, mine, summary_path

    config = MineConfig(src_lang, tgt_lang, model=model, margin=margin, k=k, mode=mode,
                        threshold=threshold, dedup=dedup, shard_size=shard_size, index=index,
                        nprobe=nprobe, batch_size=batch_size, check_lang=not skip_lang_check,
                        src_embeddings=src_embeddings, tgt_embeddings=tgt_embeddings, rescore=rescore,
                        keep=keep, lid=lid,
                        **({} if candidate_threshold is None else {"candidate_threshold": candidate_threshold}))
    summary = mine(src, tgt, output, config, workdir=workdir, ray=ray, calibrate=calibrate,
                   prepare_format=prepare_format if prepare else None)
    table = Table(title=f"mined {summary['written']:,} pairs -> {output}")
    for col in ("stage", "seconds", "cached", "peak RSS MiB"):
        table.add_column(col)
    for name, t in summary["timings"].items():
        table.add_row(name, f"{t['seconds']:.2f}", "yes" if t["cached"] else "", f"{t['peak_rss_mb']:.0f}")
    Console().print(table)
    if summary["calibration"]:
        c = summary["calibration"]
        typer.echo(f"calibrated threshold {c['threshold']:.6f}: P {c['precision']:.4f} "
                   f"R {c['recall']:.4f} F1 {c['f1']:.4f}")
    typer.echo(f"summary: {summary_path(output)}")
