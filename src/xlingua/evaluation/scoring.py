"""Unsupervised scores of aligned sentence pairs (s1[i], s2[i]) with an encoder, shared by the
tasks that correlate a score with human judgement (`qe`, `sts`):

- `cosine`: cosine of the two sentence vectors.
- `inbatch`: OneAligner's in-batch normalization (Niu et al. 2022) of the cosine matrix of all
  s1 against all s2 of the set, the diagonal kept: a pair's score minus alpha times the mean
  score of each side against the whole set, so "popular" sentences stop scoring high with
  everything. Each score depends on the rest of the set (transductive, no labels).
- `bertscore`: BERTScore F (Zhang et al. 2020) over the encoder's content token embeddings.
- `bertscore-inbatch`: the same normalization over the BERTScore F matrix (OneAligner's own
  similarity: in-batch normalized BERTScore).
"""
from __future__ import annotations

import numpy as np

from xlingua.evaluation.base import EvalContext
from xlingua.similarity.bertscore import bertscore_full, bertscore_paired
from xlingua.similarity.cosine import cosine_matrix, paired_cosine
from xlingua.similarity.inbatch import inbatch_normalize

SCORERS = ("cosine", "inbatch", "bertscore", "bertscore-inbatch")


def token_embeddings(ctx: EvalContext, texts: list[str], layer: int | None = None) -> list[np.ndarray]:
    """Content token states of each text (no special or prefix tokens) from the context's
    encoder, or from the encoder a cache wraps."""
    enc = getattr(ctx.encoder, "inner", ctx.encoder)
    if not hasattr(enc, "encode_tokens"):
        raise ValueError(f"{enc.name} gives no token embeddings, so it has no BERTScore; "
                         f"use a transformer encoder (e.g. bundled) or scorer cosine/inbatch")
    return enc.encode_tokens(list(texts), layer=layer, content_only=True)


def pair_scores(ctx: EvalContext, s1: list[str], s2: list[str], lang1: str | None = None,
                lang2: str | None = None, scorer: str = "cosine", alpha: float = 0.5,
                layer: int | None = None) -> np.ndarray:
    """(n,) scores of the pairs (s1[i], s2[i]) by `scorer` (one of SCORERS)."""
    if scorer not in SCORERS:
        raise ValueError(f"unknown scorer {scorer!r}; choose from {SCORERS}")
    if scorer in ("cosine", "inbatch"):
        a, b = ctx.embed(list(s1), lang1), ctx.embed(list(s2), lang2)
        if scorer == "cosine":
            return paired_cosine(a, b)
        return np.diag(inbatch_normalize(cosine_matrix(a, b), alpha=alpha, global_term=False)).copy()
    x, y = token_embeddings(ctx, s1, layer), token_embeddings(ctx, s2, layer)
    if scorer == "bertscore":
        return bertscore_paired(x, y)
    return np.diag(inbatch_normalize(bertscore_full(x, y), alpha=alpha, global_term=False)).copy()


def layer_option(value) -> int | None:
    """A task's `layer` option: "" or None for the encoder's own layer, else an int."""
    return None if value in ("", None) else int(value)
