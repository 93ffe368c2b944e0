"""`xlingua qe ...` commands (thin: the work is in xlingua.qe.train and .ship)."""
from __future__ import annotations

from pathlib import Path

import typer

from xlingua.cli.errors import Typer

qe_app = Typer(no_args_is_help=True, help="Trained quality estimation: heads on a base encoder's vectors, "
                                          "fitted on WMT20 MLQE-PE train, chosen on its dev split.")


@qe_app.command("train")
def train_command(
    out: Path = typer.Option(..., "--out", "-o", help="Run directory (model/, report.json, report.md)."),
    option: list[str] = typer.Option(None, "--set", help="A setting as NAME=VALUE (lists comma-separated): "
                                     "base, pairs, candidates, held_out, train_rows, seed."),
):
    """Fit every candidate head on the train split, keep the best by mean dev Pearson over the
    pairs, and check pairs outside training by leaving each out in turn. Then `xlingua score --qe
    --qe-model OUT/model`, or ship it."""
    from xlingua.io import check_writable
    from xlingua.qe.train import QEConfig, train
    from xlingua.settings import parse_settings

    config = QEConfig(**parse_settings(QEConfig, option or []))
    check_writable(out, is_dir=True)
    report = train(config, out, log=lambda line: typer.echo(line, err=True))
    typer.echo((out / "report.md").read_text(encoding="utf-8"))
    typer.echo(f"chosen: {report['chosen']}; model: {out / 'model'}")


@qe_app.command("eval")
def eval_command(
    model: Path = typer.Argument(..., help="A `qe train` run, its model/, or a shipped QE model directory."),
    split: str = typer.Option("test20", help="test20 (report once, for a model chosen on dev) or dev."),
    output: Path = typer.Option(None, "--output", "-o", help="Write the figures as JSON here too."),
):
    """Pearson per language pair of the QE scores and of plain cosine against the human z-scores."""
    from xlingua.io import write_json
    from xlingua.qe.train import evaluate

    if split not in ("test20", "dev"):
        raise ValueError(f"split must be test20 or dev (train fits the heads), got {split!r}")
    result = evaluate(model, split)
    pairs = [p for p in result["qe"] if p != "mean"]
    typer.echo(f"| scorer ({split}) | " + " | ".join(pairs) + " | mean |")
    typer.echo("|---|" + "---:|" * (len(pairs) + 1))
    for name in ("cosine", "qe"):
        r = result[name]
        typer.echo(f"| {name} | " + " | ".join(f"{r[p]:.3f}" for p in pairs) + f" | {r['mean']:.3f} |")
    if output:
        write_json(output, result)


@qe_app.command("ship")
def ship_command(
    run: Path = typer.Argument(..., help="A `qe train` run directory (its model/) or a QE model directory."),
    out: Path = typer.Option(..., "--out", "-o", help="New directory (e.g. src/xlingua/models/qe-small)."),
):
    """Write the model with its checksums, base fingerprint and probe scores (manifest.json)."""
    from xlingua.qe.ship import ship

    manifest = ship(run, out)
    typer.echo(f"wrote {out}: base {manifest['base']} ({manifest['fingerprint']}), probe scores "
               f"{manifest['probe_pairs']['scores']}")
