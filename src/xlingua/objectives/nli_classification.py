"""NLI classification through a sentence-pair feature vector, as mUSE trains on SNLI
(Yang et al. 2020, "Multilingual Universal Sentence Encoder for Semantic Retrieval", sec. 3;
the features follow Conneau et al. 2017, "Supervised Learning of Universal Sentence
Representations from Natural Language Inference Data", InferSent):

    h = FF([u; v; |u - v|; u * v]),  L = CE(softmax(h), label in {entailment, neutral, contradiction})
"""
from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from xlingua.objectives.base import TrainingTask, register
from xlingua.objectives.distributed import gather

NLI_LABELS = ("entailment", "neutral", "contradiction")


class NLIClassificationLoss(nn.Module):
    def __init__(self, dim: int, hidden: int = 256, num_labels: int = 3):
        super().__init__()
        layers = [nn.Linear(4 * dim, hidden), nn.ReLU(), nn.Linear(hidden, num_labels)] if hidden else [nn.Linear(4 * dim, num_labels)]
        self.head = nn.Sequential(*layers)

    def logits(self, u: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        return self.head(torch.cat([u, v, (u - v).abs(), u * v], dim=-1))

    def forward(self, u: torch.Tensor, v: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
        u, v = gather(u, v)
        return F.cross_entropy(self.logits(u, v), gather(labels))


@register("nli")
class NLITask(TrainingTask):
    """Examples (premise, hypothesis, label index). Options: hidden, num_labels."""

    def __init__(self, config, examples, dim):
        super().__init__(config, examples, NLIClassificationLoss(dim, **config.options))

    def loss(self, model, batch, indices=None):
        u = model([e[0] for e in batch])["embedding"]
        v = model([e[1] for e in batch])["embedding"]
        return self.objective(u, v, torch.tensor([e[2] for e in batch]))
