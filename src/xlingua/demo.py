"""`xlingua demo`: embed the built-in example (the same 8 sentences written in 8 languages,
shipped in xlingua/examples/parallel.tsv) and align them across languages.

For a pair of languages A -> B, every sentence of A gets its nearest sentence in B by ratio
margin (Artetxe & Schwenk 2019), shown with its cosine and margin. Row i of every language
means the same, so the right neighbour of A[i] is B[i]; a summary table gives the share of
sentences aligned correctly for every pair of languages.
"""
from __future__ import annotations

import csv
from dataclasses import dataclass
from importlib import resources

import numpy as np

from xlingua.similarity import cosine_matrix, score_matrix

DEFAULT_PAIRS = (("en", "zh"), ("ar", "hi"))
MARGIN_K = 4


def builtin_examples() -> dict[str, list[str]]:
    """The built-in parallel example: {language: sentences}, row i the same meaning."""
    text = resources.files("xlingua").joinpath("examples/parallel.tsv").read_text(encoding="utf-8")
    rows = list(csv.reader(text.splitlines(), delimiter="\t", quoting=csv.QUOTE_NONE))
    header, body = rows[0], rows[1:]
    for n, row in enumerate(body, 2):
        if len(row) != len(header):
            raise ValueError(f"examples/parallel.tsv:{n}: {len(row)} columns, expected {len(header)}")
    return {lang: [row[i] for row in body] for i, lang in enumerate(header)}


@dataclass
class Matches:
    """For each source sentence: the index of its best target, its cosine and its margin."""

    best: np.ndarray
    cosine: np.ndarray
    margin: np.ndarray

    @property
    def accuracy(self) -> float:
        """Share of sentences aligned to the target of the same row (the gold translation)."""
        return float(np.mean(self.best == np.arange(len(self.best))))


def best_matches(src: np.ndarray, tgt: np.ndarray, k: int = MARGIN_K) -> Matches:
    """Nearest target of every source row by ratio margin over k neighbours."""
    k = min(k, len(tgt), len(src))
    margins = score_matrix(src, tgt, "ratio", k=k)
    best = margins.argmax(axis=1)
    rows = np.arange(len(src))
    return Matches(best, cosine_matrix(src, tgt)[rows, best], margins[rows, best])


def embed_examples(encoder, examples: dict[str, list[str]]) -> dict[str, np.ndarray]:
    """One encoder call for all languages (better batching than one call each)."""
    langs = list(examples)
    flat = [s for lang in langs for s in examples[lang]]
    vecs = encoder.encode(flat)
    n = len(examples[langs[0]])
    return {lang: vecs[i * n : (i + 1) * n] for i, lang in enumerate(langs)}


def pair_table(examples, vecs, src: str, tgt: str):
    from rich.table import Table

    result = best_matches(vecs[src], vecs[tgt])
    table = Table(title=f"{src} -> {tgt}: nearest {tgt} sentence by margin "
                        f"({result.accuracy:.0%} correct)", show_lines=False)
    table.add_column(src)
    table.add_column(f"nearest in {tgt}")
    table.add_column("cosine", justify="right")
    table.add_column("margin", justify="right")
    table.add_column("ok", justify="center")
    for i, sentence in enumerate(examples[src]):
        j = int(result.best[i])
        table.add_row(sentence, examples[tgt][j], f"{result.cosine[i]:.3f}",
                      f"{result.margin[i]:.3f}", "[green]yes[/]" if j == i else "[red]no[/]")
    return table


def accuracy_table(vecs):
    from rich.table import Table

    langs = list(vecs)
    table = Table(title="Alignment accuracy for every pair (row: source, column: target)")
    table.add_column("src \\ tgt")
    for lang in langs:
        table.add_column(lang, justify="right")
    for a in langs:
        cells = ["" if a == b else f"{best_matches(vecs[a], vecs[b]).accuracy:.0%}" for b in langs]
        table.add_row(a, *cells)
    return table


def run_demo(model="bundled", pairs=DEFAULT_PAIRS, console=None) -> dict[str, np.ndarray]:
    """Embed the built-in example with `model` (a spec or an Encoder) and print the tables."""
    from rich.console import Console

    from xlingua.encoders.loading import load_encoder

    console = console or Console()
    examples = builtin_examples()
    for src, tgt in pairs:
        for lang in (src, tgt):
            if lang not in examples:
                raise ValueError(f"no example text in {lang!r}; languages: {', '.join(examples)}")
    encoder = model
    if isinstance(model, str):
        with console.status(f"loading encoder {model} (the first run converts the bundled model)"):
            encoder = load_encoder(model)
    vecs = embed_examples(encoder, examples)
    n = len(next(iter(examples.values())))
    console.print(f"[bold]xlingua demo[/]: {n} sentences in {len(examples)} languages "
                  f"({', '.join(examples)}), encoder {encoder.name}, dim {encoder.dim}")
    for src, tgt in pairs:
        console.print(pair_table(examples, vecs, src, tgt))
    console.print(accuracy_table(vecs))
    return vecs
