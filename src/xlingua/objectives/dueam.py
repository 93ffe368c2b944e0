"""DuEAM learner loss (Goswami et al. 2021, "Cross-lingual Sentence Embedding using
Multi-Task Learning", EMNLP: the dual encoder with anchor-learner model).

A frozen copy of the starting model (the anchor) scores each pair by the Word Mover's Distance
d_wmd(s, t) between its contextual token embeddings (xlingua.similarity.wmd). The learner's
sentence embeddings s', t' are pulled so that their Euclidean similarity matches the anchor's,
with a small reward for cosine agreement:
    L = mean_i |exp(-||s'_i - t'_i||) - exp(-d_wmd(s_i, t_i))| - lambda * mean_i cos(s'_i, t'_i)
lambda = 0.003 by default. No labels are used.
"""
from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from xlingua.training.distributed import gather


class DuEAMLoss(nn.Module):
    def __init__(self, lam: float = 0.003):
        super().__init__()
        self.lam = lam

    def forward(self, s: torch.Tensor, t: torch.Tensor, wmd: torch.Tensor) -> torch.Tensor:
        """s, t: learner embeddings (n, d); wmd: the anchor's WMD for each pair (n,)."""
        s, t = gather(s, t)
        wmd = gather(wmd)
        euclid = (s - t).norm(dim=-1)
        fit = (torch.exp(-euclid) - torch.exp(-wmd.to(s.dtype))).abs().mean()
        return fit - self.lam * F.cosine_similarity(s, t, dim=-1).mean()
