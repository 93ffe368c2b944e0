"""How texts are cut into model calls: the one rule behind every encoder's `encode` and the
server's worker.

Texts are sorted by token count and cut into runs of the sorted order. A batch costs its padded
tokens (its rows x its longest row) plus `call_cost` (a model call's fixed cost, in tokens); the
cuts minimise the total, with no batch over `budget` padded tokens (a text that alone exceeds it
runs alone). Cutting a fixed number of sentences instead pads a batch of mixed lengths to its
longest, and characters are a poor proxy for tokens across scripts.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

#: most padded tokens in one model call (bounds memory)
TOKEN_BUDGET = 8192
#: a model call's fixed cost in padded tokens (call overhead, small matrix products on CPU)
CALL_COST = 64


@dataclass
class Plan:
    batches: list[list[int]]  # indices into the input, shortest texts first
    tokens: int  # real tokens
    padded: int  # tokens the model runs: each batch's rows x its longest row

    @property
    def padding_fraction(self) -> float:
        """The share of the tokens run that are padding."""
        return 1.0 - self.tokens / self.padded if self.padded else 0.0


def plan_batches(lengths: Sequence[int], budget: int = TOKEN_BUDGET, window: int | None = None,
                 call_cost: int = CALL_COST, max_texts: int | None = None) -> Plan:
    """Cut texts of `lengths` tokens into batches, optimally for the cost above (dynamic
    programming over cut points of the sorted order). A text of n > `window` tokens runs as
    ceil(n / window) rows of `window`; `max_texts` caps the texts in a batch."""
    order = sorted(range(len(lengths)), key=lambda i: lengths[i])
    n = len(order)
    if n == 0:
        return Plan([], 0, 0)
    length = np.array([lengths[i] for i in order], dtype=np.int64)
    if window:
        rows, size = np.maximum(1, -(-length // window)), np.minimum(length, window)
    else:
        rows, size = np.ones(n, dtype=np.int64), length
    before = np.concatenate([[0], np.cumsum(rows)])  # rows of the first k sorted texts
    best = np.zeros(n + 1, dtype=np.int64)  # best[k]: cost of the first k sorted texts
    start = np.zeros(n + 1, dtype=np.int64)
    for b in range(1, n + 1):  # the last batch holds sorted texts a .. b-1, padded to size[b-1]
        s = int(size[b - 1])
        lo = int(np.searchsorted(before, before[b] - budget // s)) if s else 0
        lo = min(lo, b - 1)
        if max_texts:
            lo = max(lo, b - max_texts)
        cost = best[lo:b] + (before[b] - before[lo:b]) * s
        k = int(np.argmin(cost))  # the first minimum: the longest batch on ties
        best[b], start[b] = cost[k] + call_cost, lo + k
    cuts, b = [], n
    while b:
        cuts.append((int(start[b]), b))
        b = int(start[b])
    cuts.reverse()
    padded = sum(int(before[b] - before[a]) * int(size[b - 1]) for a, b in cuts)
    return Plan([order[a:b] for a, b in cuts], int(length.sum()), padded)
