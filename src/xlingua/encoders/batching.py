"""Token-budget batching for transformer encoders.

`Encoder.encode` sorts by characters and cuts batches of a fixed number of sentences. Characters
are a poor proxy for tokens across scripts (a Chinese character is often a token, an English
word of six letters often one too), and small batches waste time on per-call overhead. Here the
texts are tokenized first, sorted by token count, and cut into batches holding at most
`token_budget` padded tokens. A caller's `batch_size` (a sentence count, the convention of
`Encoder.encode`, usually 64 from habit) is ignored: capping batches at 64 short sentences
made bundled:bf16 markedly slower in our measurements.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np


TOKEN_BUDGET = 8192


def token_batches(lengths: Sequence[int], window: int, budget: int) -> list[list[int]]:
    """Indices grouped into batches, shortest first. A text of n tokens runs as ceil(n/window)
    windows of at most `window` tokens; a batch's cost is its windows x its longest window."""
    order = sorted(range(len(lengths)), key=lambda i: lengths[i])
    batches, current, rows, longest = [], [], 0, 0
    for i in order:
        n_rows = max(1, -(-lengths[i] // window))
        size = min(lengths[i], window)
        new_rows, new_longest = rows + n_rows, max(longest, size)
        if current and new_rows * new_longest > budget:
            batches.append(current)
            current, new_rows, new_longest = [], n_rows, size
        current.append(i)
        rows, longest = new_rows, new_longest
    if current:
        batches.append(current)
    return batches


class TokenBudgetMixin:
    """`encode` by token budget, for subclasses of TransformerEncoder (they have `tok`,
    `window` and `_encode_batch`)."""

    token_budget: int = TOKEN_BUDGET

    def encode(self, texts, lang: str | None = None, batch_size: int | None = None,
               show_progress: bool = False) -> np.ndarray:
        texts = list(texts)
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        specials = self.tok.num_special
        lengths = [len(ids) + specials for ids in self.tok.content_ids(texts)]
        batches = token_batches(lengths, self.window + specials, self.token_budget)
        return self._encode_batches(texts, batches, lang, show_progress)


def padding_batches(lengths: Sequence[int], call_cost: int) -> list[list[int]]:
    """Indices cut into length-sorted batches that minimise padded tokens plus `call_cost`
    (a model call's fixed cost, in tokens) per batch: optimal over cuts of the sorted order,
    by dynamic programming over the distinct lengths (equal lengths never gain from a cut).
    For a few requests of mixed sizes, where one batch would pad every text to the longest."""
    order = sorted(range(len(lengths)), key=lambda i: lengths[i])
    values = sorted(set(lengths))
    if len(values) <= 1:
        return [order] if order else []
    count = {v: 0 for v in values}
    for n in lengths:
        count[n] += 1
    best = [0] + [None] * len(values)  # best[b]: cost of the first b distinct lengths
    start = [0] * (len(values) + 1)
    for b in range(1, len(values) + 1):
        rows = 0
        for a in range(b, 0, -1):  # last batch holds distinct lengths a-1 .. b-1
            rows += count[values[a - 1]]
            cost = best[a - 1] + rows * values[b - 1] + call_cost
            if best[b] is None or cost < best[b]:
                best[b], start[b] = cost, a - 1
    sizes, b = [], len(values)
    while b:
        sizes.append(sum(count[v] for v in values[start[b] : b]))
        b = start[b]
    batches, pos = [], 0
    for size in reversed(sizes):
        batches.append(order[pos : pos + size])
        pos += size
    return batches
