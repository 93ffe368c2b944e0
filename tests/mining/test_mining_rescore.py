"""Two-stage mining: the first model's best candidates, re-scored by a second model that embeds
only their sentences; cached like every step."""
import gzip
import math

import numpy as np
import pytest
from mining_toy import toy_corpus, write_lines

from xlingua.mining import MineConfig, mine
from xlingua.mining.toy import CharNgramEncoder
from xlingua.similarity.cosine import paired_cosine


class Counting(CharNgramEncoder):
    def __init__(self, **kw):
        super().__init__(**kw)
        self.seen = 0

    def _encode_batch(self, texts, lang):
        self.seen += len(texts)
        return super()._encode_batch(texts, lang)


def _read(path):
    with gzip.open(path, "rt", encoding="utf-8") as f:
        return [line.rstrip("\n").split("\t") for line in f]


@pytest.mark.parametrize("keep", [0.5, 1.0])
def test_second_model_scores_the_kept_candidates_by_cosine(tmp_path, keep):
    src, tgt, truth = toy_corpus()
    sp, tp = write_lines(tmp_path / "src.txt", src), write_lines(tmp_path / "tgt.txt", tgt)
    first, second = CharNgramEncoder(dim=32, n=1), Counting(dim=256)
    out = tmp_path / "pairs.tsv.gz"
    cfg = MineConfig("en", "en", shard_size=5, keep=keep)
    summary = mine(sp, tp, out, cfg, tmp_path / "wd", encoder=first, rescore_encoder=second, show_progress=False)
    rows = _read(out)
    kept = math.ceil(keep * len(src))
    assert summary["rescore"]["kept"] == len(rows) == kept
    assert second.seen == summary["rescore"]["embedded_src"] + summary["rescore"]["embedded_tgt"] <= 2 * kept
    scores = np.array([float(r[0]) for r in rows])
    want = paired_cosine(second.encode([r[1] for r in rows]), second.encode([r[2] for r in rows]))
    assert np.allclose(scores, want, atol=1e-5) and list(scores) == sorted(scores, reverse=True)
    if keep == 1.0:  # every first-stage candidate re-scored: the second model's ranking finds the truth
        top = {(src.index(r[1]), tgt.index(r[2])) for r in rows[:10]}
        assert top == truth
    again = mine(sp, tp, out, cfg, tmp_path / "wd", encoder=first, rescore_encoder=Counting(dim=256), show_progress=False)
    assert again["timings"]["rescore"]["cached"] and _read(out) == rows


def test_keep_outside_zero_one_is_refused():
    with pytest.raises(ValueError, match="keep must be in"):
        MineConfig("en", "en", rescore="bundled", keep=1.5).validate()
