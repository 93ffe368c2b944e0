"""Multilingual knowledge distillation: a student learns to put a sentence and its translation
where a frozen teacher puts the English sentence.

Reimers & Gurevych 2020, "Making Monolingual Sentence Embeddings Multilingual using Knowledge
Distillation" (EMNLP), eq. 1; LASER3 (Heffernan, Celebi & Schwenk 2022, "Bitext Mining Using
Distilled Sentence Representations for Low-Resource Languages") trains its students the same way.

    L = 1/B sum_j ( ||M(s_j) - T(s_j)||^2 + ||M(t_j) - T(s_j)||^2 ) / 2

s_j English, t_j its translation, T the teacher, M the student. Vectors are L2-normalised first
(the teacher's inference vectors are), and the squared distance is summed over dimensions rather
than averaged as in the paper's MSE: then the loss is 2 - 2 cos, on the same scale as a ranking
loss that shares the optimizer, instead of 1/dim of it. `metric="cosine"` gives 1 - cos (LASER3's
cosine variant), which is the same quantity halved.
"""
from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from xlingua.objectives.base import TrainingTask, register
from xlingua.objectives.distributed import rank


class DistillationLoss(nn.Module):
    def __init__(self, metric: str = "mse", english_weight: float = 1.0):
        super().__init__()
        if metric not in ("mse", "cosine"):
            raise ValueError(f"metric must be mse or cosine, got {metric!r}")
        self.metric = metric
        self.english_weight = english_weight

    def distance(self, student: torch.Tensor, teacher: torch.Tensor) -> torch.Tensor:
        s, t = F.normalize(student.float(), dim=-1), F.normalize(teacher.float(), dim=-1)
        if self.metric == "cosine":
            return 1 - (s * t).sum(-1)
        return ((s - t) ** 2).sum(-1)

    def forward(self, translation: torch.Tensor, teacher_english: torch.Tensor,
                english: torch.Tensor | None = None, teacher_translation: torch.Tensor | None = None) -> torch.Tensor:
        """translation: student(t_j) (n, d); teacher_english: T(s_j) (n, d); english:
        student(s_j) (n, d) or None to match the translations alone; teacher_translation: T(t_j)
        (n, d), the translations' own target instead of T(s_j), or None."""
        own = teacher_english if teacher_translation is None else teacher_translation
        loss = self.distance(translation, own).mean()
        if english is None or not self.english_weight:
            return loss
        w = self.english_weight
        return (loss + w * self.distance(english, teacher_english).mean()) / (1 + w)


@register("distillation")
class DistillationTask(TrainingTask):
    """Examples (xx, english, ...). Options: teacher (encoder spec, default `bundled`),
    teacher_cache (directory of the embedding cache, default $XLINGUA_HOME/embeddings), metric,
    english_weight. The teacher's vectors of every distinct English sentence are computed once,
    before the first step."""

    loss_class = DistillationLoss  # built from the options other than teacher and teacher_cache

    def __init__(self, config, examples, dim):
        opts = dict(config.options)
        self.teacher = opts.pop("teacher", "bundled")
        self.teacher_cache = opts.pop("teacher_cache", None)
        super().__init__(config, examples, self.loss_class(**opts))
        self.dim = dim
        self._row: dict[str, int] = {}
        self._vectors: torch.Tensor | None = None
        self._teacher = None  # the loaded teacher, while a subclass still asks it for rows

    def prepare(self, model, output_dir):
        from xlingua.encoders.teacher import Teacher

        self._teacher = Teacher(self.teacher, self.teacher_cache)
        english = sorted({e[1] for e in self.examples})
        vecs = self._teacher.vectors(english, show_progress=rank() == 0)
        if vecs.shape[1] != self.dim:
            raise ValueError(f"task {self.name!r}: teacher {self.teacher!r} gives {vecs.shape[1]}-d vectors, "
                             f"the student {self.dim}-d; they must match")
        self._row = {t: i for i, t in enumerate(english)}
        self._vectors = torch.from_numpy(vecs)
        if not self.keeps_teacher():
            self._teacher = None  # every target is in _vectors: free the teacher's weights

    def keeps_teacher(self) -> bool:
        return False

    def loss(self, model, batch, indices=None):
        target = self._vectors[[self._row[e[1]] for e in batch]]
        xx = model([e[0] for e in batch])["embedding"]
        en = model([e[1] for e in batch])["embedding"] if self.objective.english_weight else None
        return self.objective(xx, target, en)
