"""Alignment scores on hand-counted toys, the merged test documents, the 1-1 margin baseline,
and the benchmark command on a tiny setting."""
from __future__ import annotations

import runpy
from pathlib import Path

import numpy as np
import pytest

from xlingua.evaluation.alignment import alignment_scores, make_document, margin_one_to_one

BENCH = Path(__file__).resolve().parents[2] / "benchmarks" / "align_eval.py"


def test_strict_and_lax_scores_by_hand():
    gold = [((0, 1), (0, 1)), ((1, 2), (1, 3)), ((2, 3), (3, 4))]
    pred = [((0, 1), (0, 1)), ((1, 2), (1, 2)), ((2, 3), (3, 4)), ((2, 3), (2, 3))]
    s = alignment_scores(pred, gold)
    assert s["strict"] == pytest.approx({"precision": 2 / 4, "recall": 2 / 3, "f1": 2 * (1 / 2) * (2 / 3) / (1 / 2 + 2 / 3)})
    # links: gold {00, 11, 12, 23}; pred {00, 11, 23, 22}: 3 of 4 each way
    assert s["lax"] == pytest.approx({"precision": 0.75, "recall": 0.75, "f1": 0.75})


def test_merged_document_keeps_every_sentence_and_its_gold():
    pairs = [(f"a{i}", f"b{i}") for i in range(30)]
    doc = make_document(pairs, 0.2, np.random.default_rng(3))
    sizes = {(a1 - a0, b1 - b0) for (a0, a1), (b0, b1) in doc.gold}
    assert sizes == {(1, 1), (1, 2), (2, 1)}
    assert " ".join(doc.a).split() == [a for a, _ in pairs] and " ".join(doc.b).split() == [b for _, b in pairs]
    for (a0, a1), (b0, b1) in doc.gold:  # each gold group holds the same source rows on both sides
        assert [w[1:] for w in " ".join(doc.a[a0:a1]).split()] == [w[1:] for w in " ".join(doc.b[b0:b1]).split()]


def test_margin_baseline_is_one_to_one():
    x = np.eye(4, dtype=np.float32)
    y = x[[1, 0, 2, 3]] + 0.01
    assert margin_one_to_one(x, y, k=2) == [((0, 1), (1, 2)), ((1, 2), (0, 1)), ((2, 3), (2, 3)), ((3, 4), (3, 4))]


@pytest.mark.shared
def test_benchmark_command_runs_on_a_tiny_setting(shared, tmp_path):
    from tests.training.conftest import make_tiny_model_dir

    model = make_tiny_model_dir(tmp_path / "tiny")
    main = runpy.run_path(str(BENCH))["main"]
    report = main(["--model", str(model), "--langs", "de", "--docs", "2", "--doc-len", "8",
                   "--out", str(tmp_path / "out"), "--corpora", str(shared / "corpora" / "general")])
    r = report["langs"]["de"]
    assert sum(r["gold_groups"].values()) > 0
    for name in ("vecalign", "margin 1-1"):
        assert 0 <= r[name]["strict"]["f1"] <= 1 and 0 <= r[name]["lax"]["recall"] <= 1
    assert "| de |" in (tmp_path / "out" / "align_eval.md").read_text()
