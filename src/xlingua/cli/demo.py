"""`xlingua demo` (thin: the work is in xlingua.demo)."""
from __future__ import annotations

import typer

from xlingua.cli.options import MODEL_OPTION


def demo_command(
    model: str = MODEL_OPTION,
    pair: list[str] = typer.Option(["en-zh", "ar-hi"], "--pair", help="Language pair SRC-TGT to show in detail (repeatable)."),
):
    """Embed the built-in 8-language example and align its sentences across languages."""
    from xlingua.demo import run_demo

    run_demo(model, pairs=[tuple(p.split("-", 1)) for p in pair])
