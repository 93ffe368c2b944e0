"""`xlingua score`: given translation pairs in, one score row per pair out, in order.

The output is a TSV whose first row names its columns (`header=False` leaves it out): `cosine`,
the pair's cosine; with `margin=True`, `margin`, its ratio margin (Artetxe & Schwenk 2019) with
the k nearest neighbours taken within the same files; with a QE model, `qe`, a trained quality
estimate in z-units of human judgement (xlingua.similarity.qe_head: a head on the base
encoder's vectors, fitted on WMT20 MLQE-PE). Row i after the header is pair i. With `min_score`
the pairs scoring at least that much (the last column: qe, else margin, else cosine)
are written beside the scores as a filtered corpus, in the form of the input (one TSV, or two
line-aligned files).

Inputs follow `xlingua embed`'s rules (data.text): every pair is counted and validated before
the model loads, two files must have equal line counts, a pipe or `-` is read from a checked
copy (data.spool), and outputs are written under temp names and renamed only when complete.
"""
from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from itertools import islice
from pathlib import Path
from typing import Sequence

import numpy as np

from xlingua.data.spool import Spool
from xlingua.data.text import DEFAULT_MAX_CHARS, ERRORS_HINT, InputError, count_pairs, read_pairs
from xlingua.encoders.base import Embed
from xlingua.io import atomic_open
from xlingua.data.langs import normalize_lang
from xlingua.similarity import paired_cosine, pair_margin
from xlingua.similarity.qe_head import QEModel


@dataclass
class ScoreConfig:
    margin: bool = False
    k: int = 4
    min_score: float | None = None
    src_lang: str | None = None
    tgt_lang: str | None = None
    errors: str = "strict"
    max_chars: int | None = DEFAULT_MAX_CHARS
    buffer_lines: int = 50_000
    qe: QEModel | None = None  # qe.load.load_qe() (a QEModel or a qe.blend.CrossQE); adds the qe column
    header: bool = True  # the first row names the columns

    @property
    def columns(self) -> list[str]:
        """The output's columns, in order."""
        return ["cosine"] + ["margin"] * self.margin + ["qe"] * (self.qe is not None)

    def __post_init__(self):
        if self.k < 1:
            raise ValueError("k must be at least 1")
        if self.buffer_lines < 1:
            raise ValueError("buffer_lines must be at least 1")
        for code in (self.src_lang, self.tgt_lang):
            if code is not None:
                normalize_lang(code)


@dataclass
class ScoreResult:
    output: Path
    pairs: int
    kept: int | None = None
    kept_files: list[Path] = field(default_factory=list)
    qe_route: str | None = None  # what scored the qe column (qe.load.qe_route_text says it in words)


def qe_pair(src_lang: str | None, tgt_lang: str | None) -> str | None:
    """"src-tgt" as the QE heads name pairs (ISO 639-1 codes, e.g. en-de), or None."""
    return f"{normalize_lang(src_lang)}-{normalize_lang(tgt_lang)}" if src_lang and tgt_lang else None


def check_qe_pair(a, b) -> None:
    """--qe scores a translation of a source: both sides need text."""
    for line in (a, b):
        if not line.text.strip():
            raise InputError(f"{line.path}:{line.number}: empty line; --qe needs a source and its "
                             "translation on every line")


def check_qe_pairs(inputs: list[str], errors: str = "strict", max_chars: int | None = DEFAULT_MAX_CHARS) -> None:
    """Check every pair for --qe before the model loads."""
    for a, b in read_pairs(inputs, errors=errors, max_chars=max_chars):
        check_qe_pair(a, b)


def score_vectors(x: np.ndarray, y: np.ndarray, margin: bool = False, k: int = 4) -> dict[str, np.ndarray]:
    """{"cosine": (n,)} and, with margin, {"margin": (n,)} for the pairs (x[i], y[i])."""
    out = {"cosine": paired_cosine(x, y)}
    if margin:
        out["margin"] = pair_margin(x, y, k=k) if len(x) else np.zeros(0, np.float32)
    return out


def score_texts(embed: Embed, src: Sequence[str], tgt: Sequence[str], margin: bool = False, k: int = 4,
                src_lang: str | None = None, tgt_lang: str | None = None,
                qe: QEModel | None = None) -> dict[str, np.ndarray]:
    """Scores of in-memory pairs (the server's /score); with `qe`, a "qe" column too."""
    if len(src) != len(tgt):
        raise ValueError(f"src has {len(src)} items but tgt has {len(tgt)}")
    x, y = embed(list(src), src_lang), embed(list(tgt), tgt_lang)
    out = score_vectors(x, y, margin, k)
    if qe is not None:
        out["qe"] = qe.predict(x, y, list(src), list(tgt), qe_pair(src_lang, tgt_lang))
    return out


def score_files(embed: Embed, inputs: list[str], output: str, config: ScoreConfig,
                n: int | None = None) -> ScoreResult:
    """Score the pairs of `inputs` (two line-aligned files or one src<TAB>tgt file; pipes and
    `-` too) into `output` (TSV: cosine, then margin and qe when asked; header first unless
    config.header is False); `n`: the pair count if the caller has counted already."""
    with Spool(inputs, errors=config.errors, max_chars=config.max_chars, hint=ERRORS_HINT) as spool:
        return _score_files(embed, spool.paths, output, config, n)


def _score_files(embed: Embed, inputs: list[str], output: str, config: ScoreConfig, n: int | None) -> ScoreResult:
    if n is None:
        n = count_pairs(inputs, errors=config.errors, max_chars=config.max_chars)
    out = Path(output)
    out.parent.mkdir(parents=True, exist_ok=True)
    cos = np.zeros(n, np.float32)
    qe = np.zeros(n, np.float32)
    pair = qe_pair(config.src_lang, config.tgt_lang)
    keep_vectors = config.margin
    xs: list[np.ndarray] = []
    ys: list[np.ndarray] = []
    row = 0
    pairs = read_pairs(inputs, errors=config.errors, max_chars=config.max_chars)
    while chunk := list(islice(pairs, config.buffer_lines)):
        x = np.asarray(embed([a.text for a, _ in chunk], config.src_lang), np.float32)
        y = np.asarray(embed([b.text for _, b in chunk], config.tgt_lang), np.float32)
        if config.qe is not None:
            for a, b in chunk:
                check_qe_pair(a, b)
        if row + len(chunk) > n:
            raise ValueError("input changed while it was being read (more pairs than counted)")
        cos[row : row + len(chunk)] = paired_cosine(x, y)
        if config.qe is not None:
            qe[row : row + len(chunk)] = config.qe.predict(x, y, [a.text for a, _ in chunk],
                                                           [b.text for _, b in chunk], pair)
        if keep_vectors:
            xs.append(x)
            ys.append(y)
        row += len(chunk)
    if row != n:
        raise ValueError(f"input changed while it was being read ({row} pairs, {n} counted)")
    columns = [cos]
    if config.margin:
        columns.append(score_vectors(np.concatenate(xs), np.concatenate(ys), True, config.k)["margin"]
                       if n else np.zeros(0, np.float32))
    if config.qe is not None:
        columns.append(qe)
    header = "\t".join(config.columns) + "\n" if config.header else ""
    final = {out: header + "".join("\t".join(f"{c[i]:.6f}" for c in columns) + "\n" for i in range(n))}
    result = ScoreResult(out, n, qe_route=config.qe.route(pair) if config.qe is not None else None)
    if config.min_score is not None:
        keep = columns[-1] >= config.min_score
        final.update(_kept(inputs, out, keep, config))
        result.kept = int(keep.sum())
        result.kept_files = [p for p in final if p != out]
    _write_all(final)
    return result


def kept_paths(inputs: list[str], output: Path) -> list[Path]:
    """Where the filtered corpus goes: OUT.kept.tsv, or OUT.kept.src / OUT.kept.tgt for two files."""
    stem = output.with_suffix("") if output.suffix == ".tsv" else output
    if len(inputs) == 1:
        return [stem.with_name(stem.name + ".kept.tsv")]
    return [stem.with_name(stem.name + ".kept.src"), stem.with_name(stem.name + ".kept.tgt")]


def _kept(inputs: list[str], out: Path, keep: np.ndarray, config: ScoreConfig) -> dict[Path, str]:
    paths = kept_paths(inputs, out)
    src, tgt = [], []
    for i, (a, b) in enumerate(read_pairs(inputs, errors=config.errors, max_chars=config.max_chars)):
        if keep[i]:
            src.append(a.text + "\n")
            tgt.append(b.text + "\n")
    if len(paths) == 1:
        return {paths[0]: "".join(f"{a[:-1]}\t{b}" for a, b in zip(src, tgt))}
    return {paths[0]: "".join(src), paths[1]: "".join(tgt)}


def _write_all(files: dict[Path, str]) -> None:
    """Write every file under a temp name, then rename them all: no output looks complete
    unless all are."""
    with contextlib.ExitStack() as stack:
        for path, text in files.items():
            stack.enter_context(atomic_open(path)).write(text)
