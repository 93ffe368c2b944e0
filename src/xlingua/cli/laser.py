"""`xlingua laser ...` commands (thin: the work is in xlingua.laser.trainer and .ship, the sweep's in
xlingua.bench.laser_sweep)."""
from __future__ import annotations

from pathlib import Path

import typer

from xlingua.cli.errors import Typer
from xlingua.cli.options import option, split_langs

laser_app = Typer(no_args_is_help=True, help="LASER BiLSTM encoder (Artetxe & Schwenk 2019) trained from "
                                             "scratch, by translation or distilled from a teacher (LASER3).")

TRANSLATION_LANGS = "de,nl,fr,es,it,pt,ru,cs,pl"


def _list(text: str | None) -> list[str]:
    return [x.strip() for x in (text or "").split(",") if x.strip()]


@laser_app.command("train")
def train(
    out: Path = option(..., "--output", "--out", help="Run directory (checkpoint, encoder.pt, spm.model, log)."),
    objective: str = typer.Option("translation", help="translation (encoder-decoder, the paper) | distill "
                                  "(encoder alone matches a teacher's vectors of the English side, LASER3)."),
    langs: list[str] = option(None, "--lang", "--langs", help="l10n languages, each paired with English: a code or a "
                              "comma-separated list, repeatable. Default: translation "
                              f"{TRANSLATION_LANGS}; distill the 29 of the own-model recipe."),
    second_target: str = typer.Option("fr", help="translation: second decoder target language besides English."),
    l10n_pairs: int = typer.Option(None, help="l10n pairs per language (0 = all). Default: translation 15000 "
                                   "sampled; distill the first 1500 of each file (the own-model recipe's)."),
    multi30k: bool = typer.Option(True, "--multi30k/--no-multi30k", help="Add Multi30k train (en/de/fr/cs)."),
    general: bool = typer.Option(True, "--general/--no-general", help="distill: add the general corpus train split."),
    general_langs: str = typer.Option("", help="distill: general-corpus languages (empty = all 158)."),
    stsb_langs: str = typer.Option(None, help="distill: stsb_multi_mt train languages aligned with its English "
                                   "(default de,es,fr,it,ja,nl,pl,pt,ru,zh; '' = none)."),
    exclude_langs: str = typer.Option("", help="distill: languages left out of every corpus (to measure unseen ones)."),
    teacher: str = typer.Option("e5-small", help="distill: teacher encoder spec; its vectors of the English side "
                                "come from the embedding cache the own-model recipe fills with the same teacher."),
    metric: str = typer.Option("mse", help="distill: mse (2 - 2 cos of unit vectors) | cosine (1 - cos)."),
    center_teacher: bool = typer.Option(False, "--center-teacher/--no-center-teacher", help="distill: targets are "
                                        "the teacher's vectors minus their mean over the training English, renormalized."),
    batch_size: int = typer.Option(128, help="distill: pairs per step."),
    temperature: float = typer.Option(3.3, help="distill: language sampling p ~ n^(1/T)."),
    dev_langs: str = typer.Option("ar,de,el,es,et,fi,fr,hi,ja,ko,ne,ro,ru,si,sw,ta,th,tr,vi,zh",
                                  help="distill: general dev languages scored at the end ('' = none)."),
    vocab_size: int = typer.Option(8000),
    max_len: int = typer.Option(64, help="Pieces; distill cuts a longer side to its first max-len pieces (see "
                                "--truncate), translation leaves such pairs out (counted in the log)."),
    truncate: bool = typer.Option(True, "--truncate/--no-truncate", help="distill: cut long sides instead of "
                                  "dropping their pairs (a run started before this setting keeps dropping them)."),
    init: str = typer.Option("", help="distill: static:DIR (`xlingua static train`) or static-small starts from a static encoder: "
                             "its pieces are the vocabulary and its vectors the embedding (set --embed-dim to their size)."),
    freeze_embedding: bool = typer.Option(False, "--freeze-embedding/--train-embedding",
                                          help="distill with --init: keep the static vectors as they are, train the BiLSTM only."),
    mean_skip: bool = typer.Option(False, "--mean-skip/--no-mean-skip",
                                   help="distill: add a linear map of the mean piece vector, fitted to the teacher at the "
                                   "start, to the max-pooled BiLSTM state (which enters through a gate starting at 0)."),
    ranking_weight: float = typer.Option(0.0, help="distill: add this x translation ranking (in-batch negatives) "
                                         "to the distillation loss, as `xlingua extend` trains (LASER3 + ranking)."),
    layers: int = typer.Option(1, help="BiLSTM layers (paper: 5)."),
    hidden: int = typer.Option(256, help="BiLSTM units per direction (paper: 512)."),
    embed_dim: int = typer.Option(256),
    dec_hidden: int = typer.Option(512, help="translation: decoder LSTM units (paper: 2048)."),
    max_tokens: int = typer.Option(2500, help="translation: padded tokens per batch."),
    lr: float = typer.Option(1e-3),
    max_steps: int = typer.Option(100000),
    max_minutes: float = typer.Option(0.0, help="Training-time budget in minutes, summed over resumes (0 = none)."),
    checkpoint_every: int = typer.Option(200),
    snapshot_every: int = typer.Option(0, help="Also keep encoder_step{N}.pt every N steps (0 = never)."),
    eval_every: int = typer.Option(0, help="distill: score --dev-langs every N steps and keep the best student "
                                   "as OUT/encoder_best.pt (0 = at the end only)."),
    resume: bool = typer.Option(True, "--resume/--no-resume", help="Continue from OUT/checkpoint.pt if present."),
    seed: int = typer.Option(0),
):
    """Train, checkpointing as it goes (a rerun resumes); then use --model laser:OUT anywhere. The same
    run as `xlingua train` of a YAML with `recipe: laser` and these settings."""
    from xlingua.io import check_writable
    from xlingua.laser.distill import L10N_LANGS, STSB_LANGS
    from xlingua.laser.trainer import run_recipe, summary
    from xlingua.data.langs import normalize_lang

    distill = objective == "distill"
    default = ",".join(L10N_LANGS) if distill else TRANSLATION_LANGS
    langs = default if langs is None else ",".join(split_langs(langs))
    if l10n_pairs is None:
        l10n_pairs = 1500 if distill else 15000
    check_writable(out, is_dir=True)
    for code in _list(langs) + [second_target]:
        normalize_lang(code)
    recipe = dict(
        output_dir=str(out), resume=resume,
        objective=objective, langs=_list(langs), second_target=second_target, l10n_pairs=l10n_pairs,
        multi30k=multi30k, general=general, general_langs=_list(general_langs),
        stsb_langs=_list(",".join(STSB_LANGS) if stsb_langs is None else stsb_langs) if distill else [],
        exclude_langs=_list(exclude_langs), teacher=teacher, metric=metric, center_teacher=center_teacher, batch_size=batch_size,
        temperature=temperature, dev_langs=_list(dev_langs) if distill else [], vocab_size=vocab_size,
        max_len=max_len, truncate=truncate, init=init, freeze_embedding=freeze_embedding, mean_skip=mean_skip, ranking_weight=ranking_weight, layers=layers, hidden=hidden, embed_dim=embed_dim, dec_hidden=dec_hidden,
        max_tokens=max_tokens, lr=lr, max_steps=max_steps, max_minutes=max_minutes,
        checkpoint_every=checkpoint_every, snapshot_every=snapshot_every, eval_every=eval_every, seed=seed)
    typer.echo(summary(run_recipe(recipe), out))


@laser_app.command("ship")
def ship_command(
    source: Path = typer.Argument(..., help="Run directory (its encoder.pt) or a snapshot DIR/encoder_stepN.pt."),
    out: Path = option(..., "--output", "--out", help="New directory in the shipping format (e.g. runs/laser/shipped); load it as laser:DIR."),
):
    """Write an encoder with its checksums, fingerprint and probe vectors (manifest.json); no
    model package ships a BiLSTM, so the directory loads by its path, as laser:DIR."""
    from xlingua.laser.ship import ship

    manifest = ship(source, out)
    size = sum((out / name).stat().st_size for name in manifest["files"])
    typer.echo(f"wrote {out}: {manifest['dim']}-d, {size / 1e6:.1f} MB, fingerprint {manifest['fingerprint']}")
    typer.echo(f"load it with --model laser:{out}")


@laser_app.command("sweep")
def sweep_command(
    out: Path = option(..., "--output", "--out", help="Sweep directory: one run per size, sweep.json/.md/.png."),
    sizes: str = typer.Option("1x192,1x320,2x192", help="BiLSTM LAYERSxUNITS (per direction), comma-separated."),
    vocab_sizes: str = typer.Option("8000,16000", help="SentencePiece vocabulary sizes, comma-separated."),
    minutes: float = typer.Option(10.0, help="Training minutes per student (equal budget for all)."),
    settings: list[str] = option(None, "--set", help="Any `laser train` setting as NAME=VALUE (lists "
                                     "comma-separated), e.g. --set embed_dim=128 --set exclude_langs=af,eu."),
):
    """Distil a student of every size for the same time; rank them on the general dev slice against
    sentences per CPU second (the teacher timed on the same sentences)."""
    from xlingua.bench.laser_sweep import markdown, parse_sizes, run_sweep
    from xlingua.laser.config import LaserTrainConfig, parse_settings

    base = LaserTrainConfig.distill(**parse_settings(settings or []))
    report = run_sweep(base, out, parse_sizes(sizes), [int(v) for v in _list(vocab_sizes)], minutes, echo=typer.echo)
    typer.echo(markdown(report))
