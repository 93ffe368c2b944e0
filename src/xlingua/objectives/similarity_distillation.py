"""Distillation of the teacher's in-batch similarities: the student's distribution over a batch's
English sentences for each translation should match the teacher's, so that near neighbours stay
as near as the teacher puts them, which a pull of each sentence to its own target alone does not
teach.

Relational distillation (Park et al. 2019, "Relational Knowledge Distillation", CVPR) with the
softened-softmax match of Hinton et al. 2015 ("Distilling the Knowledge in a Neural Network"), as
in-batch logit distillation for sentence embeddings (Mao & Nakagawa 2023, "LEALLA", EACL). Here the
teacher's row is its English vectors against themselves, since only the English side's teacher
vectors are computed:

    P_ij = softmax_j(scale * cos(T(s_i), T(s_j)));  Q_ij = softmax_j(scale * cos(M(t_i), E_j))
    L = (1 / n) sum_i KL(P_i || Q_i)

T the frozen teacher, M the student, t_i the translation of English s_i, E_j the English side
ranked against (the student's or the teacher's vector of s_j).
"""
from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn


class SimilarityDistillationLoss(nn.Module):
    def __init__(self, scale: float = 20.0):
        super().__init__()
        self.scale = scale

    def forward(self, translation: torch.Tensor, english: torch.Tensor, teacher_english: torch.Tensor) -> torch.Tensor:
        """translation: M(t) (n, d); english: E (n, d); teacher_english: T(s) (n, d)."""
        t = F.normalize(teacher_english.float(), dim=-1)
        target = F.softmax(self.scale * t @ t.T, dim=-1)
        x, e = F.normalize(translation.float(), dim=-1), F.normalize(english.float(), dim=-1)
        return F.kl_div(F.log_softmax(self.scale * x @ e.T, dim=-1), target, reduction="batchmean")
