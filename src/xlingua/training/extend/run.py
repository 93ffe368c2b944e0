"""One extension run: the dev report of the start model, an optional start with new tokenizer
pieces, training through xlingua.training's Trainer (checkpoints, resume, time budget, dev
choice), and the dev report of the model the dev choice kept.

With `lowres` the new languages are the low-resource corpus's (data.lowres): the laser3 task
trains on its train pairs, their English or French side standing where English stands (the
frozen teacher reads both), and the dev choice watches its dev slices (training.evaluate) beside
the original languages; the reports hold its dev report (lowres_report) before and after.

OUT holds the trainer's files (checkpoint.pt, log.jsonl, best/, final/), start/ (the model with
new pieces, when asked for), dev_before.json and report.json. Running the same command again
resumes from OUT/checkpoint.pt (--max-steps and --lr may change; a setting that fixes the data or the
weights so far may not).
"""
from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Callable, Sequence

from xlingua.data.lowres import dev_by_language
from xlingua.io import write_json
from xlingua.training.config import TrainConfig, config_from_dict
from xlingua.training.extend.langs import KEEP_DEV, resolve_langs, resolve_lowres_langs
from xlingua.training.extend.lowres_report import format_lowres_report, lowres_report
from xlingua.training.extend.report import LIMIT, dev_report, format_report

START = "start"
BEFORE = "dev_before.json"
REPORT = "report.json"
#: every parameter of a BERT encoder but its word embeddings (--rows-only freezes them)
BODY = ("encoder.", "pooler", "embeddings.LayerNorm", "position_embeddings", "token_type_embeddings")
#: what the teacher and the student are when the model is an e5-family spec: its fp32 torch path
E5_PATHS = ("", "torch", "bf16", "onnx", "fast")


@dataclass
class ExtendOptions:
    langs: list[str]                # codes or group names (langs.GROUPS); with lowres its codes, [] = all
    out: str
    model: str = "bundled"
    pairs: str | None = None        # a user's xx<TAB>en file for the one language in `langs`
    mix: float = 0.3                # share of steps on pairs of the model's original languages
    sts: float = 0.2                # share of steps on CoSENT over stsb_multi_mt train (graded similarity)
    rank_against: str = "teacher"   # the English side translations are ranked against (objectives.laser3)
    keep_ranking: float = 0.0       # ranking weight on the original languages' pairs (distillation alone keeps them)
    rows_only: bool = False         # train the new pieces' rows alone: nothing without a new piece changes
    max_minutes: float = 0.0        # training time, summed over resumes (0 = none)
    max_steps: int = 2000
    new_pieces: int = 0             # SentencePiece pieces to learn on the new languages (0 = none)
    spare_known: bool = False       # drop new pieces the original languages' text would use
    lr: float = 5e-5
    pieces_lr: float = 0.0          # peak rate of the new pieces' rows (0 = lr)
    batch_size: int = 32
    max_seq_length: int = 128       # scripts read character by character give long inputs
    eval_every: int = 200
    checkpoint_every: int = 50
    mix_per_lang: int = 1000        # original-language pairs per language in the mix
    keep_dev: tuple = KEEP_DEV      # original languages the report and the dev choice watch
    temperature: float = 3.3
    seed: int = 0
    teacher_cache: str | None = None
    precision: str | None = None    # None: bf16 on CPUs with native bf16, else fp32
    lowres: bool = False            # the new languages are the low-resource corpus's (data.lowres)
    dropout: float | None = None    # the model's dropout while training (None: its own)
    strip_harakat: bool = False     # each Arabic-script pair also trains as a copy without harakat
    routed: bool = False            # a student for the new languages alone, routed beside the teacher by language
    start: str | None = None        # the student's first weights (a model directory); None: the model's own
    sources: list[str] | None = None  # with lowres, the corpus's sources to train on (None = all; dev slices whole)
    general_pairs: bool = False     # with lowres, also the general corpus's pairs of the same languages, and their dev slices
    one_language_batches: bool = False  # each batch of the new languages' task holds one language


def trainable_spec(spec: str) -> str:
    """The fp32 torch path of an e5-family spec (`bundled` -> `bundled:torch`); other specs as given."""
    from xlingua.encoders.loading import E5_SMALL, SHIPPED_ON_E5, unpinned

    name, _, path = spec.partition(":")
    if unpinned(name) in (E5_SMALL, *SHIPPED_ON_E5) and path in E5_PATHS:  # bundled and xlingua-small@v2 too
        return f"{name}:torch"
    return spec


def check(opts: ExtendOptions) -> tuple[list[str], dict[str, str]]:
    """(language codes, {lang: pair file}); every user error raised here, before a model loads."""
    from xlingua.data.general import read_own_pairs
    from xlingua.io import check_writable

    if not (0.0 <= opts.mix < 1.0 and 0.0 <= opts.sts < 1.0 and opts.mix + opts.sts < 1.0):
        raise ValueError(f"--mix and --sts are shares of the steps, each >= 0 and together below 1 (the rest "
                         f"trains the new languages); got {opts.mix} and {opts.sts}")
    if opts.dropout is not None and not 0.0 <= opts.dropout < 1.0:
        raise ValueError(f"--dropout is a rate in [0, 1), got {opts.dropout}")
    if opts.eval_every < 1:
        raise ValueError(f"--eval-every is a number of steps, at least 1; got {opts.eval_every}")
    if opts.new_pieces < 0 or opts.max_minutes < 0 or opts.pieces_lr < 0:
        raise ValueError("--new-pieces, --pieces-lr and --max-minutes cannot be negative")
    if opts.rank_against not in ("student", "teacher"):
        raise ValueError(f"--rank-against is student or teacher, got {opts.rank_against!r}")
    if opts.keep_ranking < 0:
        raise ValueError(f"--keep-ranking cannot be negative, got {opts.keep_ranking}")
    if opts.rows_only and not opts.new_pieces:
        raise ValueError("--rows-only trains the new pieces' rows alone: it needs --new-pieces")
    if opts.spare_known and not opts.new_pieces:
        raise ValueError("--spare-known chooses among the new pieces: it needs --new-pieces")
    if opts.pieces_lr and not opts.new_pieces:
        raise ValueError("--pieces-lr is the rate of the new pieces' rows: it needs --new-pieces")
    if opts.routed and (opts.mix or opts.sts or opts.rows_only or opts.rank_against != "teacher"):
        raise ValueError("--routed trains a student that only embeds the new languages, beside the unchanged "
                         "model: it takes no --mix, --sts, --rows-only or --rank-against student")
    if opts.start is not None:
        if opts.new_pieces:
            raise ValueError("--start continues a student as it is: it takes no --new-pieces")
        if not (Path(opts.start) / "config.json").is_file():
            raise FileNotFoundError(f"--start {opts.start}: not a model directory (no config.json); give a run's best/")
    if opts.sources is not None:
        from xlingua.data.lowres import check_sources

        if not opts.lowres:
            raise ValueError("--sources names the low-resource corpus's sources: it needs --lowres")
        try:
            check_sources(opts.sources)
        except ValueError as e:
            raise ValueError(f"--sources: {e}") from None
    if opts.general_pairs and not opts.lowres:
        raise ValueError("--general-pairs adds the general corpus's pairs of the low-resource languages: it needs --lowres")
    if opts.lowres and opts.pairs is not None:
        raise ValueError("--pairs trains on your own file, --lowres on the low-resource corpus: give one of them")
    langs = resolve_lowres_langs(opts.langs) if opts.lowres else resolve_langs(opts.langs, opts.pairs)
    if opts.mix or opts.general_pairs:
        from xlingua.data.general import available

        try:
            available()
        except FileNotFoundError as e:
            what, without = ("--mix", "--mix 0") if opts.mix else ("--general-pairs", "leaving out --general-pairs")
            raise FileNotFoundError(f"{what} trains on the general corpus: {e}; {without} trains without it") from None
    if opts.sts:
        from xlingua.data.benchmarks import stsb_multi_mt_langs

        try:
            stsb_multi_mt_langs()
        except FileNotFoundError as e:
            raise FileNotFoundError(f"--sts trains on stsb_multi_mt: {e}; --sts 0 trains without it") from None
    pair_files = {}
    if opts.pairs is not None:
        pair_files = {langs[0]: str(opts.pairs)}
        if len(read_own_pairs(opts.pairs, langs[0], "dev")) < 2:
            raise ValueError(f"{opts.pairs}: too few pairs to hold out a dev slice (it takes a fifth, "
                             "up to 500 English sentences); give at least 10")
    check_writable(opts.out, is_dir=True)
    return langs, pair_files


def extend(opts: ExtendOptions, echo: Callable[[str], None] = print, show_progress: bool = True,
           on_step: Callable[[int], None] | None = None) -> dict:
    """Run (or resume) the extension; returns the report written to OUT/report.json."""
    from xlingua.encoders.loading import load_encoder
    from xlingua.training.trainer import CHECKPOINT, Trainer

    langs, pair_files = check(opts)
    out = Path(opts.out)
    out.mkdir(parents=True, exist_ok=True)
    watched = report_langs(opts, langs, pair_files)
    lowres = langs if opts.lowres else []
    before, lowres_before = _before(opts, watched, pair_files, lowres, out)
    _echo_reports(echo, watched, before, lowres_before)
    teacher = trainable_spec(opts.model)
    student, base_rows = opts.start or teacher, None
    if opts.new_pieces:
        student, base_rows = start_with_pieces(opts, langs, pair_files, teacher, out / START, echo)
    config = build_config(opts, langs, pair_files, student, teacher, base_rows)
    # a rerun applies what a resume may change (--max-steps, --lr); the trainer refuses the rest,
    # asking for a new output directory
    Trainer(config).train(resume=(out / CHECKPOINT).exists(), show_progress=show_progress, on_step=on_step,
                          override=tuple(config.to_dict()))
    best = out / "best"
    encoder = load_encoder(str(best))
    if opts.routed:  # the student embeds the new languages, the start model everything else
        from xlingua.encoders.routed import RoutedEncoder

        encoder = RoutedEncoder(load_encoder(opts.model), encoder, langs)
    after = dev_report(encoder, watched, pair_files)
    lowres_after = lowres_report(encoder, dev_by_language(lowres)) if lowres else None
    _echo_reports(echo, watched, before, lowres_after, after)
    echo(f"model: {best}")
    report = {"model": str(best), "start": opts.start or opts.model, "teacher": opts.model, "langs": langs, "pair_files": pair_files,
              "before": before, "after": after, "options": _jsonable(opts),
              **({"lowres": {"before": lowres_before, "after": lowres_after}} if lowres else {})}
    write_json(out / REPORT, report)
    return report


def report_langs(opts: ExtendOptions, langs: list[str], pair_files: dict[str, str]) -> list[str]:
    """The extension's languages and the watched original ones that have a dev slice here (with
    lowres the watched ones alone: the low-resource slices have their own report)."""
    from xlingua.data.general import dev_langs, general_root

    have = dev_langs() if general_root().is_dir() else {}  # a user's --pairs alone needs no corpus
    keep = [] if opts.routed else [l for l in opts.keep_dev if l in have and l not in langs]
    if opts.lowres:  # with general_pairs, the new languages' own general slices beside the low-resource ones
        return [l for l in langs if opts.general_pairs and l in have] + keep
    return [l for l in langs if l in pair_files or l in have] + keep


def build_config(opts: ExtendOptions, langs: list[str], pair_files: dict[str, str], student: str,
                 teacher: str, base_rows: int | None) -> TrainConfig:
    """The trainer's recipe: a laser3 task on the new languages; with `mix`, one on pairs of the
    original languages; with `sts`, CoSENT on stsb_multi_mt train (every language, and across
    languages), the default model's own STS task. Tasks are drawn in those proportions; the dev
    choice watches the report's languages. Graded similarity (STS) drifts when ranking reshapes
    the space: by default the translations are ranked against the teacher's English vectors
    (`rank_against`), and the original languages are held by distillation alone (`keep_ranking`
    0), which with `sts` kept stsb_multi_mt dev at the start model's level (docs/results.md)."""
    from xlingua.data.benchmarks import stsb_multi_mt_langs
    from xlingua.data.general import available, general_root
    from xlingua.encoders.cpu import native_bf16

    corpus = {l for ls in available().values() for l in ls} if general_root().is_dir() else set()
    options = {"teacher": teacher, "teacher_cache": opts.teacher_cache}
    # laser3's own defaults (rank_against student, ranking weight 1) stay unnamed, as in the runs
    # recorded before they were options, so that those runs resume
    if opts.rank_against != "student":
        options["rank_against"] = opts.rank_against
    # English holds no new piece (rows only), or the teacher embeds it (routed): skip the student's pass
    if opts.rows_only or opts.routed:
        options["student_english"] = False
    harakat = {"strip_harakat": True} if opts.strip_harakat else {}  # every pair spec of both tasks
    data = [{"type": "own_pairs", "path": path, "lang": lang, **harakat} for lang, path in pair_files.items()]
    in_corpus = [l for l in langs if l in corpus]
    if opts.lowres:  # the pivot side (English or French) stands where English stands
        data = {"type": "lowres", "langs": langs, **({"sources": list(opts.sources)} if opts.sources else {}), **harakat}
        if opts.general_pairs and in_corpus:  # their NTREX / NLLB-Seed train pairs too (English pivot)
            data = [data, {"type": "general", "langs": in_corpus, **harakat}]
    elif in_corpus:
        data.insert(0, {"type": "general", "langs": in_corpus, "pair_files": pair_files, **harakat})
    tasks = [{"name": "new", "objective": "laser3", "data": data, "weight": 1.0 - opts.mix - opts.sts,
              "temperature": opts.temperature, "one_language": opts.one_language_batches, "options": options}]
    if opts.mix:
        keep = sorted(corpus - set(langs))
        keep_options = options if opts.keep_ranking == 1.0 else {**options, "ranking_weight": opts.keep_ranking}
        tasks.append({"name": "keep", "objective": "laser3", "weight": opts.mix, "temperature": opts.temperature,
                      "data": {"type": "general", "langs": keep, "limit": opts.mix_per_lang, "pair_files": pair_files,
                               **harakat},
                      "options": keep_options})
    if opts.sts:
        tasks.append({"name": "sts", "objective": "cosent", "weight": opts.sts, "options": {"scale": 20},
                      "data": {"type": "stsb_multi_mt", "langs": stsb_multi_mt_langs(), "cross": True}})
    watched = report_langs(opts, langs, pair_files)
    recipe = {
        "model": student, "output_dir": str(opts.out), "tasks": tasks, "seed": opts.seed,
        "max_steps": opts.max_steps, "batch_size": opts.batch_size, "max_seq_length": opts.max_seq_length,
        "lr": opts.lr, "dropout": opts.dropout, "warmup_steps": min(100, opts.max_steps // 10), "schedule": "linear",
        "precision": opts.precision or ("bf16" if native_bf16() else "fp32"), "sampling": "weighted",
        "max_minutes": opts.max_minutes, "eval_every": min(opts.eval_every, opts.max_steps),
        "checkpoint_every": opts.checkpoint_every, "log_every": 10,
        # the original pieces' rows never move: without new pieces the model ships as an overlay
        # on e5-small like the default; with them only the new rows train
        **({"freeze_rows": {"word_embeddings": base_rows}, "rows_lr": opts.pieces_lr} if base_rows
           else {"freeze": ["word_embeddings"]}),
        **({"freeze": list(BODY)} if opts.rows_only else {}),
        # "mean" spans the low-resource slices too, each by its non-Bible figure where it has one
        "eval": {"general_langs": [l for l in watched if l not in pair_files], "pair_files": pair_files,
                 **({"lowres_langs": langs} if opts.lowres else {}), "limit": LIMIT, "select": "mean",
                 **({"pivot_model": teacher} if opts.routed else {}),
                 **({"strip_harakat": True} if opts.strip_harakat else {})},
    }
    return config_from_dict(recipe, where="xlingua extend")


def start_with_pieces(opts: ExtendOptions, langs: list[str], pair_files: dict[str, str], spec: str,
                      path: Path, echo: Callable[[str], None]) -> tuple[str, int]:
    """(the start model's directory, rows of its original pieces): `spec` with `opts.new_pieces`
    pieces learned on the languages' training text; made once, then reused as it is."""
    from xlingua.data.arabic import with_stripped_copies
    from xlingua.data.general import available, general_root, read_general, read_own_pairs
    from xlingua.data.lowres import read_lowres
    from xlingua.encoders.loading import load_encoder
    from xlingua.encoders.new_pieces import add_pieces, learn_pieces, piece_count, spared, text_scripts, written_in

    made_for = {"model": spec, "new_pieces": opts.new_pieces, "langs": langs, "pair_files": pair_files,
                **({"spare_known": True} if opts.spare_known else {}), **({"lowres": True} if opts.lowres else {}),
                **({"strip_harakat": True} if opts.strip_harakat else {})}
    meta_file = path / "xlingua.json"
    if meta_file.exists():
        meta = json.loads(meta_file.read_text(encoding="utf-8"))
        if meta.get("made_for") != made_for:
            raise ValueError(f"{path} holds new pieces made for {meta.get('made_for')}, not {made_for}; "
                             "use another --out")
        return str(path), meta["base_rows"]
    encoder = load_encoder(spec)
    base_rows = piece_count(encoder)
    corpus = {l for ls in available().values() for l in ls} if general_root().is_dir() else set()
    # (text, pivot side, language) of the pairs the pieces are learned from: the pivot side is
    # spared, and with --lowres both sides of the corpus's languages not trained, which the model
    # reads as it is
    others: list[str] = []
    if opts.lowres:
        pairs = []
        for p in read_lowres():
            if p.lang in langs:
                pairs.append((p.text, p.pivot, p.lang))
            else:
                others += [p.text, p.pivot]
    else:
        in_corpus = [l for l in langs if l in corpus]
        pairs = [(p.text, p.english, p.lang) for p in read_general(in_corpus, pair_files=pair_files)] if in_corpus else []
        pairs += [(p.text, p.english, lang) for lang, f in pair_files.items() for p in read_own_pairs(f, lang)]
    if opts.strip_harakat:  # the text trains without its vowel marks too: learn the pieces it splits into
        pairs = with_stripped_copies(pairs)
    texts = [t for t, _, _ in pairs]
    scripts = text_scripts(texts)
    pieces = written_in(learn_pieces(texts, opts.new_pieces, encoder.tokenizer.table), scripts)
    if opts.spare_known:
        known = known_text(sorted(corpus - set(langs)), scripts, [pivot for _, pivot, _ in pairs] + others)
        have = {p for p, _ in json.loads(encoder.tokenizer.json)["model"]["vocab"]}
        pieces = [p for p in pieces if p[0] not in have]
        was = len(pieces)
        pieces = spared(encoder.tokenizer, pieces, known)
        echo(f"{was - len(pieces):,} new pieces dropped: {len(known):,} sentences of the original languages' "
             f"training pairs (both sides) in {', '.join(sorted(scripts))} would use them")
    ids = add_pieces(encoder, pieces)
    encoder.save(path, made_for=made_for, base_rows=base_rows, added_pieces=len(ids), scripts=sorted(scripts))
    echo(f"{len(ids):,} new pieces in {', '.join(sorted(scripts))} (of {opts.new_pieces:,} learned on "
         f"{len(texts):,} sentences) -> {path}")
    return str(path), base_rows


def known_text(langs: list[str], scripts: set[str], more: Sequence[str] = ()) -> list[str]:
    """The sentences that must split as before, holding a character of `scripts`: both sides of the
    training pairs of `langs` (general corpus), and `more` (the pivot sides of the new languages'
    pairs, and any other text to spare). English and French are Latin script: Latin-script pieces
    must leave the pivot side alone, which rows-only training never embeds."""
    from xlingua.data.general import read_general
    from xlingua.data.scripts import any_char_of

    has = any_char_of(scripts)
    sides = {t for p in (read_general(langs) if langs else []) for t in (p.text, p.english)} | set(more)
    return sorted(t for t in sides if has.search(t))


def _before(opts: ExtendOptions, langs: list[str], pair_files: dict[str, str], lowres: list[str],
            out: Path) -> tuple[dict, dict | None]:
    """The start model's reports (the low-resource one with `lowres` languages, else None), kept
    in OUT so that a resumed run does not measure them again."""
    from xlingua.encoders.loading import load_encoder

    key = {"model": opts.model, "langs": langs, "pair_files": pair_files, **({"lowres": lowres} if lowres else {})}
    path = out / BEFORE
    if path.exists():
        held = json.loads(path.read_text(encoding="utf-8"))
        if held.get("key") == key:
            return held["report"], held.get("lowres")
    encoder = load_encoder(opts.model)
    report = dev_report(encoder, langs, pair_files)
    low = lowres_report(encoder, dev_by_language(lowres)) if lowres else None
    write_json(path, {"key": key, "report": report, **({"lowres": low} if lowres else {})})
    return report, low


def _echo_reports(echo: Callable[[str], None], watched: list[str], before: dict, lowres: dict | None,
                  after: dict | None = None) -> None:
    """The general report (before, and after when given) and the low-resource one of that time."""
    if watched:
        echo(format_report(before, after))
    if lowres is not None:
        echo(("after: " if after is not None else "before: ") + format_lowres_report(lowres))


def _jsonable(opts: ExtendOptions) -> dict:
    return {k: (list(v) if isinstance(v, tuple) else v) for k, v in asdict(opts).items()}
