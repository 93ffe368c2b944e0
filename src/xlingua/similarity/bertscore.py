"""BERTScore between sentences from their token embeddings (Zhang et al. 2020, "BERTScore:
Evaluating Text Generation with BERT"), the similarity OneAligner trains and retrieves with.

Each token is greedily matched to its most similar token of the other sentence:
    R = mean_{x in X} max_{y in Y} cos(x, y),  P = mean_{y in Y} max_{x in X} cos(x, y),
    F = 2 P R / (P + R),  with P and R floored at 1e-6 so F stays in (0, 1]
No idf weighting. Works on torch tensors (differentiable, for training) and, through
`bertscore_full`, `bertscore_paired` and `bertscore_retrieve`, on numpy token embeddings.
"""
from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F


def bertscore_matrix(x: torch.Tensor, x_mask: torch.Tensor, y: torch.Tensor, y_mask: torch.Tensor) -> torch.Tensor:
    """(n, m) BERTScore F between n sentences x (n, Lx, d) and m sentences y (m, Ly, d);
    masks are (n, Lx) / (m, Ly) with 1 for real tokens."""
    x = F.normalize(x.float(), dim=-1)
    y = F.normalize(y.float(), dim=-1)
    xm = x_mask.to(x.dtype)
    ym = y_mask.to(y.dtype)
    if (xm.sum(1) == 0).any() or (ym.sum(1) == 0).any():
        raise ValueError("every sentence needs at least one token in its mask")
    sim = torch.einsum("ald,bmd->ablm", x, y)  # (n, m, Lx, Ly)
    # Padding never wins a max: push it below any cosine.
    sim = sim.masked_fill(ym[None, :, None, :] == 0, -2.0)
    recall = (sim.max(dim=3).values * xm[:, None, :]).sum(2) / xm.sum(1)[:, None]
    sim = sim.masked_fill(xm[:, None, :, None] == 0, -2.0)
    precision = (sim.max(dim=2).values * ym[None, :, :]).sum(2) / ym.sum(1)[None, :]
    # Greedy-match cosines can be negative; 2PR/(P+R) then blows up as P+R -> 0 (a training
    # run exploited exactly that), so P and R are floored at a small positive value: F in (0, 1].
    precision, recall = precision.clamp_min(1e-6), recall.clamp_min(1e-6)
    return 2 * precision * recall / (precision + recall)


def bertscore_full(queries: list[np.ndarray], candidates: list[np.ndarray],
                   max_elements: int = 1 << 26) -> np.ndarray:
    """(n_queries, n_candidates) BERTScore F from per-sentence token embedding arrays (L_i, d).

    All tokens are laid end to end, unpadded: one token-by-token cosine block for a run of
    queries against every candidate token (at most `max_elements` cosines, 256 MB of float32 by
    default), then each token's best match within every sentence of the other side by segmented
    maxima. Padding every sentence to the longest of its block wasted most of the work on
    Tatoeba, where a few long sentences sit among short ones."""
    if not candidates:
        raise ValueError("no sentences given")
    if not queries:
        return np.zeros((0, len(candidates)), np.float32)
    y, y_starts, y_len = _flat(candidates)
    per_token = len(y)
    out = np.empty((len(queries), len(candidates)), np.float32)
    start = 0
    with torch.no_grad():
        while start < len(queries):
            stop, tokens = start + 1, len(queries[start])
            while stop < len(queries) and (tokens + len(queries[stop])) * per_token <= max_elements:
                tokens += len(queries[stop])
                stop += 1
            x, x_starts, x_len = _flat(queries[start:stop])
            sim = (torch.from_numpy(x) @ torch.from_numpy(y).T).numpy()  # (x tokens, y tokens)
            recall = np.add.reduceat(np.maximum.reduceat(sim, y_starts, axis=1), x_starts, axis=0) / x_len[:, None]
            precision = np.add.reduceat(np.maximum.reduceat(sim, x_starts, axis=0), y_starts, axis=1) / y_len[None, :]
            # floored as in bertscore_matrix, so F stays in (0, 1]
            precision, recall = np.maximum(precision, 1e-6), np.maximum(recall, 1e-6)
            out[start:stop] = 2 * precision * recall / (precision + recall)
            start = stop
    return out


def _flat(arrays: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Unit-length token rows of all sentences end to end, each sentence's first row, its length."""
    lengths = np.array([len(a) for a in arrays])
    if (lengths == 0).any():
        raise ValueError("every sentence needs at least one token in its mask")
    flat = np.concatenate([np.asarray(a, dtype=np.float32) for a in arrays])
    flat = flat / np.maximum(np.linalg.norm(flat, axis=1, keepdims=True), 1e-12)
    return np.ascontiguousarray(flat), np.concatenate([[0], np.cumsum(lengths)[:-1]]), lengths


def bertscore_paired(xs: list[np.ndarray], ys: list[np.ndarray], chunk: int = 64) -> np.ndarray:
    """(n,) BERTScore F of each aligned pair (xs[i], ys[i]) of token embedding arrays."""
    if len(xs) != len(ys):
        raise ValueError(f"bertscore_paired needs as many left as right sentences, got {len(xs)} and {len(ys)}")
    out = []
    with torch.no_grad():
        for start in range(0, len(xs), chunk):
            x, x_mask = _pad(xs[start : start + chunk])
            y, y_mask = _pad(ys[start : start + chunk])
            # each pair on its own: the diagonal of the chunk's (chunk, chunk) matrix, per row
            out.extend(float(bertscore_matrix(x[i : i + 1], x_mask[i : i + 1], y[i : i + 1], y_mask[i : i + 1]))
                       for i in range(len(x)))
    return np.asarray(out, dtype=np.float32)


def bertscore_retrieve(
    queries: list[np.ndarray],
    candidates: list[np.ndarray],
    k: int = 1,
    inbatch_alpha: float | None = None,
    max_elements: int = 1 << 26,
) -> tuple[np.ndarray, np.ndarray]:
    """Top-k candidates by BERTScore F for each query, from cached per-sentence token
    embedding arrays (L_i, d). Returns (scores, indices), both (n_queries, k).
    With `inbatch_alpha`, scores are in-batch normalized over the whole query x candidate
    matrix first (OneAligner at inference; the global-mean term does not change rankings)."""
    from xlingua.similarity.inbatch import inbatch_normalize

    full = bertscore_full(queries, candidates, max_elements)
    if inbatch_alpha is not None:
        full = inbatch_normalize(full, alpha=inbatch_alpha, global_term=False)
    k = min(k, full.shape[1])
    idx = np.argsort(-full, axis=1, kind="stable")[:, :k]
    return np.take_along_axis(full, idx, axis=1), idx


def _pad(arrays: list[np.ndarray]) -> tuple[torch.Tensor, torch.Tensor]:
    if not arrays:
        raise ValueError("no sentences given")
    longest = max(len(a) for a in arrays)
    dim = arrays[0].shape[1]
    out = torch.zeros(len(arrays), longest, dim)
    mask = torch.zeros(len(arrays), longest)
    for i, a in enumerate(arrays):
        out[i, : len(a)] = torch.as_tensor(np.asarray(a, dtype=np.float32))
        mask[i, : len(a)] = 1
    return out, mask
