"""`xlingua align` (thin: the work is in xlingua.align)."""
from __future__ import annotations

import typer

from xlingua.cli.options import ERRORS_OPTION, MODEL_OPTION


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
