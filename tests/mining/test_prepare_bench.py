"""The prepare-then-mine benchmark, small: crawled German documents from newstest on both
sides (gold: identical sentences), a toy encoder. `prepare` must beat mining raw lines."""
from __future__ import annotations

import pytest

from xlingua.mining.prepare_bench import run
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
