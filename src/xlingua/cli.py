"""The `xlingua` command line. Each command is thin: the work lives in the package."""
from __future__ import annotations

import typer

app = typer.Typer(
    no_args_is_help=True,
    add_completion=False,
    help="Multilingual sentence embeddings: embed, train, mine, eval.",
)
bench_app = typer.Typer(no_args_is_help=True, help="Speed and quality benchmarks.")
app.add_typer(bench_app, name="bench")

MODEL_HELP = "Encoder spec: bundled, bundled:torch, use, laser:PATH, BASE+meaning:PATH, or a model dir / hub name."


if __name__ == "__main__":
    app()
