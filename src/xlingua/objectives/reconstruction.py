"""Reconstruction loss of meaning embeddings (Tiyajamorn, Kajiwara, Arase & Onizuka 2021, "Language-agnostic
Representation from Multilingual Sentence Encoders for Cross-lingual Similarity Estimation", EMNLP; eq. 1):
L_R = ||e - (MLP_M(e) + MLP_L(e))||^2 / d, averaged over the batch. It keeps the two parts
together carrying everything the frozen encoder knew."""
from __future__ import annotations

import torch
from torch import nn


class ReconstructionLoss(nn.Module):
    def forward(self, e: torch.Tensor, meaning: torch.Tensor, language: torch.Tensor) -> torch.Tensor:
        return ((e - (meaning + language)) ** 2).sum(dim=-1).div(e.shape[-1]).mean()
