"""`xlingua meaning ...` commands (thin: the work is in xlingua.meaning.trainer)."""
from __future__ import annotations

from pathlib import Path

import typer

meaning_app = typer.Typer(no_args_is_help=True, help="Meaning embeddings (Tiyajamorn et al. 2021) on a frozen encoder.")

DEFAULT_LANGS = "de,zh,fi,hu,hi,ta,fr,es,it,pt,ru,ar"


@meaning_app.command("train")
def train(
    out: Path = typer.Option(..., "--out", "-o", help="Directory for model.pt and train_log.json."),
    base: str = typer.Option("bundled", "--base", help="Frozen base encoder spec."),
    langs: str = typer.Option(DEFAULT_LANGS, help="Comma-separated l10n languages (paired with English)."),
    pairs: int = typer.Option(1000, help="Pairs sampled from each language's train file."),
    meaning_loss: bool = typer.Option(True, "--meaning-loss/--no-meaning-loss", help="Use L_M."),
    language_loss: bool = typer.Option(True, "--language-loss/--no-language-loss", help="Use L_L."),
    max_epochs: int = typer.Option(1000, help="Upper bound; early stopping usually ends sooner."),
    patience: int = typer.Option(15, help="Early-stopping patience in epochs."),
    batch_size: int = typer.Option(512),
    lr: float = typer.Option(1e-4),
    seed: int = typer.Option(0),
    snapshot_every: int = typer.Option(0, help="Also keep model_epochN.pt every N epochs (0 = only the best)."),
    hidden: int = typer.Option(0, help="Hidden width of the three MLPs (0 = the base dimension)."),
    extra: str = typer.Option("", help="Comma-separated extra parallel data besides l10n: xnli-dev "
                              "(XNLI dev, 14 languages with English; never the test files), "
                              "stsb-mt-train (machine-translated STS Benchmark train, 10 languages), "
                              "multi30k-train (captions, cs/de/fr); NAME:de+zh for some languages. "
                              "Pairs holding an STS 2017 or QE test20 sentence are dropped."),
):
    """Train MLP_M / MLP_L / MLP_I on cached base embeddings of l10n pairs; then use
    --model BASE+meaning:OUT anywhere."""
    from xlingua.meaning.trainer import TrainConfig, train_from_corpus

    cfg = TrainConfig(lr=lr, batch_size=batch_size, max_epochs=max_epochs, patience=patience,
                      use_meaning=meaning_loss, use_language=language_loss, seed=seed, hidden=hidden,
                      snapshot_every=snapshot_every)
    log = train_from_corpus(base, [l.strip() for l in langs.split(",") if l.strip()], pairs, out, config=cfg,
                            extra=[e.strip() for e in extra.split(",") if e.strip()])
    typer.echo(f"best epoch {log['best_epoch']} of {log['epochs']}, val loss {log['best_val_loss']:.4f}, "
               f"{log['seconds']}s; wrote {out / 'model.pt'}")
