"""`xlingua static ...` commands (thin: the work is in xlingua.static.train and .ship)."""
from __future__ import annotations

from pathlib import Path

import typer

from xlingua.cli.errors import Typer
from xlingua.cli.options import option

static_app = Typer(no_args_is_help=True, help="Static encoders: a teacher's token vectors trained on parallel "
                                              "pairs; a sentence is the mean of its pieces (no network runs).")


@static_app.command("train")
def train_command(
    out: Path = option(..., "--output", "--out", help="Run directory (checkpoint.pt, log.jsonl, model/ at the dev-best step)."),
    settings: list[str] = option(None, "--set", help="A setting as NAME=VALUE (lists comma-separated): teacher, "
                                     "dim, min_count, sif, init (teacher|model2vec|random), batch_size, scale, lr, "
                                     "max_steps, max_minutes, dev_every, checkpoint_every, log_every, seed, "
                                     "exclude_langs."),
):
    """Train on the general corpus's train split, choosing the step on its dev split; a rerun
    goes on from OUT/checkpoint.pt. Then use --model static:OUT/model anywhere. The same run as
    `xlingua train` of a YAML with `recipe: static` and these settings."""
    from xlingua.io import check_writable
    from xlingua.settings import parse_settings
    from xlingua.static.train import StaticConfig, run_recipe, summary

    check_writable(out, is_dir=True)
    typer.echo(summary(run_recipe({"output_dir": str(out), **parse_settings(StaticConfig, settings or [])}), out))


@static_app.command("ship")
def ship_command(
    run: Path = typer.Argument(..., help="A `static train` run directory (its model/) or a static encoder directory."),
    out: Path = option(..., "--output", "--out", help="New directory in the shipping format (e.g. src/xlingua/models/static-small)."),
    dtype: str = typer.Option("float16", help="Stored vectors: float16 | int8 (a scale per row; half the size)."),
):
    """Write the model with its checksums, fingerprint and probe vectors (manifest.json)."""
    from xlingua.cli.ship import echo_reinstall_hint
    from xlingua.static.ship import ship

    manifest = ship(run, out, dtype)
    size = sum((out / name).stat().st_size for name in manifest["files"])
    typer.echo(f"wrote {out}: {manifest['rows']:,} x {manifest['dim']}, {size / 1e6:.1f} MB, "
               f"fingerprint {manifest['fingerprint']}")
    echo_reinstall_hint(out)
