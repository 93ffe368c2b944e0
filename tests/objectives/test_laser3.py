"""The laser3 loss (distillation towards the teacher's English vectors plus translation ranking)
on a tiny case computed by hand."""
from math import exp, log

import pytest
import torch

from xlingua.objectives.base import task_class
from xlingua.objectives.laser3 import Laser3Loss, Laser3Task

T = torch.tensor([[1.0, 0.0], [0.0, 2.0]])          # teacher(en); normalised: e1, e2
XX = torch.tensor([[3.0, 4.0], [0.0, 5.0]])         # student(xx): (0.6, 0.8), e2
EN = torch.tensor([[1.0, 0.0], [1.0, 0.0]])         # student(en): e1, e1


def test_laser3_loss_is_distillation_plus_weighted_ranking():
    # distillation: xx 0.8 and 0 -> 0.4; english 0 and 2 -> 1.0; equal weights -> 0.7
    distill = 0.7
    # ranking, scale 20: xx->en logits [12, 12] and [0, 0] -> log 2 each; en->xx logits [12, 0]
    # (gold first) and [12, 0] (gold second) -> log(1 + e^-12) and log(1 + e^12)
    rank = (log(2) + (log(1 + exp(-12)) + log(1 + exp(12))) / 2) / 2
    assert Laser3Loss()(XX, EN, T).item() == pytest.approx(distill + rank, abs=1e-5)
    assert Laser3Loss(ranking_weight=0.5)(XX, EN, T).item() == pytest.approx(distill + 0.5 * rank, abs=1e-5)
    assert Laser3Loss(ranking_weight=0.0)(XX, EN, T).item() == pytest.approx(distill, abs=1e-6)


def test_laser3_is_registered_and_takes_its_options():
    assert task_class("laser3") is Laser3Task
    from xlingua.training.config import TaskConfig

    task = Laser3Task(TaskConfig("new", "laser3", {}, options={"teacher": "t", "ranking_weight": 0.25,
                                                               "margin": 0.1}), [("x", "e", "xx")], 2)
    assert task.teacher == "t" and task.objective.ranking_weight == 0.25 and task.objective.rank.margin == 0.1


def test_ranking_against_the_teacher_ranks_translations_against_its_english_and_leaves_the_students():
    # xx->T logits [12, 16] (gold first) and [0, 20] (gold second); T->xx [12, 0] and [16, 20]
    rank = ((log(1 + exp(4)) + log(1 + exp(-20))) / 2 + (log(1 + exp(-12)) + log(1 + exp(-4))) / 2) / 2
    assert Laser3Loss(rank_against="teacher")(XX, EN, T).item() == pytest.approx(0.7 + rank, abs=1e-5)
    # the student's English vectors get the distillation's gradient only
    grads = []
    for loss in (Laser3Loss(rank_against="teacher"), Laser3Loss(ranking_weight=0.0), Laser3Loss()):
        en = EN.clone().requires_grad_()
        loss(XX, en, T).backward()
        grads.append(en.grad)
    assert torch.allclose(grads[0], grads[1]) and not torch.allclose(grads[2], grads[1])
    with pytest.raises(ValueError, match="rank_against is 'student' or 'teacher'"):
        Laser3Loss(rank_against="both")


def test_without_the_students_english_pass_the_teachers_vectors_stand_in_and_the_english_side_is_not_embedded():
    from xlingua.training.config import TaskConfig

    calls = []

    def model(texts):
        calls.append(list(texts))
        return {"embedding": XX if texts[0].startswith("x") else EN}

    def task(**options):
        t = Laser3Task(TaskConfig("new", "laser3", {}, options={"teacher": "t", **options}),
                       [("x1", "e1"), ("x2", "e2")], 2)
        t._row, t._vectors = {"e1": 0, "e2": 1}, T
        return t

    batch = [("x1", "e1"), ("x2", "e2")]
    assert task().loss(model, batch).item() == pytest.approx(Laser3Loss()(XX, EN, T).item())
    assert calls == [["x1", "x2"], ["e1", "e2"]]
    calls.clear()
    skipped = task(student_english=False, rank_against="teacher")
    assert not skipped.student_english and skipped.objective.rank_against == "teacher"
    assert skipped.loss(model, batch).item() == pytest.approx(Laser3Loss(rank_against="teacher")(XX, T, T).item())
    assert calls == [["x1", "x2"]]


def test_similarity_distillation_matches_the_teachers_in_batch_distribution():
    from xlingua.objectives.similarity_distillation import SimilarityDistillationLoss

    # teacher rows e1, e2: P = [p, 1 - p] and [1 - p, p] with p = 1 / (1 + e^-20); the student's
    # translations (0.6, 0.8) and e2 against English e1, e1 give equal logits: Q uniform in both rows
    p = 1 / (1 + exp(-20))
    kl = p * log(2 * p) + (1 - p) * log(2 * (1 - p))
    assert SimilarityDistillationLoss()(XX, EN, T).item() == pytest.approx(kl, abs=1e-6)
    # a student whose similarities are the teacher's has nothing to learn
    assert SimilarityDistillationLoss()(T, T, T).item() == pytest.approx(0.0, abs=1e-6)
    assert Laser3Loss(ranking_weight=0.0, similarity_weight=0.5)(XX, EN, T).item() == pytest.approx(0.7 + 0.5 * kl, abs=1e-5)
    # its gradient reaches the student's English side too (ranked against the student)
    en = EN.clone().requires_grad_()
    Laser3Loss(ranking_weight=0.0, english_weight=0.0, similarity_weight=1.0)(XX, en, T).backward()
    assert en.grad.abs().sum() > 0


def test_own_target_pulls_each_translation_to_the_teachers_vector_of_itself():
    # T(t) = the student's own translations: their distance is 0; the English side's stays 0 and 2
    # -> (0 + 1.0) / 2; the ranking is the same as with the English target
    rank = (log(2) + (log(1 + exp(-12)) + log(1 + exp(12))) / 2) / 2
    assert Laser3Loss()(XX, EN, T, XX).item() == pytest.approx(0.5 + rank, abs=1e-5)
    # T(t) = T(s) is the English target
    assert Laser3Loss()(XX, EN, T, T).item() == pytest.approx(Laser3Loss()(XX, EN, T).item(), abs=1e-6)


def test_own_target_asks_the_teacher_for_the_batchs_translations():
    from xlingua.training.config import TaskConfig

    asked = []

    class FakeTeacher:
        def vectors(self, texts, show_progress=False):
            asked.append(list(texts))
            return XX.numpy() / 5  # rows of norm 1 and 1

    task = Laser3Task(TaskConfig("new", "laser3", {}, options={"teacher": "t", "target": "own"}),
                      [("x1", "e1"), ("x2", "e2")], 2)
    task._row, task._vectors, task._teacher = {"e1": 0, "e2": 1}, T, FakeTeacher()
    assert task.keeps_teacher()
    model = lambda texts: {"embedding": XX if texts[0].startswith("x") else EN}  # noqa: E731
    got = task.loss(model, [("x2", "e2"), ("x1", "e1")]).item()
    assert asked == [["x2", "x1"]]
    assert got == pytest.approx(Laser3Loss()(XX, EN, T[[1, 0]], XX / 5).item(), abs=1e-6)
    english = Laser3Task(TaskConfig("new", "laser3", {}, options={"teacher": "t"}), [("x1", "e1")], 2)
    assert english.target == "english" and not english.keeps_teacher()
    with pytest.raises(ValueError, match="task 'new': target is 'english' or 'own', got 'self'"):
        Laser3Task(TaskConfig("new", "laser3", {}, options={"teacher": "t", "target": "self"}), [], 2)
