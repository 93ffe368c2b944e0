"""Two-stage mining: a fast first model (e.g. the static encoder `static-small`) scores every
pair by margin and proposes its best candidates; a stronger model (e.g. `bundled`) embeds only
the sentences of the `keep` x (source sentences) best candidates and scores them by cosine.
The first model's margin already discounts hubs, so the second needs no neighbourhoods; the
cost of the strong model falls from both whole corpora to the kept candidates (on BUCC zh-en,
keep 0.4 re-embeds 31 % of the sentences and matches one-stage F1: docs/results.md, Mining)."""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from xlingua.io import save_npz
from xlingua.mining.cache import Step
from xlingua.similarity.cosine import paired_cosine
from xlingua.similarity.select import select_pairs


@dataclass(frozen=True)
class RescoreConfig:
    score_key: str  # the first stage's ScoreStep
    mode: str
    keep: float
    encoder: str  # the second model's fingerprint
    src_lang: str
    tgt_lang: str


class RescoreStep(Step):
    """(score, src row, tgt row) of the kept candidates by the second model, best first."""

    name = "rescore"

    def run(self, best: dict, src_corpus, tgt_corpus, encoder, show_progress: bool = False) -> dict:
        if self.done():
            return self.meta()
        cfg = self.config
        s, a, b = select_pairs(best, cfg.mode)
        n = min(len(s), math.ceil(cfg.keep * len(best["fwd_score"])))
        a, b = a[:n], b[:n]
        ua, ia = np.unique(a, return_inverse=True)
        ub, ib = np.unique(b, return_inverse=True)
        x = encoder.encode(src_corpus.lookup(ua, with_ids=False)[0], cfg.src_lang, show_progress=show_progress)
        y = encoder.encode(tgt_corpus.lookup(ub, with_ids=False)[0], cfg.tgt_lang, show_progress=show_progress)
        score = paired_cosine(x[ia], y[ib]).astype(np.float32) if n else np.zeros(0, np.float32)
        order = np.argsort(-score, kind="stable")
        self.dir.mkdir(parents=True, exist_ok=True)
        save_npz(self.dir / "pairs.npz", score=score[order], src=a[order], tgt=b[order])
        return self.finish({"candidates": int(len(s)), "kept": int(n), "embedded_src": int(len(ua)),
                            "embedded_tgt": int(len(ub)), "first_pass_min_score": float(s[n - 1]) if n else None})

    def load(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        with np.load(self.dir / "pairs.npz") as z:
            return z["score"], z["src"], z["tgt"]
