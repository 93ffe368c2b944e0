"""Translation ranking loss: a dual encoder with shared weights ranks each sentence's
translation above the other targets in the batch, in both directions, with an optional
additive margin and optional hard negatives.

Yang et al. 2019, "Improving Multilingual Sentence Embedding using Bi-directional Dual Encoder
with Additive Margin Softmax" (IJCAI), used for mUSE (Yang et al. 2020, "Multilingual Universal
Sentence Encoder for Semantic Retrieval", ACL demo) and LaBSE (Feng et al. 2022, ACL).

    phi(x, y) = scale * cos(x, y);   the gold pair gets phi - scale * margin
    L = CE(x -> {y_1..y_N, hard negatives}) (+ CE(y -> {x_1..x_N}) when bidirectional) / 2
"""
from __future__ import annotations

import json
from pathlib import Path

import torch
import torch.nn.functional as F
from torch import nn

from xlingua.io import write_json
from xlingua.objectives.base import TrainingTask, register
from xlingua.objectives.distributed import gather, rank


class TranslationRankingLoss(nn.Module):
    def __init__(self, scale: float = 20.0, margin: float = 0.0, bidirectional: bool = True):
        super().__init__()
        self.scale = scale
        self.margin = margin
        self.bidirectional = bidirectional

    def forward(self, anchors: torch.Tensor, positives: torch.Tensor, negatives: torch.Tensor | None = None) -> torch.Tensor:
        """anchors, positives: (n, d); negatives: (n * k, d) hard negatives or None."""
        a, p, neg = gather(anchors, positives, negatives)
        a, p = F.normalize(a, dim=-1), F.normalize(p, dim=-1)
        n = a.shape[0]
        candidates = p if neg is None else torch.cat([p, F.normalize(neg, dim=-1)])
        target = torch.arange(n, device=a.device)
        diag = torch.zeros(n, candidates.shape[0], device=a.device)
        diag[target, target] = self.margin
        forward = F.cross_entropy(self.scale * (a @ candidates.T - diag), target)
        if not self.bidirectional:
            return forward
        backward = F.cross_entropy(self.scale * (p @ a.T - diag[:, :n]), target)
        return (forward + backward) / 2


@register("translation_ranking")
class TranslationRankingTask(TrainingTask):
    """Examples (source, target). Options: scale, margin, bidirectional, hard_negatives (k per
    example; mined with the start model, or with `mine_with: MODEL_DIR`)."""

    def __init__(self, config, examples, dim):
        opts = dict(config.options)
        self.k = int(opts.pop("hard_negatives", 0))
        self.mine_with = opts.pop("mine_with", None)
        super().__init__(config, examples, TranslationRankingLoss(**opts))
        self.negatives: list[list[int]] | None = None

    def prepare(self, model, output_dir):
        if not self.k:
            return
        path = Path(output_dir) / f"hard_negatives.{self.name}.json"
        if path.exists():  # a resumed run reuses the negatives of its start
            self.negatives = json.loads(path.read_text())
            return
        miner = model
        if self.mine_with is not None:
            miner = type(model).load(self.mine_with, model.max_seq_length)
            miner.precision = model.precision
        self.negatives = mine_hard_negatives(miner, [e[0] for e in self.examples], [e[1] for e in self.examples], self.k)
        if rank() == 0:  # every process mines the same negatives; one writes them
            write_json(path, self.negatives, indent=None)

    def loss(self, model, batch, indices=None):
        a = model([e[0] for e in batch])["embedding"]
        p = model([e[1] for e in batch])["embedding"]
        neg = None
        if self.k and indices is not None:
            neg_texts = [self.examples[j][1] for i in indices for j in self.negatives[i]]
            neg = model(neg_texts)["embedding"]
        return self.objective(a, p, neg)


@torch.no_grad()
def mine_hard_negatives(model, sources: list[str], targets: list[str], k: int, batch_size: int = 64) -> list[list[int]]:
    """For each source, the k most similar targets (cosine, exact) other than its own and any
    target with the same text. The model encodes under its training precision (bf16 autocast
    when `model.precision` is "bf16"), with a progress bar."""
    same: dict[str, int] = {}
    text_id = torch.tensor([same.setdefault(t, len(same)) for t in targets])
    # checked before encoding, so a corpus that cannot give k negatives fails at once
    others = len(targets) - torch.bincount(text_id)[text_id]
    short = (others < k).nonzero()
    if len(short):
        raise ValueError(f"could not find {k} hard negatives for example {int(short[0])}: fewer than {k} "
                         "targets with another text")
    with torch.autocast("cpu", dtype=torch.bfloat16, enabled=getattr(model, "precision", "fp32") == "bf16"):
        src = F.normalize(model.encode(sources, batch_size, show_progress=True), dim=-1)
        tgt = F.normalize(model.encode(targets, batch_size, show_progress=True), dim=-1)
    out = []
    for start in range(0, len(src), 1024):
        sim = src[start : start + 1024] @ tgt.T
        # a repeated target text (a short reply, a title) is the gold answer, not a negative
        sim[text_id[start : start + 1024, None] == text_id[None, :]] = -float("inf")
        out.extend(sim.topk(k, dim=1).indices.tolist())
    return out
