"""`xlingua qe ...` commands (thin: the work is in xlingua.qe.train and .ship)."""
from __future__ import annotations

from pathlib import Path

import typer

from xlingua.cli.errors import Typer
from xlingua.cli.options import option

qe_app = Typer(no_args_is_help=True, help="Trained quality estimation: heads on a base encoder's vectors, "
                                          "fitted on WMT20 MLQE-PE train, chosen on its dev split.")


@qe_app.command("train")
def train_command(
    out: Path = option(..., "--output", "--out", help="Run directory (model/, report.json, report.md)."),
    settings: list[str] = option(None, "--set", help="A setting as NAME=VALUE (lists comma-separated): "
                                     "base, pairs, candidates, held_out, train_rows, seed."),
):
    """Fit every candidate head on the train split, keep the best by mean dev Pearson over the
    pairs, and check pairs outside training by leaving each out in turn. Then `xlingua score --qe
    --qe-model OUT/model`, or ship it."""
    from xlingua.io import check_writable
    from xlingua.qe.train import QEConfig, train
    from xlingua.settings import parse_settings

    config = QEConfig(**parse_settings(QEConfig, settings or []))
    check_writable(out, is_dir=True)
    report = train(config, out, log=lambda line: typer.echo(line, err=True))
    typer.echo((out / "report.md").read_text(encoding="utf-8"))
    typer.echo(f"chosen: {report['chosen']}; model: {out / 'model'}")


@qe_app.command("cross")
def cross_command(
    out: Path = option(..., "--output", "--out", help="Run directory (checkpoint.pt, log.jsonl, best/)."),
    settings: list[str] = option(None, "--set", help="A setting as NAME=VALUE (lists comma-separated): base, "
                                     "pairs, max_steps, batch_size, lr, head_lr, warmup_steps, max_len, precision, "
                                     "freeze_embeddings, eval_every, checkpoint_every, max_minutes, train_rows, "
                                     "dev_rows, seed."),
    resume: bool = typer.Option(True, "--resume/--no-resume", help="Continue from OUT/checkpoint.pt if present."),
    partner: str = typer.Option("qe-small", "--partner", help="A QE model on sentence vectors (a shipped name or a "
                                "`qe train` model directory) to average with on the trained pairs, its weight "
                                "chosen on dev; it scores the pairs outside training unless --unseen is given. "
                                "'none': the cross-encoder alone."),
    unseen: str = typer.Option("", "--unseen", help="A QE model on sentence vectors for the pairs outside training, "
                               "when --partner reads an encoder fine-tuned on every trained pair (its own held-out "
                               "check then says nothing of new pairs); default: --partner."),
):
    """Fine-tune a cross-encoder (source and translation read together, a regression head on top)
    on the train split's z-scores, keeping the step with the best mean dev Pearson as OUT/best,
    then blend it with --partner on dev; rerun the same command to resume. Then `xlingua qe eval
    OUT/best`, or `xlingua score --qe --qe-model OUT/best`."""
    from xlingua.io import check_writable
    from xlingua.qe.cross import CrossQEConfig, train_cross
    from xlingua.settings import parse_settings

    config = CrossQEConfig(**parse_settings(CrossQEConfig, settings or []))
    check_writable(out, is_dir=True)
    partner_model = None if partner == "none" else _qe_heads(partner)
    unseen_model = _qe_heads(unseen, "--unseen") if unseen else None
    if unseen_model is not None and partner_model is None:
        raise ValueError("--unseen needs a --partner (without one the cross-encoder scores every pair)")
    found = train_cross(config, out, resume=resume)
    pairs = [p for p in found["dev"] if p != "pearson"]
    typer.echo("| scorer (dev) | " + " | ".join(pairs) + " | mean |")
    typer.echo("|---|" + "---:|" * (len(pairs) + 1))
    typer.echo(f"| cross-encoder, step {found['best_step']} | " + " | ".join(f"{found['dev'][p]:.3f}" for p in pairs)
               + f" | {found['dev']['pearson']:.3f} |")
    if partner_model is not None:
        from xlingua.qe.blend import fit_blend

        blend = fit_blend(out / "best", partner_model, log=lambda line: typer.echo(line, err=True),
                          unseen=unseen_model)
        chosen = blend["dev_chosen"]
        typer.echo(f"| blend with {partner}, cross-encoder weight {blend['weight']:.2f} | "
                   + " | ".join(f"{chosen[p]:.3f}" for p in pairs) + f" | {chosen['pearson']:.3f} |")


def _qe_heads(spec: str, option: str = "--partner"):
    """A QE model on sentence vectors, by shipped name or directory."""
    from xlingua.qe.load import load_qe
    from xlingua.similarity.qe_head import QEModel

    model = load_qe(spec)
    if not isinstance(model, QEModel):
        raise ValueError(f"{option} {spec!r} is not a QE model on sentence vectors (`xlingua qe train`)")
    return model


@qe_app.command("eval")
def eval_command(
    model: Path = typer.Argument(..., help="A `qe train` run, its model/, a shipped QE model directory, or a "
                                 "`qe cross` run's best/."),
    split: str = typer.Option("test20", help="test20 (report once, for a model chosen on dev) or dev."),
    output: Path = option(None, "--output", help="Write the figures as JSON here too."),
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
    for name in [n for n in ("cosine", "qe") if n in result]:
        r = result[name]
        typer.echo(f"| {name} | " + " | ".join(f"{r[p]:.3f}" for p in pairs) + f" | {r['mean']:.3f} |")
    if output:
        write_json(output, result)


@qe_app.command("ship")
def ship_command(
    run: Path = typer.Argument(..., help="A `qe train` run directory (its model/) or a QE model directory."),
    out: Path = option(..., "--output", "--out", help="New directory (e.g. src/xlingua/models/qe-cross)."),
):
    """Write the model with its checksums, base fingerprint and probe scores (manifest.json)."""
    from xlingua.cli.ship import echo_reinstall_hint
    from xlingua.qe.ship import ship

    manifest = ship(run, out)
    typer.echo(f"wrote {out}: base {manifest['base']} ({manifest['fingerprint']}), probe scores "
               f"{manifest['probe_pairs']['scores']}")
    echo_reinstall_hint(out)
