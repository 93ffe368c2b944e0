"""`xlingua laser ...` commands (thin: the work is in xlingua.laser.trainer)."""
from __future__ import annotations

from pathlib import Path

import typer

from xlingua.cli_errors import Typer

laser_app = Typer(no_args_is_help=True, help="LASER BiLSTM encoder (Artetxe & Schwenk 2019) trained from scratch.")


@laser_app.command("train")
def train(
    out: Path = typer.Option(..., "--out", "-o", help="Run directory (checkpoint, encoder.pt, spm.model, log)."),
    langs: str = typer.Option("de,nl,fr,es,it,pt,ru,cs,pl", help="l10n languages (each paired with English)."),
    second_target: str = typer.Option("fr", help="Second decoder target language besides English."),
    l10n_pairs: int = typer.Option(15000, help="Pairs sampled per language (0 = all)."),
    multi30k: bool = typer.Option(True, "--multi30k/--no-multi30k", help="Add Multi30k train (en/de/fr/cs)."),
    vocab_size: int = typer.Option(8000),
    layers: int = typer.Option(1, help="BiLSTM layers (paper: 5)."),
    hidden: int = typer.Option(256, help="BiLSTM units per direction (paper: 512)."),
    embed_dim: int = typer.Option(256),
    dec_hidden: int = typer.Option(512, help="Decoder LSTM units (paper: 2048)."),
    max_tokens: int = typer.Option(2500, help="Padded tokens per batch."),
    lr: float = typer.Option(1e-3),
    max_steps: int = typer.Option(100000),
    max_minutes: float = typer.Option(0.0, help="Training-time budget in minutes, summed over resumes (0 = none)."),
    checkpoint_every: int = typer.Option(200),
    snapshot_every: int = typer.Option(0, help="Also keep encoder_step{N}.pt every N steps (0 = never)."),
    resume: bool = typer.Option(True, "--resume/--no-resume", help="Continue from OUT/checkpoint.pt if present."),
    seed: int = typer.Option(0),
):
    """Train, checkpointing as it goes; then use --model laser:OUT anywhere."""
    from xlingua.laser.trainer import LaserTrainConfig, train_laser

    cfg = LaserTrainConfig(langs=[l.strip() for l in langs.split(",") if l.strip()], second_target=second_target,
                           l10n_pairs=l10n_pairs, multi30k=multi30k, vocab_size=vocab_size, layers=layers,
                           hidden=hidden, embed_dim=embed_dim, dec_hidden=dec_hidden, max_tokens=max_tokens, lr=lr,
                           max_steps=max_steps, max_minutes=max_minutes, checkpoint_every=checkpoint_every,
                           snapshot_every=snapshot_every, seed=seed)
    log = train_laser(cfg, out, resume=resume)
    typer.echo(f"{log['steps']} steps in {log['train_seconds']:.0f}s; encoder {log['encoder_params']:,} params, "
               f"{log['encoder_bytes'] / 1e6:.1f} MB; wrote {out / 'encoder.pt'}")


@laser_app.command("ship")
def ship_command(
    source: Path = typer.Argument(..., help="Run directory (its encoder.pt) or a snapshot DIR/encoder_stepN.pt."),
    out: Path = typer.Option(..., "--out", "-o", help="New directory in the shipping format (e.g. src/xlingua/models/laser-small)."),
):
    """Write an encoder with its checksums, fingerprint and probe vectors (manifest.json)."""
    from xlingua.laser.ship import ship

    try:
        manifest = ship(source, out)
    except (OSError, ValueError) as exc:
        typer.secho(f"error: {exc}", fg=typer.colors.RED, err=True)
        raise typer.Exit(2)
    size = sum((out / name).stat().st_size for name in manifest["files"])
    typer.echo(f"wrote {out}: {manifest['dim']}-d, {size / 1e6:.1f} MB, fingerprint {manifest['fingerprint']}")
