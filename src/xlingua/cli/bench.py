"""`xlingua bench ...` commands (thin: the work is in xlingua.bench)."""
from __future__ import annotations

from pathlib import Path

import typer

from xlingua.cli.errors import Typer
from xlingua.cli.options import MODEL_HELP, option

bench_app = Typer(no_args_is_help=True, help="Speed and quality benchmarks.")


@bench_app.command("embed")
def bench_embed_command(
    n: int = typer.Option(5000, "--n", help="Sentences (fixed-seed sample of the l10n dev files)."),
    rounds: int = typer.Option(10, help="Interleaved timing rounds."),
    seed: int = typer.Option(0, help="Sampling seed."),
    path: list[str] = typer.Option(None, "--path", help="Paths to time (repeatable); default: bundled, bundled:torch, bundled:onnx, bundled:fast, use, sentence-transformers."),
    out: str = option(None, "--output", "--out", help="Directory for embed_bench.json / .md (default $XLINGUA_HOME/bench/embed)."),
    reference: str = typer.Option("bundled:torch", "--reference", help="The fp32 path cosines are taken against (e.g. DIR when timing bf16:DIR)."),
    peer_python: str = typer.Option(None, "--peer-python", help="A Python with sentence-transformers[onnx,openvino] (docs/engines.md): runs the sentence-transformers peers on the reference's model directory, in their own process."),
    peer: list[str] = typer.Option(None, "--peer", help="A peer to time (repeatable): st:torch, st:onnx, st:openvino, st:onnx-int8, st:openvino-int8; default with --peer-python: all."),
):
    """Embedding speed of each path vs sentence-transformers, and cosine to the fp32 reference."""
    from rich.console import Console

    from xlingua.bench.embed import DEFAULT_PATHS, markdown, run_bench
    from xlingua.bench.peers import PEERS

    unknown = [p for p in peer or [] if p not in PEERS]
    if unknown:
        raise ValueError(f"--peer {unknown[0]}: unknown peer; choose from {', '.join(PEERS)}")
    peers = peer or (PEERS if peer_python else ())
    report = run_bench(n=n, rounds=rounds, seed=seed, paths=path or DEFAULT_PATHS, out_dir=out,
                       reference=reference, peers=peers, peer_python=peer_python)
    Console().print(markdown(report), markup=False)


@bench_app.command("peak")
def bench_peak_command(
    model: str = option("bundled", "--model", help="The model whose linear layers are multiplied (a BERT-style transformer)."),
    dtype: list[str] = typer.Option(None, "--dtype", help="fp32, bf16 or int8 (repeatable); default: each one this CPU has."),
    seconds: float = typer.Option(3.0, help="Seconds per dtype."),
    tokens: int = typer.Option(8192, help="Rows of each product: the tokens of one batch."),
):
    """This CPU's matrix-multiply rate (GFLOP/s) per dtype on the model's linear layers: the peak
    `bench embed` sets each path against."""
    from xlingua.bench.embed import peak_report

    typer.echo(peak_report(model, dtype or None, seconds, tokens))


@bench_app.command("prepare")
def bench_prepare_command(
    src_lang: str = option("de", "--src-lang", help="Source language (a newstest language)."),
    tgt_lang: str = option("en", "--tgt-lang", help="en, or the source language again."),
    noise_lang: str = typer.Option("fr", "--noise-lang", help="Language of the lines mixed in."),
    pairs: int = typer.Option(200, "--pairs", help="newstest pairs the documents are cut from."),
    keep: float = typer.Option(0.8, "--keep", help="Chance a sentence is kept on each side."),
    seed: int = typer.Option(0, "--seed"),
    model: str = option("bundled", "--model", help=MODEL_HELP + " toy: character n-grams (source = target language only)."),
    out: str = option("prepare_mine", "--output", "--out", help="Directory for the crawl, the runs and prepare_mine.json / .md."),
    workdir: str = typer.Option(None, "--workdir", help="Cache of the runs (default OUT/work)."),
):
    """Mining F1 on crawled documents built from newstest: raw lines vs split only vs `prepare`."""
    from xlingua.bench.prepare import markdown, run
    from xlingua.io import write_json, write_text

    report = run(src_lang, tgt_lang, noise_lang, pairs, keep, seed, model, Path(out), workdir)
    md = markdown(report)
    typer.echo(md)
    write_json(Path(out, "prepare_mine.json"), report)
    write_text(Path(out, "prepare_mine.md"), md + "\n")
