"""OneAligner loss (Niu et al. 2022, "OneAligner: Zero-shot Cross-lingual Transfer with One
Rich-Resource Language Pair for Low-Resource Sentence Retrieval", Findings of ACL).

Similarity f_ij = BERTScore F between the token embeddings of source i and target j
(xlingua.similarity.bertscore), in-batch normalized (xlingua.similarity.inbatch):
    s_ij = f_ij - alpha (mean_k f_ik + mean_k f_kj) + (2 alpha - 1) mean_kl f_kl
The contrastive loss uses *global* negatives: each gold pair competes with all N^2 - N
mismatched pairs of the batch, not only the N - 1 of its own row:
    L = mean_i -log( e^{t s_ii} / (e^{t s_ii} + sum_{k != l} e^{t s_kl}) )
t = `scale` (20, an inverse temperature) multiplies the scores. It was chosen on dev data
(benchmarks/onealigner_dev.py): with 5, the softmax over the N^2 - N negatives stays so flat
that de-en training lowered dev retrieval, by BERTScore as well as by pooled cosine; with 20 it
rose. (`temperature` is the task-level setting for drawing languages, not this.)

Two options exist to test the paper's ablations: similarity="cosine" (cosine of mean-pooled
token embeddings instead of BERTScore, normalized the same way) and negatives="row" (each gold
pair against the N - 1 pairs of its own row, a plain softmax over the row).
"""
from __future__ import annotations

import torch
from torch import nn

from xlingua.similarity.bertscore import bertscore_matrix
from xlingua.similarity.inbatch import inbatch_normalize
from xlingua.objectives.base import TrainingTask, register
from xlingua.objectives.distributed import gather_padded


def pooled_cosine_matrix(x: torch.Tensor, x_mask: torch.Tensor, y: torch.Tensor,
                         y_mask: torch.Tensor) -> torch.Tensor:
    """(n, m) cosine of the mean-pooled token embeddings."""
    def pooled(t, mask):
        m = mask.unsqueeze(-1).to(t.dtype)
        return nn.functional.normalize((t * m).sum(1) / m.sum(1).clamp(min=1), dim=-1)
    return pooled(x, x_mask) @ pooled(y, y_mask).T


SIMILARITIES = {"bertscore": bertscore_matrix, "cosine": pooled_cosine_matrix}
NEGATIVES = ("global", "row")


class OneAlignerLoss(nn.Module):
    def __init__(self, alpha: float = 0.5, scale: float = 20.0, similarity: str = "bertscore",
                 negatives: str = "global"):
        super().__init__()
        if similarity not in SIMILARITIES:
            raise ValueError(f"onealigner: similarity must be one of {sorted(SIMILARITIES)}, got {similarity!r}")
        if negatives not in NEGATIVES:
            raise ValueError(f"onealigner: negatives must be one of {list(NEGATIVES)}, got {negatives!r}")
        self.alpha = alpha
        self.scale = scale
        self.similarity = SIMILARITIES[similarity]
        self.negatives = negatives

    def scores(self, f: torch.Tensor) -> torch.Tensor:
        return self.scale * inbatch_normalize(f, alpha=self.alpha, global_term=True)

    def loss_from_similarity(self, f: torch.Tensor) -> torch.Tensor:
        """The loss given a square (N, N) similarity matrix with gold pairs on the diagonal."""
        logits = self.scores(f)
        if self.negatives == "row":
            return nn.functional.cross_entropy(logits, torch.arange(logits.shape[0], device=logits.device))
        n = logits.shape[0]
        eye = torch.eye(n, dtype=torch.bool, device=logits.device)
        negatives = torch.logsumexp(logits.masked_fill(eye, float("-inf")).flatten(), dim=0)
        gold = logits.diagonal()
        return (torch.logaddexp(gold, negatives) - gold).mean()

    def forward(self, x: torch.Tensor, x_mask: torch.Tensor, y: torch.Tensor, y_mask: torch.Tensor) -> torch.Tensor:
        """Token embeddings x (n, Lx, d), y (n, Ly, d) with masks; pair i is (x_i, y_i)."""
        x, x_mask, y, y_mask = gather_padded(x, x_mask, y, y_mask)
        return self.loss_from_similarity(self.similarity(x, x_mask, y, y_mask))


@register("onealigner")
class OneAlignerTask(TrainingTask):
    """Examples (source, target). Options: alpha, scale, similarity (bertscore | cosine),
    negatives (global | row), layer (hidden_states index of the token embeddings, -1 = last)."""

    def __init__(self, config, examples, dim):
        opts = dict(config.options)
        self.layer = int(opts.pop("layer", -1))
        super().__init__(config, examples, OneAlignerLoss(**opts))

    def loss(self, model, batch, indices=None):
        x = model([e[0] for e in batch], token_layer=self.layer)
        y = model([e[1] for e in batch], token_layer=self.layer)
        return self.objective(x["tokens"], x["token_mask"], y["tokens"], y["token_mask"])
