"""DuEAM learner loss (Goswami et al. 2021, "Cross-lingual Sentence Embedding using
Multi-Task Learning", EMNLP: the dual encoder with anchor-learner model).

A frozen copy of the starting model (the anchor) scores each pair by the Word Mover's Distance
d_wmd(s, t) between its contextual token embeddings (xlingua.similarity.wmd). The learner's
sentence embeddings s', t' are pulled so that their Euclidean similarity matches the anchor's,
with a small reward for cosine agreement:
    L = mean_i |exp(-||s'_i - t'_i||) - exp(-d_wmd(s_i, t_i))| - lambda * mean_i cos(s'_i, t'_i)
lambda = 0.003 by default. No labels are used.
"""
from __future__ import annotations

import copy

import torch
import torch.nn.functional as F
from torch import nn

from xlingua.objectives.base import TrainingTask, register
from xlingua.objectives.distributed import gather
from xlingua.similarity.wmd import wmd


class DuEAMLoss(nn.Module):
    def __init__(self, lam: float = 0.003):
        super().__init__()
        self.lam = lam

    def forward(self, s: torch.Tensor, t: torch.Tensor, wmd_st: torch.Tensor) -> torch.Tensor:
        """s, t: learner embeddings (n, d); wmd_st: the anchor's WMD for each pair (n,)."""
        s, t = gather(s, t)
        wmd_st = gather(wmd_st)
        euclid = (s - t).norm(dim=-1)
        fit = (torch.exp(-euclid) - torch.exp(-wmd_st.to(s.dtype))).abs().mean()
        return fit - self.lam * F.cosine_similarity(s, t, dim=-1).mean()


@register("dueam")
class DuEAMTask(TrainingTask):
    """Examples (source, target). Options: lam (0.003), wmd_method (emd | sinkhorn), wmd_reg,
    layer (-1). The anchor is a frozen copy of the model as it is when the task is prepared
    (the start)."""

    def __init__(self, config, examples, dim):
        opts = dict(config.options)
        self.method = opts.pop("wmd_method", "emd")
        self.reg = float(opts.pop("wmd_reg", 0.05))
        self.layer = int(opts.pop("layer", -1))
        super().__init__(config, examples, DuEAMLoss(**opts))
        self._anchor = None  # a plain attribute: not trained, not checkpointed
        self._wmd: dict[int, float] = {}

    def prepare(self, model, output_dir):
        self._anchor = copy.deepcopy(model).eval()
        for p in self._anchor.parameters():
            p.requires_grad_(False)

    @torch.no_grad()
    def anchor_wmd(self, batch, indices=None) -> torch.Tensor:
        """The frozen anchor's WMD of each pair; cached by example index (the anchor never
        changes), computed afresh when no indices are given."""
        keys = [None] * len(batch) if indices is None else [int(i) for i in indices]
        todo = [k for k, key in enumerate(keys) if key is None or key not in self._wmd]
        fresh = {}
        if todo:
            s = self._anchor([batch[k][0] for k in todo], token_layer=self.layer)
            t = self._anchor([batch[k][1] for k in todo], token_layer=self.layer)
            for row, k in enumerate(todo):
                a = s["tokens"][row][s["token_mask"][row].bool()].numpy()
                b = t["tokens"][row][t["token_mask"][row].bool()].numpy()
                fresh[k] = wmd(a, b, self.method, self.reg)
                if keys[k] is not None:
                    self._wmd[keys[k]] = fresh[k]
        return torch.tensor([fresh[k] if k in fresh else self._wmd[key] for k, key in enumerate(keys)],
                            dtype=torch.float32)

    def loss(self, model, batch, indices=None):
        d = self.anchor_wmd(batch, indices)
        s = model([e[0] for e in batch])["embedding"]
        t = model([e[1] for e in batch])["embedding"]
        return self.objective(s, t, d)
