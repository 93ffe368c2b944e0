"""`xlingua static ...` commands (thin: the work is in xlingua.static.train and .ship)."""
from __future__ import annotations

from pathlib import Path

import typer

from xlingua.cli_errors import Typer

static_app = Typer(no_args_is_help=True, help="Static encoders: a teacher's token vectors trained on parallel "
                                              "pairs; a sentence is the mean of its pieces (no network runs).")


@static_app.command("train")
def train_command(
    out: Path = typer.Option(..., "--out", "-o", help="Run directory (state.pt, log.jsonl, model/ at the dev-best step)."),
    option: list[str] = typer.Option(None, "--set", help="A setting as NAME=VALUE (lists comma-separated): teacher, "
                                     "dim, min_count, sif, init (teacher|random), batch_size, scale, lr, max_steps, "
                                     "max_minutes, dev_every, checkpoint_minutes, seed, exclude_langs."),
):
    """Train on the general corpus's train split, choosing the step on its dev split; a rerun
    resumes from OUT/state.pt. Then use --model static:OUT/model anywhere."""
    from xlingua.io import check_writable
    from xlingua.static.train import StaticConfig, train
    from xlingua.settings import parse_settings

    config = StaticConfig(**parse_settings(StaticConfig, option or []))
    check_writable(out, is_dir=True)
    result = train(config, out)
    typer.echo(f"{result['step']} steps in {result['minutes']:.1f} min on {result['pairs']:,} pairs, "
               f"{result['pieces']:,} piece vectors; dev accuracy {result['best_dev']:.2f} at step "
               f"{result['best_step']}; model: {out / 'model'}")


@static_app.command("ship")
def ship_command(
    run: Path = typer.Argument(..., help="A `static train` run directory (its model/) or a static encoder directory."),
    out: Path = typer.Option(..., "--out", "-o", help="New directory in the shipping format (e.g. src/xlingua/models/static-small)."),
    dtype: str = typer.Option("float16", help="Stored vectors: float16 | int8 (a scale per row; half the size)."),
):
    """Write the model with its checksums, fingerprint and probe vectors (manifest.json)."""
    from xlingua.static.ship import ship

    manifest = ship(run, out, dtype)
    size = sum((out / name).stat().st_size for name in manifest["files"])
    typer.echo(f"wrote {out}: {manifest['rows']:,} x {manifest['dim']}, {size / 1e6:.1f} MB, "
               f"fingerprint {manifest['fingerprint']}")
