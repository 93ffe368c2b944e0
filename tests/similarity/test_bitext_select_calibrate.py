"""Candidate scoring from neighbour lists, the selection modes and threshold calibration on
hand-computed cases."""
import numpy as np
import pytest

from xlingua.data.text import InputError, read_gold
from xlingua.similarity.bitext import batch_stat, best_candidates, both_directions, knn_stat, mean_row
from xlingua.similarity.calibrate import at_threshold, best_threshold, two_fold
from xlingua.similarity.select import select_pairs


def test_best_candidate_by_ratio_margin_from_neighbour_lists():
    # query 0's lists: db rows 2 (cos .8) and 0 (cos .7); db 2 is a hub (stat .9), db 0 not (.5)
    d = np.array([[0.8, 0.7]], np.float32)
    idx = np.array([[2, 0]])
    q_stat = np.array([0.6], np.float32)
    db_stat = np.array([0.5, 0.4, 0.9], np.float32)
    s, j = best_candidates(d, idx, q_stat, db_stat, "ratio")
    # .8 / ((.6 + .9) / 2) = 1.0667 < .7 / ((.6 + .5) / 2) = 1.2727
    assert j.tolist() == [0] and s[0] == pytest.approx(0.7 / 0.55, rel=1e-6)
    s, j = best_candidates(d, idx, q_stat, db_stat, "absolute")
    assert j.tolist() == [2] and s[0] == pytest.approx(0.8)
    assert knn_stat(np.array([[0.9, 0.5, 0.1]], np.float32), 2)[0] == pytest.approx(0.7)


def test_both_directions_scores_a_pair_alike_each_way():
    fwd = (np.array([[0.9, 0.2], [0.5, 0.4]], np.float32), np.array([[0, 1], [0, 1]]))
    bwd = (np.array([[0.9, 0.5], [0.4, 0.2]], np.float32), np.array([[0, 1], [1, 0]]))
    best = both_directions(fwd, bwd, k=2, score="distance")
    assert best["fwd_tgt"].tolist() == [0, 1] and best["bwd_src"].tolist() == [0, 1]
    assert best["fwd_score"][0] == best["bwd_score"][0]   # pair (0, 0) found both ways
    assert best["fwd_score"][1] == best["bwd_score"][1]   # pair (1, 1)


def test_inbatch_statistic_is_the_mean_cosine_to_the_other_side():
    x = np.array([[1.0, 0.0], [0.0, 1.0]], np.float32)
    y = np.array([[0.6, 0.8], [1.0, 0.0], [0.0, 1.0]], np.float32)
    assert np.allclose(batch_stat(x, mean_row([y])), (x @ y.T).mean(axis=1))
    assert np.allclose(mean_row([y[:1], y[1:]]), y.mean(axis=0))   # shards sum alike


def test_select_modes():
    # forward: src0->tgt0 (.9), src1->tgt0 (.8); backward: tgt0->src0 (.9), tgt1->src1 (.3)
    best = {"fwd_score": np.array([0.9, 0.8]), "fwd_tgt": np.array([0, 0]),
            "bwd_score": np.array([0.9, 0.3]), "bwd_src": np.array([0, 1])}

    def pairs(mode):
        return [(a, b) for _, a, b in zip(*(v.tolist() for v in select_pairs(best, mode)))]

    assert pairs("forward") == [(0, 0), (1, 0)]
    assert pairs("backward") == [(0, 0), (1, 1)]
    assert pairs("intersect") == [(0, 0)]
    assert pairs("union") == [(0, 0), (1, 0), (1, 1)]
    assert pairs("max") == [(0, 0), (1, 1)]     # greedy one-to-one
    with pytest.raises(ValueError, match="unknown mode"):
        select_pairs(best, "both")


def test_best_threshold_f1_known():
    # candidates by score: right, wrong, right, wrong; 3 gold pairs (one never proposed).
    # Cut after 3: P = 2/3, R = 2/3 -> F1 = 2/3, the best (after 1: 0.5, 2: 0.4, 4: 0.571).
    scores = np.array([0.9, 0.8, 0.7, 0.6])
    correct = np.array([True, False, True, False])
    best = best_threshold(scores, correct, 3)
    assert best["f1"] == pytest.approx(2 / 3)
    assert best["threshold"] == pytest.approx(0.7)
    assert at_threshold(scores, correct, 3, 0.85) == {"precision": 1.0, "recall": 1 / 3, "f1": 0.5,
                                                       "predicted": 1, "correct": 1, "gold": 3}
    assert at_threshold(scores, correct, 3, None)["predicted"] == 0


def test_two_fold_threshold_is_chosen_on_the_other_fold():
    # fold 1: gold at 0.9, a wrong one at 0.5 -> threshold 0.9.
    # fold 0: gold at 0.95, wrong at 0.7, gold at 0.6.
    scores = np.array([0.95, 0.9, 0.7, 0.6, 0.5])
    correct = np.array([True, True, False, True, False])
    fold = np.array([0, 1, 0, 0, 1])
    odd_cal, even_cal = two_fold(scores, correct, fold, (2, 1))
    # threshold 0.9 on fold 0 keeps only 0.95: P 1, R 1/2
    assert odd_cal["threshold"] == pytest.approx(0.9)
    assert odd_cal["f1"] == pytest.approx(2 / 3)
    # fold 0's best: cut at 0.95 (F1 .667) vs 0.6 (P 2/3, R 1, F1 .8) -> 0.6; fold 1 at 0.6: 0.9 only
    assert even_cal["threshold"] == pytest.approx(0.6)
    assert even_cal["f1"] == pytest.approx(1.0)


def test_read_gold_names_the_bad_line(tmp_path):
    p = tmp_path / "gold.tsv"
    p.write_text("a\tb\n\nc d\n")
    with pytest.raises(InputError, match=r"gold.tsv:3: expected src-id<TAB>tgt-id"):
        read_gold(p)
    p.write_text("a\tb\n\n c\td \n")
    assert read_gold(p) == [(1, "a", "b"), (3, "c", "d")]  # (line, src, tgt): checked against the corpora later
