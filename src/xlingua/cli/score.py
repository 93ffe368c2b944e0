"""`xlingua score` (thin: the work is in xlingua.score)."""
from __future__ import annotations

import typer

from xlingua.cli.options import ERRORS_OPTION, MODEL_OPTION, SRC_LANG_HELP, TGT_LANG_HELP, option


def score_command(
    inputs: list[str] = typer.Argument(..., help="SRC TGT (two line-aligned files) or one src<TAB>tgt file; plain or .gz; "
                                        "a pipe such as <(cut -f1 x.tsv) works, and - (stdin) for one of them."),
    output: str = option(..., "--output", help="OUT.tsv: a header row naming the columns (cosine[<TAB>margin][<TAB>qe]), "
                               "then one row per pair, in order."),
    model: str = MODEL_OPTION,
    margin: bool = typer.Option(False, "--margin", help="Add the ratio margin, neighbours taken within the same files."),
    k: int = typer.Option(4, "--k", help="Neighbours for the margin."),
    qe: bool = typer.Option(False, "--qe", help="Add a trained quality estimate (z-units of human judgement: 0 an average "
                            "translation, +1 one standard deviation better), from a head fitted on WMT20 MLQE-PE; "
                            "give --src-lang/--tgt-lang to use a trained pair's own head."),
    qe_model: str = typer.Option(None, "--qe-model", help="QE model: a shipped name (qe-cross, the default; qe-small, heads on the sentence vectors only, about 3x faster) or a directory (`xlingua qe train` / `qe cross` run, shipped copy)."),
    threshold: float = option(None, "--threshold", "--min-score", help="Also write the pairs scoring >= T (the last column: qe, else margin, else cosine) beside OUT: OUT.kept.tsv, or OUT.kept.src / OUT.kept.tgt."),
    src_lang: str = option(None, "--src-lang", help=SRC_LANG_HELP[:-1] + " (for encoders that use it, and --qe)."),
    tgt_lang: str = option(None, "--tgt-lang", help=TGT_LANG_HELP),
    errors: str = ERRORS_OPTION,
    max_chars: int = typer.Option(1_000_000, help="Lines longer than this are an error."),
    no_header: bool = typer.Option(False, "--no-header", help="Leave out the header row: row i is pair i."),
):
    """Score given translation pairs (bitext filtering, reference-free QE): one row per pair."""
    from xlingua.data.spool import Spool
    from xlingua.data.text import ERRORS_HINT, count_pairs
    from xlingua.encoders.loading import load_encoder
    from xlingua.io import check_writable
    from xlingua.qe.load import load_qe, qe_route_text
    from xlingua.score import ScoreConfig, check_qe_pairs, qe_pair, score_files

    config = ScoreConfig(margin=margin, k=k, min_score=threshold, src_lang=src_lang,
                         tgt_lang=tgt_lang, errors=errors, max_chars=max_chars, header=not no_header)
    check_writable(output)
    with Spool(inputs, errors=errors, max_chars=max_chars, hint=ERRORS_HINT) as spool:
        inputs = spool.paths  # a pipe is read (and checked) once, into a temporary copy
        n = count_pairs(inputs, errors=errors, max_chars=max_chars)  # before the model loads
        if qe or qe_model:
            check_qe_pairs(inputs, errors=errors, max_chars=max_chars)
        encoder = load_encoder(model)
        if qe or qe_model:
            config.qe = load_qe(qe_model, encoder)
            typer.echo(qe_route_text(config.qe, qe_pair(src_lang, tgt_lang)), err=True)
        result = score_files(lambda texts, lang: encoder.encode(texts, lang=lang), inputs, output,
                             config, n=n)
    typer.echo(f"scored {result.pairs:,} pairs -> {result.output}", err=True)
    if result.kept is not None:
        typer.echo(f"kept {result.kept:,} pairs -> {', '.join(map(str, result.kept_files))}", err=True)
