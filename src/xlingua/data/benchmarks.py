"""Readers of the standard benchmark files in ../shared/benchmarks (see its README).

Every reader checks what it reads: a malformed row raises `BenchmarkFormatError` naming the
file and line; a missing file raises `FileNotFoundError` naming what was wanted and where it
was looked for. Nothing is skipped silently. The DuEAM pair sets built from XNLI are in
`xlingua.data.nli`.
"""
from __future__ import annotations

import csv
import math
from dataclasses import dataclass, field
from pathlib import Path

from xlingua.data.text import read_texts
from xlingua.paths import benchmarks_dir, corpora_dir


class BenchmarkFormatError(ValueError):
    """A row that does not follow its file's format (message starts with file:line)."""


def require(path: Path, what: str) -> Path:
    if not path.exists():
        raise FileNotFoundError(f"{what} not found: looked for {path}")
    return path


def _root(data_dir) -> Path:
    root = benchmarks_dir(data_dir)
    if not root.is_dir():
        raise FileNotFoundError(f"benchmark directory not found: {root} (set --data-dir or $XLINGUA_DATA)")
    return root


def read_lines(path: Path, encoding: str = "utf-8") -> list[str]:
    """All lines of a benchmark file (plain or gzip); bad UTF-8 or a NUL names file:line.
    A latin-1 file (SentEval TREC) decodes whatever its bytes."""
    if encoding == "utf-8":
        return list(read_texts(path))
    lines = Path(path).read_bytes().decode(encoding).split("\n")
    return [line.rstrip("\r") for line in (lines[:-1] if lines[-1] == "" else lines)]


def _found(folder: Path, names: list[str], pattern: str) -> list[str]:
    """`names` globbed in `folder`; none is an error (an empty set would score nothing)."""
    if not names:
        raise BenchmarkFormatError(f"{folder}: no {pattern} files")
    return names


def read_tsv(path: Path, ncols: int, what: str, min_cols: int | None = None, allow_empty: bool = True) -> list[list[str]]:
    """Rows of a tab-separated file with exactly `ncols` columns (or at least `min_cols`); an
    empty file is an error naming it unless `allow_empty`."""
    rows = []
    for lineno, line in enumerate(read_lines(path), 1):
        cols = line.split("\t")
        ok = len(cols) >= min_cols if min_cols else len(cols) == ncols
        if not ok:
            need = f"at least {min_cols}" if min_cols else str(ncols)
            raise BenchmarkFormatError(f"{path}:{lineno}: expected {need} tab-separated columns "
                                       f"({what}), got {len(cols)}: {line[:80]!r}")
        rows.append(cols)
    if not rows and not allow_empty:
        raise BenchmarkFormatError(f"{path}: no rows ({what}); the file is empty")
    return rows


def parse_score(value: str, path: Path, lineno: int, low: float | None = None, high: float | None = None) -> float:
    try:
        x = float(value)
    except ValueError:
        raise BenchmarkFormatError(f"{path}:{lineno}: expected a number, got {value!r}") from None
    if math.isnan(x) or (low is not None and x < low) or (high is not None and x > high):
        raise BenchmarkFormatError(f"{path}:{lineno}: score {value!r} outside [{low}, {high}]")
    return x


def read_parallel(a: Path, b: Path) -> tuple[list[str], list[str]]:
    """Two line-aligned files (line i of a translates line i of b)."""
    xa, xb = read_lines(a), read_lines(b)
    if len(xa) != len(xb):
        raise BenchmarkFormatError(f"{a} has {len(xa)} lines but {b} has {len(xb)}; they must be line-aligned")
    for lineno, (u, v) in enumerate(zip(xa, xb), 1):
        if not u.strip() or not v.strip():
            bad = a if not u.strip() else b
            raise BenchmarkFormatError(f"{bad}:{lineno}: empty sentence in a parallel file")
    return xa, xb


# ---- sentence-pair scoring sets (STS) --------------------------------------------------

@dataclass
class ScoredPairs:
    """Sentence pairs with a gold similarity score."""
    name: str
    s1: list[str]
    s2: list[str]
    score: list[float]
    lang1: str = "en"
    lang2: str = "en"
    note: str = ""

    def __len__(self) -> int:
        return len(self.score)

    def head(self, n: int | None) -> "ScoredPairs":
        if n is None:
            return self
        return ScoredPairs(self.name, self.s1[:n], self.s2[:n], self.score[:n], self.lang1, self.lang2, self.note)


# STS 2017 track 6: the input file holds 500 pairs, the gold only the first 250 (the shared
# data's PROVENANCE.txt records this; the 250 are identical to STS2017-extended en-tr).
STS17_KNOWN_EXTRA_INPUT = {"track6.tr-en": 250}


def sts17_tracks(data_dir=None) -> list[str]:
    gold = require(_root(data_dir) / "sts17" / "STS2017.gs", "STS 2017 gold directory")
    return _found(gold, sorted(p.name[len("STS.gs."):-len(".txt")] for p in gold.glob("STS.gs.*.txt")), "STS.gs.*.txt")


def read_sts17(track: str, data_dir=None) -> ScoredPairs:
    """SemEval-2017 task 1 track, e.g. 'track4a.es-en': input `s1<TAB>s2`, gold one score a line."""
    root = _root(data_dir) / "sts17"
    inp = require(root / "STS2017.eval.v1.1" / f"STS.input.{track}.txt", f"STS 2017 input of {track}")
    gs = require(root / "STS2017.gs" / f"STS.gs.{track}.txt", f"STS 2017 gold of {track}")
    rows = read_tsv(inp, 2, "s1, s2", allow_empty=False)
    gold = [parse_score(v, gs, i, 0, 5) for i, v in enumerate(read_lines(gs), 1)]
    note = ""
    if len(rows) != len(gold):
        if STS17_KNOWN_EXTRA_INPUT.get(track) == len(gold):
            note = f"input has {len(rows)} pairs, gold {len(gold)}: the first {len(gold)} are scored (known in the release)"
            rows = rows[: len(gold)]
        else:
            raise BenchmarkFormatError(f"{inp} has {len(rows)} pairs but {gs} has {len(gold)} scores")
    l1, l2 = track.split(".")[1].split("-")
    return ScoredPairs(f"sts17.{track}", [r[0] for r in rows], [r[1] for r in rows], gold, l1, l2, note)


def sts17_extended_pairs(data_dir=None) -> list[str]:
    root = require(_root(data_dir) / "sts17_extended", "STS2017-extended directory")
    return _found(root, sorted(p.name[4:-4] for p in root.glob("STS.??-??.txt")), "STS.xx-yy.txt")


def read_sts17_extended(pair: str, data_dir=None) -> ScoredPairs:
    """STS2017-extended (multilingual SBERT): `s1<TAB>s2<TAB>score`, pair like 'en-de'."""
    path = require(_root(data_dir) / "sts17_extended" / f"STS.{pair}.txt", f"STS2017-extended {pair}")
    rows = read_tsv(path, 3, "s1, s2, score", allow_empty=False)
    scores = [parse_score(r[2], path, i, 0, 5) for i, r in enumerate(rows, 1)]
    l1, l2 = pair.split("-")
    return ScoredPairs(f"sts17_extended.{pair}", [r[0] for r in rows], [r[1] for r in rows], scores, l1, l2)


def read_stsb(split: str = "test", data_dir=None) -> ScoredPairs:
    """STS Benchmark: genre, file, year, id, score, s1, s2[, source columns]."""
    path = require(_root(data_dir) / "stsb" / "stsbenchmark" / f"sts-{split}.csv", f"STS Benchmark {split}")
    rows = read_tsv(path, 7, "genre, file, year, id, score, s1, s2", min_cols=7, allow_empty=False)
    scores = [parse_score(r[4], path, i, 0, 5) for i, r in enumerate(rows, 1)]
    return ScoredPairs(f"stsb.{split}", [r[5] for r in rows], [r[6] for r in rows], scores)


def stsb_multi_mt_langs(data_dir=None) -> list[str]:
    root = require(_root(data_dir) / "stsb_multi_mt", "stsb_multi_mt directory")
    return _found(root, sorted(p.name.split("-")[1] for p in root.glob("stsb-*-dev.csv")), "stsb-xx-dev.csv")


def read_stsb_multi_mt(lang: str, split: str = "dev", data_dir=None) -> ScoredPairs:
    """Machine-translated STS Benchmark: CSV `s1,s2,score` (quoted where needed)."""
    path = require(_root(data_dir) / "stsb_multi_mt" / f"stsb-{lang}-{split}.csv", f"stsb_multi_mt {lang} {split}")
    s1, s2, scores = [], [], []
    reader = csv.reader(text + "\n" for text in read_texts(path))
    for row in reader:
        lineno = reader.line_num
        if len(row) != 3:
            raise BenchmarkFormatError(f"{path}:{lineno}: expected 3 CSV fields (s1, s2, score), got {len(row)}")
        s1.append(row[0])
        s2.append(row[1])
        scores.append(parse_score(row[2], path, lineno, 0, 5))
    return ScoredPairs(f"stsb_multi_mt.{lang}", s1, s2, scores, lang, lang)


# ---- quality estimation ----------------------------------------------------------------

STS_GROUPS = ("sts17", "sts17_extended", "stsb", "stsb_multi_mt")


def read_sts_group(group: str, data_dir=None) -> list[ScoredPairs]:
    """Every set of an STS group: STS 2017 tracks, STS2017-extended pairs, STSb test,
    stsb_multi_mt dev languages."""
    if group == "sts17":
        return [read_sts17(t, data_dir) for t in sts17_tracks(data_dir)]
    if group == "sts17_extended":
        return [read_sts17_extended(p, data_dir) for p in sts17_extended_pairs(data_dir)]
    if group == "stsb":
        return [read_stsb("test", data_dir)]
    if group == "stsb_multi_mt":
        return [read_stsb_multi_mt(l, "dev", data_dir) for l in stsb_multi_mt_langs(data_dir)]
    raise ValueError(f"unknown STS set {group!r}; choose from {STS_GROUPS}")


MLQE_PAIRS = ("en-de", "en-zh", "et-en", "ne-en", "ro-en", "si-en")
# train: 7,000 rows a pair, for supervised QE; dev: 1,000, for choosing models and settings;
# test20: 1,000, the WMT20 test set, reported once for a chosen model.
MLQE_SPLITS = ("train", "dev", "test20")


def read_mlqe(pair: str, split: str = "test20", data_dir=None) -> ScoredPairs:
    """WMT20 QE task 1 (direct assessment) `{split}.{src}{tgt}.df.short.tsv`: tsv with header;
    uses original (source), translation (MT output) and z_mean (mean z-normalized DA score)."""
    if split not in MLQE_SPLITS:
        raise ValueError(f"unknown WMT20 QE split {split!r}; choose from {MLQE_SPLITS}")
    src, tgt = pair.split("-")
    path = require(_root(data_dir) / "mlqe" / pair / f"{split}.{src}{tgt}.df.short.tsv", f"WMT20 QE {pair} {split}")
    lines = read_lines(path)
    header = lines[0].split("\t") if lines else []
    for col in ("original", "translation", "z_mean"):
        if col not in header:
            raise BenchmarkFormatError(f"{path}:1: header lacks column {col!r}: {header}")
    io, it, iz = header.index("original"), header.index("translation"), header.index("z_mean")
    s1, s2, z = [], [], []
    for lineno, line in enumerate(lines[1:], 2):
        cols = line.split("\t")
        if len(cols) != len(header):
            raise BenchmarkFormatError(f"{path}:{lineno}: expected {len(header)} tab-separated columns, got {len(cols)}")
        if not cols[io].strip() or not cols[it].strip():
            raise BenchmarkFormatError(f"{path}:{lineno}: empty {'original' if not cols[io].strip() else 'translation'}")
        s1.append(cols[io])
        s2.append(cols[it])
        z.append(parse_score(cols[iz], path, lineno))
    return ScoredPairs(f"mlqe.{pair}", s1, s2, z, src, tgt)


# ---- bitext retrieval and mining -------------------------------------------------------

def tatoeba_langs(data_dir=None) -> list[str]:
    """ISO 639-3 codes with both sides of `tatoeba.xxx-eng.*` present."""
    root = require(_root(data_dir) / "tatoeba", "Tatoeba directory")
    out = []
    for p in root.glob("tatoeba.*-eng.eng"):
        lang = p.name.split(".")[1].split("-")[0]
        if (root / f"tatoeba.{lang}-eng.{lang}").exists():
            out.append(lang)
    return sorted(out)


def read_tatoeba(lang: str, data_dir=None) -> tuple[list[str], list[str]]:
    """(sentences in `lang`, their English translations), line-aligned."""
    root = _root(data_dir) / "tatoeba"
    xx = require(root / f"tatoeba.{lang}-eng.{lang}", f"Tatoeba {lang} side")
    en = require(root / f"tatoeba.{lang}-eng.eng", f"Tatoeba {lang}-eng English side")
    return read_parallel(xx, en)


@dataclass
class BuccData:
    src_lang: str
    src: dict[str, str]
    tgt: dict[str, str]
    gold: list[tuple[str, str]] = field(default_factory=list)


def _read_ids(path: Path) -> dict[str, str]:
    out = {}
    for lineno, (sid, sent) in enumerate(read_tsv(path, 2, "id, sentence"), 1):
        if sid in out:
            raise BenchmarkFormatError(f"{path}:{lineno}: duplicate id {sid!r}")
        out[sid] = sent
    return out


def read_bucc(src_lang: str = "zh", split: str = "dev", data_dir=None) -> BuccData:
    """BUCC 2018 `{xx}-en.{split}.{xx,en,gold}`: `id<TAB>sentence`; gold `xx-id<TAB>en-id`."""
    root = _root(data_dir) / "bucc2018"
    base = f"{src_lang}-en.{split}"
    src = _read_ids(require(root / f"{base}.{src_lang}", f"BUCC {src_lang} sentences"))
    tgt = _read_ids(require(root / f"{base}.en", "BUCC English sentences"))
    gold_path = require(root / f"{base}.gold", "BUCC gold pairs")
    gold = []
    for lineno, (a, b) in enumerate(read_tsv(gold_path, 2, "src-id, en-id"), 1):
        if a not in src or b not in tgt:
            raise BenchmarkFormatError(f"{gold_path}:{lineno}: gold pair ({a}, {b}) names an id absent "
                                       f"from the sentence files")
        gold.append((a, b))
    return BuccData(src_lang, src, tgt, gold)


def read_multi30k(lang: str, split: str = "test_2016_flickr", data_dir=None) -> list[str]:
    return read_lines(require(_root(data_dir) / "multi30k" / f"{split}.{lang}", f"Multi30k {split} {lang}"))


def read_multi30k_aligned(langs: list[str], split: str = "train", data_dir=None) -> dict[str, list[str]]:
    """The Multi30k `split` files of `langs` (line i of each is the same caption), checked to
    have as many lines as the first language's."""
    out = {lang: read_multi30k(lang, split, data_dir) for lang in langs}
    first, n = langs[0], len(out[langs[0]])
    for lang, lines in out.items():
        if len(lines) != n:
            raise BenchmarkFormatError(
                f"Multi30k {split}.{lang} has {len(lines)} lines, {split}.{first} {n}: not line-aligned")
    return out


def read_l10n(lang: str, split: str = "dev", root=None, allow_empty: bool = True) -> tuple[list[str], list[str]]:
    """l10n `xx-en.{split}.tsv.gz`: `translation<TAB>english` -> (xx sentences, English). Some
    dev splits are empty (sw); training data must not be (`allow_empty=False`)."""
    root = Path(root) if root else corpora_dir() / "l10n"
    path = require(root / f"{lang}-en.{split}.tsv.gz", f"l10n {lang}-en {split} file")
    rows = read_tsv(path, 2, "translation, english", allow_empty=allow_empty)
    return [r[0] for r in rows], [r[1] for r in rows]


# ---- SentEval classification sets ------------------------------------------------------

SENTEVAL_BINARY = {"MR": ("MR/rt-polarity.pos", "MR/rt-polarity.neg"),
                   "CR": ("CR/custrev.pos", "CR/custrev.neg"),
                   "SUBJ": ("SUBJ/subj.objective", "SUBJ/subj.subjective"),
                   "MPQA": ("MPQA/mpqa.pos", "MPQA/mpqa.neg")}


@dataclass
class Labelled:
    texts: list[str]
    labels: list[int]
    label_names: list[str]


def read_senteval_binary(task: str, data_dir=None) -> Labelled:
    """MR, CR, SUBJ, MPQA: one sentence a line in a positive and a negative file (label 1, 0).
    SentEval reads them as latin-1 (MR and SUBJ hold a few non-UTF-8 bytes). Empty lines (CR has
    a few) are kept as empty sentences with their file's label, as SentEval keeps them."""
    root = _root(data_dir) / "senteval"
    pos, neg = (require(root / p, f"SentEval {task} file") for p in SENTEVAL_BINARY[task])
    texts, labels = [], []
    for path, label in ((pos, 1), (neg, 0)):
        for line in read_lines(path, "latin-1"):
            texts.append(line.strip())
            labels.append(label)
    return Labelled(texts, labels, ["neg", "pos"] if task != "SUBJ" else ["subjective", "objective"])


def read_trec(split: str = "train", data_dir=None) -> Labelled:
    """TREC question types: `COARSE:fine question` a line (latin-1); the coarse label is used."""
    name = "train_5500.label" if split == "train" else "TREC_10.label"
    path = require(_root(data_dir) / "senteval" / "TREC" / name, f"SentEval TREC {split}")
    texts, coarse = [], []
    for lineno, line in enumerate(read_lines(path, "latin-1"), 1):
        head, _, text = line.partition(" ")
        if ":" not in head or not text.strip():
            raise BenchmarkFormatError(f"{path}:{lineno}: expected 'LABEL:fine question', got {line[:80]!r}")
        coarse.append(head.split(":")[0])
        texts.append(text.strip())
    names = ["ABBR", "DESC", "ENTY", "HUM", "LOC", "NUM"]
    for lineno, c in enumerate(coarse, 1):
        if c not in names:
            raise BenchmarkFormatError(f"{path}:{lineno}: unknown TREC class {c!r}")
    return Labelled(texts, [names.index(c) for c in coarse], names)


def read_sst2(split: str = "train", data_dir=None) -> Labelled:
    """SST binary: `sentence<TAB>label` (0/1)."""
    path = require(_root(data_dir) / "senteval" / "SST" / "binary" / f"sentiment-{split}", f"SentEval SST2 {split}")
    texts, labels = [], []
    for lineno, (text, label) in enumerate(read_tsv(path, 2, "sentence, label"), 1):
        if label.strip() not in ("0", "1"):
            raise BenchmarkFormatError(f"{path}:{lineno}: SST2 label must be 0 or 1, got {label!r}")
        texts.append(text.strip())
        labels.append(int(label))
    return Labelled(texts, labels, ["neg", "pos"])


# ---- XNLI ------------------------------------------------------------------------------

LABEL_IDS = {"entailment": 0, "neutral": 1, "contradiction": 2}


@dataclass(frozen=True)
class NLIPair:
    premise: str
    hypothesis: str
    label: int


def read_xnli_split(lang: str, split: str = "test", data_dir=None) -> list[NLIPair]:
    """XNLI `{split}-{lang}.tsv`: `premise<TAB>hypothesis<TAB>label` -> list of NLIPair.

    The shared test files end each hypothesis with a carriage return ("...\\r<TAB>label"), so
    lines are split on "\\n" only and a trailing "\\r" is stripped from every field."""
    path = require(_root(data_dir) / "xnli" / f"{split}-{lang}.tsv", f"XNLI {split} {lang}")
    pairs = []
    for lineno, line in enumerate(read_lines(path), 1):
        cols = [c.rstrip("\r") for c in line.split("\t")]
        if len(cols) != 3 or cols[2] not in LABEL_IDS:
            raise BenchmarkFormatError(f"{path}:{lineno}: expected premise<TAB>hypothesis<TAB>label with "
                                       f"label in {sorted(LABEL_IDS)}, got {line[:80]!r}")
        pairs.append(NLIPair(cols[0], cols[1], LABEL_IDS[cols[2]]))
    return pairs


def evaluation_sentences(data_dir=None) -> set[str]:
    """Every sentence of the sets meaning embeddings are evaluated or chosen on (STS 2017,
    STS2017-extended, WMT20 QE test20 and dev), lower-cased and stripped: training data must
    not contain them."""
    root = benchmarks_dir(data_dir)
    # a set absent here cannot be evaluated on here either
    sets = [d for group in ("sts17", "sts17_extended") if (root / group).is_dir()
            for d in read_sts_group(group, data_dir)]
    sets += [read_mlqe(p, split, data_dir) for p in MLQE_PAIRS if (root / "mlqe" / p).is_dir()
             for split in ("test20", "dev")]
    return {s.strip().lower() for d in sets for s in d.s1 + d.s2}
