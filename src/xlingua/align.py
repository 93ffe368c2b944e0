"""`xlingua align`: sentence alignment of two ordered documents (a book and its translation, a
page and its localisation).

Each document is read with `xlingua embed`'s rules (data.text); each non-empty line is a
paragraph, split into sentences (data.sentences) unless the lines are sentences already. Every
sentence and every concatenation of two consecutive sentences is embedded, each distinct text
once, and similarity.monotone aligns the two sequences (Vecalign's 1-1, 1-2, 2-1, 1-0, 0-1
steps). Output TSV, one row per aligned group, after a header row naming the columns (left out
with header=False):
    a_start a_end b_start b_end score a_text b_text
ranges half-open over the sentence numbers (0-based); an empty range and no score for a
sentence left unaligned.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import numpy as np

from xlingua.data.sentences import split_sentences
from xlingua.data.text import DEFAULT_MAX_CHARS, ERRORS_HINT, read_lines
from xlingua.encoders.base import Embed
from xlingua.io import write_text
from xlingua.similarity.cosine import cosine_matrix
from xlingua.similarity.monotone import Bead, monotone_align

HEADER = "a_start\ta_end\tb_start\tb_end\tscore\ta_text\tb_text\n"


@dataclass
class Alignment:
    """Two documents' sentences and the beads that align them, in document order."""

    a: list[str]
    b: list[str]
    beads: list[Bead]
    #: (n, m) cosine of every sentence of A with every sentence of B (the page's heatmap)
    similarity: np.ndarray

    def rows(self) -> list[tuple]:
        """(a_start, a_end, b_start, b_end, score or None, a_text, b_text) per bead."""
        return [(bd.a[0], bd.a[1], bd.b[0], bd.b[1], bd.score, " ".join(self.a[bd.a[0] : bd.a[1]]),
                 " ".join(self.b[bd.b[0] : bd.b[1]])) for bd in self.beads]

    def tsv(self, header: bool = True) -> str:
        lines = [HEADER] if header else []
        for a0, a1, b0, b1, score, ta, tb in self.rows():
            s = "" if score is None else f"{score:.6f}"
            lines.append(f"{a0}\t{a1}\t{b0}\t{b1}\t{s}\t{_cell(ta)}\t{_cell(tb)}\n")
        return "".join(lines)


def _cell(text: str) -> str:
    return text.replace("\t", " ")


def document_sentences(paragraphs: Sequence[str], split: bool = True, lang: str | None = None) -> list[str]:
    """Sentences of a document given as paragraphs (or, with split=False, as sentences);
    blank lines are paragraph breaks, not sentences."""
    out = []
    for p in paragraphs:
        if split:
            out.extend(split_sentences(p, lang))
        elif p.strip():
            out.append(p.strip())
    return out


def embed_spans(embed: Embed, sents: Sequence[str], lang: str | None) -> tuple[np.ndarray, np.ndarray]:
    """Embeddings of each sentence and of each pair of consecutive sentences, every distinct
    text embedded once."""
    pairs = [f"{sents[i]} {sents[i + 1]}" for i in range(len(sents) - 1)]
    unique = list(dict.fromkeys([*sents, *pairs]))
    if not unique:
        return np.zeros((0, 1), np.float32), np.zeros((0, 1), np.float32)
    vecs = np.asarray(embed(unique, lang), dtype=np.float32)
    row = {t: i for i, t in enumerate(unique)}
    return vecs[[row[s] for s in sents]], vecs[[row[p] for p in pairs]] if pairs else vecs[:0]


def align_sentences(embed: Embed, a: Sequence[str], b: Sequence[str], lang_a: str | None = None,
                    lang_b: str | None = None, skip_quantile: float = 0.2) -> Alignment:
    """Align two sentence lists (the command's and the server's /align core)."""
    a, b = list(a), list(b)
    a1, a2 = embed_spans(embed, a, lang_a)
    b1, b2 = embed_spans(embed, b, lang_b)
    if not a or not b:
        dim = max(a1.shape[1], b1.shape[1])
        a1, a2, b1, b2 = (np.zeros((len(v), dim), np.float32) for v in (a1, a2, b1, b2))
    beads = monotone_align(a1, a2, b1, b2, skip_quantile=skip_quantile)
    sim = cosine_matrix(a1, b1) if a and b else np.zeros((len(a), len(b)), np.float32)
    return Alignment(a, b, beads, sim)


def read_document(path: str, split: bool = True, lang: str | None = None, errors: str = "strict",
                  max_chars: int | None = DEFAULT_MAX_CHARS) -> list[str]:
    """A document's sentences (bad input fails here, naming file and line)."""
    lines = [line.text for line in read_lines(path, errors=errors, max_chars=max_chars, hint=ERRORS_HINT)]
    return document_sentences(lines, split, lang)


def write_alignment(result: Alignment, output: str, header: bool = True) -> Path:
    """OUT.tsv, under a temp name renamed when complete."""
    out = Path(output)
    write_text(out, result.tsv(header))
    return out


def align_files(embed: Embed, doc_a: str, doc_b: str, output: str, split: bool = True,
                lang_a: str | None = None, lang_b: str | None = None, errors: str = "strict",
                max_chars: int | None = DEFAULT_MAX_CHARS, skip_quantile: float = 0.2,
                header: bool = True) -> Alignment:
    """Read, split, align and write."""
    a = read_document(doc_a, split, lang_a, errors, max_chars)
    b = read_document(doc_b, split, lang_b, errors, max_chars)
    result = align_sentences(embed, a, b, lang_a, lang_b, skip_quantile)
    write_alignment(result, output, header)
    return result
