"""Teaching a model new languages by distillation towards its own English vectors, with
translation ranking beside it.

Heffernan, Celebi & Schwenk 2022, "Bitext Mining Using Distilled Sentence Representations for
Low-Resource Languages" (LASER3, Findings of EMNLP): a student for a group of languages learns to
put each sentence where the frozen teacher puts its English translation. Here the student starts
as the teacher itself, so the languages it already reads start where they should be; pairs of
those languages in the mix keep them there (`xlingua extend`). Translation ranking (Yang et al.
2019, objectives.translation_ranking) on the same batch pushes each sentence away from the other
translations in the batch, which retrieval needs and a pull towards one point alone does not give.

    L = (D(M(t), T(s)) + w_en D(M(s), T(s))) / (1 + w_en) + w_rank R(M(t), E) + w_sim K(M(t), E, T(s))

s English, t its translation, T the frozen teacher, M the student, D the distillation distance
(objectives.distillation: squared distance of unit vectors, or 1 - cos), R the ranking loss, E
the English side ranked against: M(s) (`rank_against: student`) or, as in LASER3, where the
English side is the teacher's, T(s) (`rank_against: teacher`): then ranking moves only the
translations, and graded similarity among English sentences is left to the teacher's. K
(objectives.similarity_distillation, `similarity_weight`, 0 unless set) matches the student's
in-batch similarities to the teacher's, for students far smaller than their teacher.

`target: own` pulls the translation to the teacher's vector of the translation itself, T(t),
instead of T(s): for a student compressed from a teacher that already reads the language (fewer
layers of the same model), T(t) is a function of the student's own input, which it can learn to
reproduce, while T(s) also carries what the English wording adds; T(s) still anchors the English
side and the ranking. The translations' teacher vectors are embedded as batches first ask for them
and cached, since a run meets only the translations its batches draw.

When only the new pieces' rows train (`xlingua extend --rows-only`), English text, which holds no
new piece, embeds exactly as the teacher's: `student_english: false` then takes M(s) = T(s) and
skips the student's pass over the English side, which would teach nothing (half of each step).
"""
from __future__ import annotations

from dataclasses import replace

import torch
from torch import nn

from xlingua.objectives.base import register
from xlingua.objectives.distillation import DistillationLoss, DistillationTask
from xlingua.objectives.similarity_distillation import SimilarityDistillationLoss
from xlingua.objectives.translation_ranking import TranslationRankingLoss


class Laser3Loss(nn.Module):
    def __init__(self, metric: str = "mse", english_weight: float = 1.0, ranking_weight: float = 1.0,
                 scale: float = 20.0, margin: float = 0.0, rank_against: str = "student",
                 similarity_weight: float = 0.0):
        super().__init__()
        if rank_against not in ("student", "teacher"):
            raise ValueError(f"rank_against is 'student' or 'teacher', got {rank_against!r}")
        self.distill = DistillationLoss(metric, english_weight)
        self.rank = TranslationRankingLoss(scale, margin)
        self.ranking_weight = ranking_weight
        self.rank_against = rank_against
        self.similarity = SimilarityDistillationLoss(scale)
        self.similarity_weight = similarity_weight

    def forward(self, translation: torch.Tensor, english: torch.Tensor, teacher_english: torch.Tensor,
                teacher_translation: torch.Tensor | None = None) -> torch.Tensor:
        """translation: M(t) (n, d); english: M(s) (n, d); teacher_english: T(s) (n, d);
        teacher_translation: T(t) (n, d), the translations' distillation target instead of T(s)."""
        loss = self.distill(translation, teacher_english, english, teacher_translation)
        side = teacher_english if self.rank_against == "teacher" else english
        if self.ranking_weight:
            loss = loss + self.ranking_weight * self.rank(translation, side)
        if self.similarity_weight:
            loss = loss + self.similarity_weight * self.similarity(translation, side, teacher_english)
        return loss


@register("laser3")
class Laser3Task(DistillationTask):
    """Examples (xx, english, ...). Options: teacher (encoder spec; `xlingua extend` passes the
    start model), teacher_cache, metric, english_weight, ranking_weight, scale, margin,
    rank_against, similarity_weight, student_english (false: the teacher's English vectors stand for
    the student's), target (`english`, T(s), or `own`, T(t), for the translations)."""

    loss_class = Laser3Loss

    def __init__(self, config, examples, dim):
        opts = dict(config.options)
        self.student_english = bool(opts.pop("student_english", True))
        self.target = opts.pop("target", "english")
        if self.target not in ("english", "own"):
            raise ValueError(f"task {config.name!r}: target is 'english' or 'own', got {self.target!r}")
        super().__init__(replace(config, options=opts), examples, dim)

    def keeps_teacher(self) -> bool:
        return self.target == "own"

    def loss(self, model, batch, indices=None):
        target = self._vectors[[self._row[e[1]] for e in batch]]
        xx = model([e[0] for e in batch])["embedding"]
        en = model([e[1] for e in batch])["embedding"] if self.student_english else target.to(xx.dtype)
        own = None
        if self.target == "own":
            own = torch.from_numpy(self._teacher.vectors([e[0] for e in batch]))
        return self.objective(xx, en, target, own)
