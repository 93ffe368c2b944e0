"""LASER's training loss (Artetxe & Schwenk 2019, "Massively Multilingual Sentence Embeddings for
Zero-Shot Cross-Lingual Transfer and Beyond", TACL): the encoder's sentence vector is the only
thing a decoder without attention sees of the source, and the decoder is trained to translate it
into English or a second target language; the loss is the cross-entropy of the target pieces,
padding left out.

    L = - 1/N sum_(j, i) log p(y_(j,i) | y_(j,<i), encoder(x_j), target language)

N the number of target pieces in the batch (encoders.laser_model.LaserModel gives the logits)."""
from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from xlingua.encoders.laser_vocab import PAD


class LaserTranslationLoss(nn.Module):
    def forward(self, logits: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        """logits (n, L, vocab) of the decoder; target (n, L) piece ids, PAD where there are none."""
        return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), target.reshape(-1), ignore_index=PAD)
