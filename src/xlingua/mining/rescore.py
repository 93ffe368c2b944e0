"""Two-stage mining: a fast first model (e.g. the static encoder `static-small`) scores every
pair by margin and proposes its best candidates; a stronger model (e.g. `bundled`) embeds only
the sentences of the `keep` x (source sentences) best candidates and scores them by cosine.
The first model's margin already discounts hubs, so the second needs no neighbourhoods; the
cost of the strong model falls from both whole corpora to the kept candidates (on BUCC zh-en,
keep 0.4 re-embeds 31 % of the sentences and matches one-stage F1: docs/results.md, Mining)."""
from __future__ import annotations

import dataclasses
import math
from pathlib import Path

import numpy as np

from xlingua.io import save_npz
from xlingua.mining.corpus import ShardedCorpus, Shards
from xlingua.mining.score import Best
from xlingua.mining.step import Output, Step, upstream
from xlingua.similarity.cosine import paired_cosine
from xlingua.similarity.select import select_pairs


@dataclasses.dataclass(frozen=True)
class RescoreConfig:
    score: Best = upstream()  # the first stage
    src: Shards = upstream(key=False)  # the sentences the first stage scored: in its key
    tgt: Shards = upstream(key=False)
    mode: str = "max"
    keep: float = 0.4
    encoder: str = ""  # the second model's fingerprint


@dataclasses.dataclass(frozen=True)
class Rescored(Output):
    candidates: int
    kept: int
    embedded_src: int
    embedded_tgt: int
    first_pass_min_score: float | None

    def load(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(score, src row, tgt row) of the kept candidates by the second model, best first."""
        with np.load(Path(self.dir) / "pairs.npz") as z:
            return z["score"], z["src"], z["tgt"]


class RescoreStep(Step):
    """One item: pairs.npz with the second model's scores of the first's best candidates."""

    name = "rescore"
    output_type = Rescored

    def __init__(self, config: RescoreConfig, workdir, encoder):
        super().__init__(config, workdir)
        self.encoder = encoder

    def old_key_fields(self) -> dict:
        return {"src_lang": self.config.src.lang, "tgt_lang": self.config.tgt.lang}

    def run(self, item, progress: bool) -> None:
        cfg = self.config
        s, a, b = select_pairs(cfg.score.load(), cfg.mode)
        n = min(len(s), math.ceil(cfg.keep * cfg.score.src))
        a, b = a[:n], b[:n]
        ua, ia = np.unique(a, return_inverse=True)
        ub, ib = np.unique(b, return_inverse=True)
        x = self.encoder.encode(ShardedCorpus(cfg.src).lookup(ua, with_ids=False)[0], cfg.src.lang,
                                show_progress=progress)
        y = self.encoder.encode(ShardedCorpus(cfg.tgt).lookup(ub, with_ids=False)[0], cfg.tgt.lang,
                                show_progress=progress)
        score = paired_cosine(x[ia], y[ib]).astype(np.float32) if n else np.zeros(0, np.float32)
        order = np.argsort(-score, kind="stable")
        save_npz(self.dir / "pairs.npz", score=score[order], src=a[order], tgt=b[order],
                 candidates=len(s), first_pass_min_score=s[n - 1] if n else np.nan)

    def summarize(self) -> Rescored:
        with np.load(self.dir / "pairs.npz") as z:
            low = float(z["first_pass_min_score"])
            return self.output({"candidates": int(z["candidates"]), "kept": len(z["score"]),
                                "embedded_src": len(np.unique(z["src"])),
                                "embedded_tgt": len(np.unique(z["tgt"])),
                                "first_pass_min_score": None if np.isnan(low) else low})
