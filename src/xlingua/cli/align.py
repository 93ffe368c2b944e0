"""`xlingua align` (thin: the work is in xlingua.align)."""
from __future__ import annotations

import typer

from xlingua.cli.options import ERRORS_OPTION, MODEL_OPTION, option


def align_command(
    doc_a: str = typer.Argument(..., help="Document A: plain text, one paragraph (or sentence) a line; plain or .gz; "
                                "a pipe such as <(zcat a.gz) works, and - (stdin) for one of the two."),
    doc_b: str = typer.Argument(..., help="Document B, its translation, same format."),
    output: str = option(..., "--output", help="OUT.tsv: a header row naming the columns (a_start a_end "
                               "b_start b_end score a_text b_text), then one row per aligned group."),
    model: str = MODEL_OPTION,
    src_lang: str = option(None, "--src-lang", "--lang-a", help="Language code of document A (sentence splitting, encoders "
                           "that use it)."),
    tgt_lang: str = option(None, "--tgt-lang", "--lang-b", help="Language code of document B."),
    no_split: bool = typer.Option(False, "--no-split", help="Lines are sentences already: don't split them."),
    skip_quantile: float = typer.Option(0.2, help="Cost of leaving a sentence unaligned, as this quantile of all 1-1 costs."),
    errors: str = ERRORS_OPTION,
    max_chars: int = typer.Option(1_000_000, help="Lines longer than this are an error."),
    no_header: bool = typer.Option(False, "--no-header", help="Leave out the header row."),
):
    """Align the sentences of two ordered documents (1-1, 1-2, 2-1, 1-0, 0-1, as Vecalign)."""
    from xlingua.align import align_sentences, read_document, write_alignment
    from xlingua.data.spool import Spool
    from xlingua.data.text import ERRORS_HINT
    from xlingua.encoders.loading import load_encoder
    from xlingua.io import check_writable
    from xlingua.data.langs import normalize_lang

    for code in (src_lang, tgt_lang):
        if code is not None:
            normalize_lang(code)
    check_writable(output)
    with Spool([doc_a, doc_b], errors=errors, max_chars=max_chars, hint=ERRORS_HINT) as spool:
        a, b = (read_document(p, not no_split, lang, errors, max_chars)  # before the model loads
                for p, lang in zip(spool.paths, (src_lang, tgt_lang)))
    encoder = load_encoder(model)
    result = align_sentences(lambda texts, lang: encoder.encode(texts, lang=lang), a, b,
                             src_lang, tgt_lang, skip_quantile)
    out = write_alignment(result, output, header=not no_header)
    aligned = sum(1 for bd in result.beads if bd.score is not None)
    typer.echo(f"aligned {len(a):,} and {len(b):,} sentences in {aligned:,} groups "
               f"({len(result.beads) - aligned:,} left unaligned) -> {out}", err=True)
