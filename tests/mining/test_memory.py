"""In-memory mining (mining.memory): the modes on a toy answered by hand, and the pairs of the
`mine` pipeline on a corpus that fits in memory."""
import gzip

import numpy as np
import pytest
from mining_toy import toy_corpus, write_lines

from xlingua.mining import MineConfig, mine
from xlingua.mining.memory import mine_rows
from xlingua.mining.toy import CharNgramEncoder


def test_modes_one_meaning_each():
    # x0 <-> y0 mutual; x1's best is y0 too (but y0's best is x0); y1's best is x1.
    x = np.array([[1.0, 0.0], [0.8, 0.6]])
    y = np.array([[1.0, 0.05], [0.0, 1.0]])

    def pairs(mode):
        s, a, b = mine_rows(x, y, k=2, margin="absolute", mode=mode)
        assert list(s) == sorted(s, reverse=True)
        return list(zip(a.tolist(), b.tolist()))

    assert pairs("forward") == [(0, 0), (1, 0)]
    assert pairs("backward") == [(0, 0), (1, 1)]
    assert pairs("intersect") == [(0, 0)]
    assert pairs("union") == [(0, 0), (1, 0), (1, 1)]
    # LASER's max: greedy one-to-one by score, so (1, 0) loses y0 to the better (0, 0)
    assert pairs("max") == [(0, 0), (1, 1)]
    with pytest.raises(ValueError, match="unknown mode"):
        mine_rows(x, y, mode="both")


@pytest.mark.parametrize("margin, mode", [("ratio", "max"), ("distance", "forward"), ("inbatch", "union")])
def test_same_pairs_as_the_pipeline(tmp_path, margin, mode):
    src, tgt, _ = toy_corpus()
    enc = CharNgramEncoder(dim=256)
    out = tmp_path / "pairs.tsv.gz"
    mine(write_lines(tmp_path / "s.txt", src), write_lines(tmp_path / "t.txt", tgt), out,
         MineConfig("en", "en", margin=margin, mode=mode, shard_size=5), tmp_path / "wd", encoder=enc,
         show_progress=False)
    with gzip.open(out, "rt", encoding="utf-8") as f:
        piped = [line.rstrip("\n").split("\t") for line in f]
    # the pipeline stores float16 vectors: the same rounding here
    unit = lambda texts: enc.encode(texts).astype(np.float16).astype(np.float32)  # noqa: E731
    s, a, b = mine_rows(unit(src), unit(tgt), k=4, margin=margin, mode=mode)
    assert [(src[i], tgt[j]) for i, j in zip(a, b)] == [(r[1], r[2]) for r in piped]
    np.testing.assert_allclose(s, [float(r[0]) for r in piped], atol=2e-6)
