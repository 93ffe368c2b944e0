"""Response / next-sentence ranking with a task-specific head on the response side: mUSE's
conversational-response and quick-thought tasks (Yang et al. 2020, "Multilingual Universal
Sentence Encoder for Semantic Retrieval"; Henderson et al. 2017, "Efficient Natural Language
Response Suggestion for Smart Reply"; Logeswaran & Lee 2018, "An efficient framework for
learning sentence representations").

The shared encoder embeds context c and response r; a small feed-forward head g (one per task)
adapts the response side only, and each context ranks its own response above the other
responses in the batch:
    L = CE(scale * cos(c_i, g(r_j)), j = i)
"""
from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from xlingua.objectives.base import TrainingTask, register
from xlingua.objectives.distributed import gather


class ResponseRankingLoss(nn.Module):
    def __init__(self, dim: int, hidden: int = 256, scale: float = 20.0):
        super().__init__()
        self.scale = scale
        # Residual head with a zero last layer: starts as the identity, so training begins from the encoder's space.
        self.head = nn.Sequential(nn.Linear(dim, hidden), nn.Tanh(), nn.Linear(hidden, dim))
        nn.init.zeros_(self.head[2].weight)
        nn.init.zeros_(self.head[2].bias)

    def response(self, r: torch.Tensor) -> torch.Tensor:
        return r + self.head(r)

    def forward(self, contexts: torch.Tensor, responses: torch.Tensor) -> torch.Tensor:
        c, r = gather(contexts, responses)
        c = F.normalize(c, dim=-1)
        r = F.normalize(self.response(r), dim=-1)
        target = torch.arange(c.shape[0], device=c.device)
        return F.cross_entropy(self.scale * c @ r.T, target)


@register("response_ranking")
class ResponseRankingTask(TrainingTask):
    """Examples (context, response). Options: hidden, scale."""

    def __init__(self, config, examples, dim):
        super().__init__(config, examples, ResponseRankingLoss(dim, **config.options))

    def loss(self, model, batch, indices=None):
        c = model([e[0] for e in batch])["embedding"]
        r = model([e[1] for e in batch])["embedding"]
        return self.objective(c, r)
