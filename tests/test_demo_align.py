"""The demo: its example texts, margin alignment on a known answer, the printed tables."""
from __future__ import annotations

import io

import numpy as np
from rich.console import Console

from xlingua.demo import best_matches, builtin_examples, run_demo
from xlingua.encoders.base import Encoder


def test_examples_are_parallel_and_multiscript():
    ex = builtin_examples()
    assert len(ex) >= 6
    sizes = {len(v) for v in ex.values()}
    assert sizes == {8}
    assert all(s.strip() for v in ex.values() for s in v)
    # Latin, Cyrillic, Arabic, Devanagari, Han scripts are all present
    text = "".join(s for v in ex.values() for s in v)
    for lo, hi in [(0x0400, 0x04FF), (0x0600, 0x06FF), (0x0900, 0x097F), (0x4E00, 0x9FFF)]:
        assert any(lo <= ord(c) <= hi for c in text)


def test_best_matches_by_margin_with_scores():
    src = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    tgt = np.array([[0.0, 1.0], [1.0, 0.1], [0.9, 1.0]])
    res = best_matches(src, tgt, k=2)
    assert res.best.tolist() == [1, 0, 2]
    assert np.isclose(res.cosine[0], 1 / np.sqrt(1.01))
    assert res.accuracy == 1 / 3
    assert res.margin.shape == (3,) and np.all(res.margin > 0)


class RowEncoder(Encoder):
    """Maps each example sentence to its row's one-hot vector (plus a little language noise),
    so a perfect alignment is known in advance."""

    name = "row-test"
    dim = 8

    def __init__(self):
        ex = builtin_examples()
        self.row = {s: i for sents in ex.values() for i, s in enumerate(sents)}

    def _encode_batch(self, texts, lang):
        out = np.full((len(texts), self.dim), 0.05, dtype=np.float32)
        for k, t in enumerate(texts):
            out[k, self.row[t]] = 1.0
        return out


def test_run_demo_prints_tables():
    buf = io.StringIO()
    vecs = run_demo(RowEncoder(), pairs=[("en", "zh")], console=Console(file=buf, width=200))
    printed = buf.getvalue()
    assert "en -> zh" in printed and "100% correct" in printed
    assert "火车早上七点出发。" in printed and "Alignment accuracy" in printed
    assert set(vecs) == set(builtin_examples())
