"""The prepare-then-mine benchmark, small: crawled German documents from newstest on both
sides (gold: identical sentences), a toy encoder. `prepare` must beat mining raw lines."""
from __future__ import annotations

import pytest

from xlingua.bench.prepare import markdown, run, throughput
from xlingua.mining.toy import CharNgramEncoder


@pytest.mark.shared
def test_prepare_then_mine_recovers_the_gold_pairs(shared, tmp_path):
    report = run("de", "de", "fr", n_pairs=60, keep=0.8, seed=0, model="toy", out=tmp_path,
                 encoder=CharNgramEncoder(dim=256), show_progress=False)
    raw, split, prep = report["raw"], report["split"], report["prepare"]
    assert report["gold_pairs"] > 30
    # raw lines are paragraphs, boilerplate and foreign lines: few are a gold sentence pair
    assert raw["best"]["f1"] < 0.2 and split["best"]["f1"] > 0.8 and prep["best"]["f1"] > 0.8
    # without a threshold every source sentence is paired: the filters remove what has no
    # partner (boilerplate, foreign lines, duplicates), so precision and F1 rise
    assert prep["precision"] > split["precision"] and prep["f1"] > split["f1"] > raw["f1"]
    dropped = {k: v for k, v in prep["prepare"]["src"]["dropped"].items() if v}
    assert dropped["duplicate"] > 0 and dropped.get("lid_language", 0) + dropped.get("lid_threshold", 0) > 0
    t = report["throughput"]
    sides = prep["prepare"].values()
    assert t["sentences"] == sum(s["kept"] + sum(s["dropped"].values()) for s in sides)
    # the sentence stages (reading a few small documents can round to 0 CPU seconds)
    assert all((t["stage_items_per_s"][k] or 0) > 0 for k in ("split", "filters", "lid", "dedup_write")), t
    assert "| language identification (sentences) |" in markdown(report)


def _side(items, cpu):
    return {"stage_items": items, "stage_cpu_seconds": cpu, "dropped": {}, "kept": 0, "stage_items_per_s": {}}


def test_throughput_per_stage_and_share_of_embedding():
    # two sides: 300 sentences split in 0.1 + 0.2 CPU s, etc.; prepare 300 sentences in 1.5 CPU s
    # (200/s); the split run embedded 300 + 100 sentences in 20 CPU s (20/s): share 20/200 = 10%
    a = _side({"read": 10, "split": 100, "filters": 100, "lid": 90, "dedup_write": 80},
              {"read": 0.05, "split": 0.1, "filters": 0.2, "lid": 0.3, "dedup_write": 0.05})
    b = _side({"read": 20, "split": 200, "filters": 200, "lid": 150, "dedup_write": 120},
              {"read": 0.05, "split": 0.2, "filters": 0.2, "lid": 0.3, "dedup_write": 0.05})
    row = {"precision": 0.5, "recall": 0.5, "f1": 0.5, "mined": 4, "best": {"f1": 0.5},
           "sentences": {"src": 300, "tgt": 100}, "embed_cpu_seconds": 20.0}
    report = {"gold_pairs": 4, "settings": {"model": "toy"}, "raw": row, "split": row,
              "prepare": {**row, "prepare": {"src": a, "tgt": b}}}
    t = throughput(report)
    assert t["stage_items_per_s"] == {"read": 300.0, "split": 1000.0, "filters": 750.0, "lid": 400.0,
                                      "dedup_write": 2000.0}
    assert t["sentences"] == 300 and t["prepare_sentences_per_s"] == 200.0
    assert t["embed_sentences_per_s"] == 20.0 and t["prepare_share_of_embedding"] == 0.1
    report["throughput"] = t
    md = markdown(report)
    assert "| split (sentences out) | 1,000 | 0.30 |" in md and "| all stages (sentences) | 200 | 1.50 |" in md
    assert "prepare costs 10.0% of their embedding CPU time" in md
    report["split"] = {**row, "embed_cpu_seconds": 0.0}  # embeddings from the cache: no rate claimed
    report["throughput"] = throughput(report)
    assert report["throughput"]["prepare_share_of_embedding"] is None and "from the cache" in markdown(report)
