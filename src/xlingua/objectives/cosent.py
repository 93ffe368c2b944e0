"""CoSENT: a ranking loss on cosine similarities for graded sentence pairs (STS).

Su 2022, "CoSENT: A more efficient sentence vector scheme than Sentence-BERT"
(kexue.fm/archives/8847), as `CoSENTLoss` in sentence-transformers:

    L = log(1 + sum_{(i,j): y_i > y_j} exp(scale * (cos_j - cos_i)))

Every pair whose gold score is higher should get the higher cosine; unlike a regression on the
cosine, only the order counts, so it fits scores of any scale.
"""
from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from xlingua.objectives.base import TrainingTask, register


class CoSENTLoss(nn.Module):
    def __init__(self, scale: float = 20.0):
        super().__init__()
        self.scale = scale

    def forward(self, u: torch.Tensor, v: torch.Tensor, scores: torch.Tensor) -> torch.Tensor:
        """u, v: (n, d) embeddings of the two sides; scores: (n,) gold similarity."""
        cos = F.cosine_similarity(u.float(), v.float(), dim=-1) * self.scale
        diff = cos[None, :] - cos[:, None]           # [i, j] = cos_j - cos_i
        higher = scores[:, None] > scores[None, :]   # y_i > y_j
        diff = diff.masked_fill(~higher, -float("inf"))
        # log(1 + sum exp(diff)) = logsumexp over {0} and the kept differences
        return torch.logsumexp(torch.cat([torch.zeros(1, device=u.device), diff.flatten()]), dim=0)


@register("cosent")
class CoSENTTask(TrainingTask):
    """Graded pairs (s1, s2, score), e.g. stsb_multi_mt; options: scale."""

    def __init__(self, config, examples, dim):
        super().__init__(config, examples, CoSENTLoss(**config.options))

    def loss(self, model, batch, indices=None):
        u = model([e[0] for e in batch])["embedding"]
        v = model([e[1] for e in batch])["embedding"]
        return self.objective(u, v, torch.tensor([float(e[2]) for e in batch]))
