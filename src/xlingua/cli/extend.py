"""`xlingua extend` and `xlingua extend-report` (thin: the work is in training.extend.run and .report)."""
from __future__ import annotations

from pathlib import Path

import typer

from xlingua.cli.options import option, split_langs

LANG_HELP = ("A language code, a comma-separated list, or a group: tibetan (dz, bo), tifinagh (taq-Tfng, zgh), "
             "arabic-script (ace-Arab, bjn-Arab, knc-Arab); repeatable.")
PAIRS_HELP = "Your own translations, one `xx<TAB>english` pair a line, for the one --lang given (plain or gzip)."


def extend_command(
    lang: list[str] = option(None, "--lang", help=LANG_HELP + " With --lowres: that corpus's codes (default: all)."),
    out: Path = option(..., "--output", "--out", help="Run directory: checkpoint.pt, log.jsonl, report.json, best/ (the model)."),
    pairs: Path = typer.Option(None, "--pairs", help=PAIRS_HELP),
    model: str = option("bundled", "--model", help="The model to extend (an e5-family spec or a model directory); also the frozen teacher."),
    mix: float = typer.Option(None, "--mix", help="Share of steps on pairs of the model's original languages (general corpus), which keep them in place (default 0.3; 0 with --routed)."),
    rank_against: str = typer.Option("teacher", "--rank-against", help="Rank translations against the English vectors of the frozen teacher (as LASER3) or of the student being trained, which lets ranking reshape English too."),
    keep_ranking: float = typer.Option(0.0, "--keep-ranking", help="Translation-ranking weight on the original languages' pairs (0: distillation alone holds them)."),
    rows_only: bool = typer.Option(False, "--rows-only", help="Train the new pieces' rows alone (needs --new-pieces): text without a new piece embeds exactly as before; learns slowest."),
    sts: float = typer.Option(None, "--sts", help="Share of steps on CoSENT over stsb_multi_mt train, which keeps graded similarity (STS) in place; 0 = none (default 0.2; 0 with --routed)."),
    max_minutes: float = typer.Option(0.0, "--max-minutes", help="Training-time budget, summed over resumes (0 = none)."),
    max_steps: int = typer.Option(2000, "--max-steps", help="Optimizer steps (the learning rate decays to 0 at the last)."),
    new_pieces: int = typer.Option(0, "--new-pieces", help="Learn N SentencePiece pieces on the new languages and add those the tokenizer lacks (0 = none)."),
    spare_known: bool = typer.Option(False, "--spare-known", help="Drop the new pieces that the original languages' training text in the same scripts would use (both sides of their pairs, the new languages' pivot side, and with --lowres the corpus's languages not named by --lang): that text splits (and, with --rows-only, embeds) exactly as before."),
    lr: float = typer.Option(5e-5, "--lr", help="Peak learning rate."),
    pieces_lr: float = typer.Option(0.0, "--pieces-lr", help="Peak learning rate of the new pieces' embedding rows, which start as averages of their characters (0 = --lr)."),
    dropout: float = typer.Option(None, "--dropout", help="The model's dropout rate while training (default: its own, 0.1 for e5). 0 also makes bf16 training about 1.7x faster on CPU (eager attention)."),
    strip_harakat: bool = typer.Option(False, "--strip-harakat", help="Also train every Arabic-script pair (new languages and the mix) as a copy without harakat, for text written without vowel marks (with --new-pieces, pieces are learned on the copies too); the dev choice also reads each Arabic-script dev slice without its marks."),
    eval_every: int = typer.Option(200, "--eval-every", help="Steps between dev evaluations (each keeps the best model so far)."),
    lowres: bool = typer.Option(False, "--lowres", help="Train on the low-resource corpus's train pairs (pivot English or French) and choose the step on its dev slices (non-Bible pairs where a language has them) and the original languages'."),
    sources: str = typer.Option(None, "--sources", help="With --lowres: train on these of the corpus's sources alone, comma-separated (bible, ebible, mafand, globalvoices, hornmt, salt, kurdish-blark; default all). E.g. leave out the non-commercial mafand and kurdish-blark. Dev slices stay whole."),
    general_pairs: bool = typer.Option(False, "--general-pairs", help="With --lowres: also train on the general corpus's pairs of the same languages (NTREX news, NLLB-Seed Wikipedia: bm, dik, ee, ku, om, wo, yo), the text nearest other domains, and count their dev slices in the dev choice and the reports."),
    start: Path = typer.Option(None, "--start", help="Start the student from this model directory (an earlier run's best/, to train it further on a fresh schedule); --model stays the frozen teacher."),
    one_language_batches: bool = typer.Option(False, "--one-language-batches", help="Draw each batch of the new languages' pairs from one language (picked by the same temperature sampling), so the translations are ranked against sentences of their own language and source, as in their dev slices, not against text of other languages that is easy to tell apart."),
    seed: int = typer.Option(0, "--seed", help="Seed of the batches' order (a --start run takes another seed than the run it continues, to read other pairs first)."),
    routed: bool = typer.Option(False, "--routed", help="Train a student for the new languages alone (LASER3's way): it embeds only their text, the unchanged model embeds English and every other language, so nothing else can move; ship it with `xlingua ship --route`. The dev choice reads the new languages' side by the student and the other by the model."),
):
    """Teach the model new languages: distillation towards its own English vectors plus translation
    ranking (LASER3-style), with original-language pairs mixed in. Prints the dev report before and
    after; rerun the same command to resume. Then use --model OUT/best anywhere. With --lowres the
    new languages are the low-resource corpus's (all 17 unless --lang names some)."""
    from xlingua.training.extend.run import ExtendOptions, check, extend

    mix = (0.0 if routed else 0.3) if mix is None else mix
    sts = (0.0 if routed else 0.2) if sts is None else sts
    opts = ExtendOptions(langs=split_langs(lang), out=str(out), model=model, pairs=None if pairs is None else str(pairs), mix=mix,
                         sts=sts, routed=routed, rank_against=rank_against, keep_ranking=keep_ranking, rows_only=rows_only,
                         max_minutes=max_minutes, max_steps=max_steps, new_pieces=new_pieces, lr=lr,
                         pieces_lr=pieces_lr, spare_known=spare_known, lowres=lowres, dropout=dropout, strip_harakat=strip_harakat,
                         eval_every=eval_every, start=None if start is None else str(start), seed=seed, general_pairs=general_pairs,
                         one_language_batches=one_language_batches,
                         sources=None if sources is None else [s.strip() for s in sources.split(",") if s.strip()])
    check(opts)  # bad input fails here, before any model loads
    extend(opts, echo=typer.echo)


def report_command(
    lang: list[str] = option(None, "--lang", help=LANG_HELP + " With --lowres: that corpus's codes (default: all)."),
    pairs: Path = typer.Option(None, "--pairs", help=PAIRS_HELP),
    model: str = option("bundled", "--model", help="Encoder spec or model directory."),
    output: Path = option(None, "--output", help="Also write the report as JSON here."),
    lowres: bool = typer.Option(False, "--lowres", help="Report the low-resource corpus's dev slices instead (xx->pivot, pivot->xx; Bible and non-Bible apart; the mean)."),
    strip_harakat: bool = typer.Option(False, "--strip-harakat", help="Read the non-English side without its Arabic-script vowel marks (harakat, as `extend --strip-harakat` strips them); each language also counts the sentences that changed."),
):
    """Retrieval error per language, xx->en and en->xx, on each language's held-out dev pairs (the
    general corpus's NLLB-Seed or NTREX slice, or a fifth of --pairs up to 500); with --lowres,
    xx->pivot and pivot->xx on the low-resource corpus's dev slices."""
    lang = None if lang is None else split_langs(lang)
    if lowres:
        if strip_harakat:
            raise ValueError("--strip-harakat is for the general-corpus report: no language of the "
                             "low-resource corpus is written in Arabic script")
        return _lowres_report(lang, pairs, model, output)
    from xlingua.data.general import read_own_pairs
    from xlingua.encoders.loading import load_encoder
    from xlingua.io import check_writable, write_json
    from xlingua.training.extend.langs import resolve_langs
    from xlingua.training.extend.report import dev_report, format_report

    langs = resolve_langs(lang, None if pairs is None else str(pairs))
    pair_files = {langs[0]: str(pairs)} if pairs is not None else {}
    for code, path in pair_files.items():
        read_own_pairs(path, code, "dev")  # a bad line fails before the model loads
    if output is not None:
        check_writable(output)
    report = dev_report(load_encoder(model), langs, pair_files, strip_harakat=strip_harakat)
    typer.echo(format_report(report))
    if output is not None:
        write_json(output, {"model": model, **({"strip_harakat": True} if strip_harakat else {}), "report": report})


def _lowres_report(lang, pairs, model: str, output) -> None:
    from xlingua.data.lowres import dev_by_language
    from xlingua.encoders.loading import load_encoder
    from xlingua.io import check_writable, write_json
    from xlingua.training.extend.lowres_report import format_lowres_report, lowres_report

    if pairs is not None:
        raise ValueError("--pairs is for the general-corpus report; --lowres reads the low-resource corpus only")
    dev = dev_by_language(lang or None)  # a bad file or line fails before the model loads
    if output is not None:
        check_writable(output)
    report = lowres_report(load_encoder(model), dev)
    typer.echo(format_lowres_report(report))
    if output is not None:
        write_json(output, {"model": model, "corpus": "lowres", "report": report})
