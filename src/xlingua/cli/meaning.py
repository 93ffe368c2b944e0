"""`xlingua meaning ...` commands (thin: the work is in xlingua.meaning.trainer)."""
from __future__ import annotations

from pathlib import Path

import typer

from xlingua.cli.errors import Typer
from xlingua.cli.options import option, split_langs
from xlingua.meaning.recipe import MeaningData

meaning_app = Typer(no_args_is_help=True, help="Meaning embeddings (Tiyajamorn et al. 2021) on a frozen encoder.")

DEFAULTS = MeaningData()
DEFAULT_LANGS = ",".join(DEFAULTS.langs)


@meaning_app.command("train")
def train(
    out: Path = option(..., "--output", "--out", help="Directory for model.pt and train_log.json."),
    base: str = typer.Option("bundled", "--base", help="Frozen base encoder spec."),
    langs: list[str] = option(None, "--lang", "--langs", help="l10n languages, each paired with English: a code or a "
                              f"comma-separated list, repeatable (default {DEFAULT_LANGS}; '' = none)."),
    pairs: int = typer.Option(1000, help="Pairs sampled from each language's train file."),
    meaning_loss: bool = typer.Option(True, "--meaning-loss/--no-meaning-loss", help="Use L_M."),
    language_loss: bool = typer.Option(True, "--language-loss/--no-language-loss", help="Use L_L."),
    max_epochs: int = typer.Option(1000, help="Upper bound; early stopping usually ends sooner."),
    patience: int = typer.Option(15, help="Early-stopping patience in epochs (on the --select-on figure)."),
    batch_size: int = typer.Option(512),
    lr: float = typer.Option(1e-4),
    seed: int = typer.Option(0),
    snapshot_every: int = typer.Option(0, help="Also keep model_epochN.pt every N epochs (0 = only the best)."),
    hidden: int = typer.Option(0, help="Hidden width of the three MLPs (0 = the base dimension)."),
    extra: str = typer.Option("", help="Comma-separated extra parallel data besides l10n: xnli-dev "
                              "(XNLI dev, 14 languages with English; never the test files), "
                              "stsb-mt-train (machine-translated STS Benchmark train, 10 languages), "
                              "multi30k-train (captions, cs/de/fr); NAME:de+zh for some languages. "
                              "Pairs holding an STS 2017 or QE test20/dev sentence are dropped."),
    general: str = typer.Option("", help="Comma-separated sources of the general corpus (its dev slice held "
                                "out): mlqe-pe (Wikipedia, the QE pairs' domain), newstest, flores-v1, ntrex, "
                                "nllb-seed."),
    general_langs: str = typer.Option(",".join(DEFAULTS.general_langs), help="Languages of the --general sources "
                                      "(empty = all they have)."),
    general_pairs: int = typer.Option(0, help="At most this many pairs of each --general source and language, "
                                      "a seeded sample (0 = all)."),
    select_on: str = typer.Option("qe-dev", help="What picks the epoch and stops training: qe-dev (WMT20 QE dev "
                                  "Pearson, 6 pairs averaged), retrieval-dev (general-corpus dev slice), "
                                  "sts-dev (stsb_multi_mt dev, cross-lingual Spearman) or val-loss (the "
                                  "paper's validation loss). Never a test split."),
    dev: str = typer.Option(",".join(DEFAULTS.dev), help="Dev signals computed and logged every epoch "
                            "(train_log.json history)."),
    language_weight: float = typer.Option(1.0, help="Weight of L_L in the loss (ablation)."),
    negative_weight: float = typer.Option(1.0, help="Weight of L_M's terms on random same-language "
                                          "sentences (ablation; 1 = the paper)."),
    residual: bool = typer.Option(False, "--residual/--no-residual", help="Meaning vector = base vector + "
                                  "MLP_M(base vector), starting at the base vector (keeps its graded "
                                  "similarity; the paper: MLP_M alone)."),
):
    """Train MLP_M / MLP_L / MLP_I on cached base embeddings of parallel pairs (l10n, --extra,
    --general); model.pt is the epoch --select-on chose. Then use --model BASE+meaning:OUT anywhere.
    The same run as `xlingua train` of a YAML with `recipe: meaning` and these settings."""
    from xlingua.io import check_writable
    from xlingua.meaning.recipe import run_recipe, summary
    from xlingua.data.langs import normalize_lang

    langs = DEFAULT_LANGS if langs is None else ",".join(split_langs(langs))
    check_writable(out, is_dir=True)
    for code in _items(langs) + _items(general_langs):
        normalize_lang(code)
    recipe = dict(output_dir=str(out), base=base, langs=_items(langs), pairs=pairs, extra=_items(extra),
                  general=_items(general), general_langs=_items(general_langs), general_pairs=general_pairs,
                  dev=_items(dev), lr=lr, batch_size=batch_size, max_epochs=max_epochs, patience=patience,
                  use_meaning=meaning_loss, use_language=language_loss, seed=seed, hidden=hidden,
                  snapshot_every=snapshot_every, select_on=select_on, language_weight=language_weight,
                  negative_weight=negative_weight, residual=residual)
    typer.echo(summary(run_recipe(recipe), out))


@meaning_app.command("ship")
def ship_command(
    source: Path = typer.Argument(..., help="Run directory (its model.pt, the chosen epoch) or DIR/model_epochN.pt."),
    base: str = typer.Option("bundled", "--base", help="The base encoder spec the model was trained on; "
                             "it loads as BASE+meaning."),
    out: Path = option(None, "--output", "--out", help="New directory in the shipping format "
                             "(default: a source checkout's src/xlingua/models/meaning-BASE, which its model package is built from)."),
):
    """Ship a chosen meaning model (the MLPs only) with its checksum, probe vectors and how it was
    chosen (manifest.json), so that --model BASE+meaning works without a path."""
    from xlingua.cli.ship import echo_reinstall_hint
    from xlingua.meaning.ship import default_out, ship

    out = out or default_out(base)
    manifest = ship(source, base, out)
    size = sum((out / name).stat().st_size for name in manifest["files"])
    src = manifest["source"]
    typer.echo(f"wrote {out}: {manifest['dim']}-d on {base}, {size / 1e6:.1f} MB, epoch {src['epoch']} "
               f"chosen on {src['select_on']}; load it as --model {base}+meaning")
    echo_reinstall_hint(out)


def _items(csv: str) -> list[str]:
    return [x.strip() for x in csv.split(",") if x.strip()]
