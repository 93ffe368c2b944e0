"""`xlingua embed` (thin: the work is in xlingua.embed)."""
from __future__ import annotations

import typer

from xlingua.cli.options import ERRORS_OPTION, MODEL_OPTION, option


def embed_command(
    inputs: list[str] = typer.Argument(..., help="Text files (plain or .gz), one sentence a line; pipes such as <(zcat x.gz) work, and - for stdin."),
    output: str = option(..., "--output", help="OUT.npy, or a directory with --shard-size."),
    model: str = MODEL_OPTION,
    lang: str = option(None, "--lang", help="Language code of the input: a model routed by language embeds the languages of its student by the student (xlingua extend --routed), every other text as its default model."),
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
