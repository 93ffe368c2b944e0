"""The training loss of meaning embeddings (Tiyajamorn, Kajiwara, Arase & Onizuka 2021,
"Language-agnostic Representation from Multilingual Sentence Encoders for Cross-lingual
Similarity Estimation", EMNLP; eq. 4): three MLPs split a frozen encoder's vector e into a
meaning part MLP_M(e) and a language part MLP_L(e), MLP_I names the language from the latter.

    L = L_R(s) + L_R(t) + L_M + w_L L_L

(objectives.reconstruction, .meaning, .language) over a translation pair (s, t) and random other
sentences s', t' of their languages. L_M and L_L can be left out (the paper's Table 6)."""
from __future__ import annotations

import torch
from torch import nn

from xlingua.objectives.language import LanguageLoss
from xlingua.objectives.meaning import MeaningLoss
from xlingua.objectives.reconstruction import ReconstructionLoss


class MeaningEmbeddingLoss(nn.Module):
    def __init__(self, model, use_meaning: bool = True, use_language: bool = True,
                 language_weight: float = 1.0, negative_weight: float = 1.0):
        super().__init__()
        self.model = model  # encoders.meaning_mlp.MeaningModel
        self.use_meaning = use_meaning
        self.use_language = use_language
        self.language_weight = language_weight
        self.rec, self.mean, self.lang = ReconstructionLoss(), MeaningLoss(negative_weight), LanguageLoss()

    def forward(self, s, t, s2, t2, s_lang, t_lang) -> dict[str, torch.Tensor]:
        """The terms ("rec", "meaning", "language") and their weighted sum ("loss")."""
        (sm, sl), (tm, tl) = self.model(s), self.model(t)
        parts = {"rec": self.rec(s, sm, sl) + self.rec(t, tm, tl)}
        if self.use_meaning or self.use_language:
            (s2m, s2l), (t2m, t2l) = self.model(s2), self.model(t2)
        if self.use_meaning:
            parts["meaning"] = self.mean(sm, tm, s2m, t2m)
        if self.use_language:
            parts["language"] = self.lang(sl, tl, s2l, t2l, self.model.mlp_i(sl), self.model.mlp_i(tl),
                                          s_lang, t_lang)
        weights = {"language": self.language_weight}
        parts["loss"] = sum(weights.get(k, 1.0) * v for k, v in parts.items())
        return parts
