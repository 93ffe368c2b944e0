"""Translation ranking loss: a dual encoder with shared weights ranks each sentence's
translation above the other targets in the batch, in both directions, with an optional
additive margin and optional hard negatives.

Yang et al. 2019, "Improving Multilingual Sentence Embedding using Bi-directional Dual Encoder
with Additive Margin Softmax" (IJCAI), used for mUSE (Yang et al. 2020, "Multilingual Universal
Sentence Encoder for Semantic Retrieval", ACL demo) and LaBSE (Feng et al. 2022, ACL).

    phi(x, y) = scale * cos(x, y);   the gold pair gets phi - scale * margin
    L = CE(x -> {y_1..y_N, hard negatives}) (+ CE(y -> {x_1..x_N}) when bidirectional) / 2
"""
from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from xlingua.training.distributed import gather


class TranslationRankingLoss(nn.Module):
    def __init__(self, scale: float = 20.0, margin: float = 0.0, bidirectional: bool = True):
        super().__init__()
        self.scale = scale
        self.margin = margin
        self.bidirectional = bidirectional

    def forward(self, anchors: torch.Tensor, positives: torch.Tensor, negatives: torch.Tensor | None = None) -> torch.Tensor:
        """anchors, positives: (n, d); negatives: (n * k, d) hard negatives or None."""
        a, p, neg = gather(anchors, positives, negatives)
        a, p = F.normalize(a, dim=-1), F.normalize(p, dim=-1)
        n = a.shape[0]
        candidates = p if neg is None else torch.cat([p, F.normalize(neg, dim=-1)])
        target = torch.arange(n, device=a.device)
        diag = torch.zeros(n, candidates.shape[0], device=a.device)
        diag[target, target] = self.margin
        forward = F.cross_entropy(self.scale * (a @ candidates.T - diag), target)
        if not self.bidirectional:
            return forward
        backward = F.cross_entropy(self.scale * (p @ a.T - diag[:, :n]), target)
        return (forward + backward) / 2
