"""Meaning loss (Tiyajamorn, Kajiwara, Arase & Onizuka 2021, "Language-agnostic
Representation from Multilingual Sentence Encoders for Cross-lingual Similarity Estimation", EMNLP; eq. 2):
L_M = (1 - cos(s_M, t_M)) + max(0, cos(s_M, s'_M)) + max(0, cos(t_M, t'_M)),
averaged over the batch. A translation pair (s, t) gets the same meaning vector; a random other
sentence of the same language (s', t') is pushed to be no more than orthogonal, so the meaning
part cannot just encode the language. `negative_weight` scales the second and third terms (1 in
the paper); a smaller weight leaves more of the base encoder's graded similarity between
non-translations, which STS measures and the hinge flattens to <= 0."""
from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn


class MeaningLoss(nn.Module):
    def __init__(self, negative_weight: float = 1.0):
        super().__init__()
        self.negative_weight = negative_weight

    def forward(self, s: torch.Tensor, t: torch.Tensor, s_neg: torch.Tensor, t_neg: torch.Tensor) -> torch.Tensor:
        pos = 1 - F.cosine_similarity(s, t, dim=-1)
        neg = F.relu(F.cosine_similarity(s, s_neg, dim=-1)) + F.relu(F.cosine_similarity(t, t_neg, dim=-1))
        return (pos + self.negative_weight * neg).mean()
