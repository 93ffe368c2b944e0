"""Language loss (Tiyajamorn, Kajiwara, Arase & Onizuka 2021, "Language-agnostic
Representation from Multilingual Sentence Encoders for Cross-lingual Similarity Estimation", EMNLP; eq. 3):
L_L = (2 - cos(s_L, s'_L) - cos(t_L, t'_L)) + CE(MLP_I(s_L), lang_s) + CE(MLP_I(t_L), lang_t),
averaged over the batch. Language vectors of two sentences of one language are pulled
together, and the language must be identifiable from them."""
from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn


class LanguageLoss(nn.Module):
    def forward(self, s: torch.Tensor, t: torch.Tensor, s_same: torch.Tensor, t_same: torch.Tensor,
                s_logits: torch.Tensor, t_logits: torch.Tensor,
                s_lang: torch.Tensor, t_lang: torch.Tensor) -> torch.Tensor:
        pull = 2 - F.cosine_similarity(s, s_same, dim=-1) - F.cosine_similarity(t, t_same, dim=-1)
        ident = F.cross_entropy(s_logits, s_lang) + F.cross_entropy(t_logits, t_lang)
        return pull.mean() + ident
