"""The cross-encoder QE (`xlingua qe cross`): joint inputs cut to fit, a tiny BERT that learns a
toy judgement (the translation says "rot"), the best step saved and reloaded with the same
scores, calibration onto the dev gold, and a resumed run going on from its checkpoint."""
from __future__ import annotations

import json

import numpy as np
import pytest

from tests.training.conftest import make_tiny_model_dir
from xlingua.qe.train import evaluate
from xlingua.qe.cross import CrossQEConfig, CrossScorer, load_scorer, train_cross

HEADER = "index\toriginal\ttranslation\tscores\tmean\tz_scores\tz_mean\tmodel_scores"
NOUNS = ["katze", "hund", "haus", "auto"]
COLOURS = ["rot", "blau", "grün", "klein"]


def write_toy(root, n=(96, 48), seed=0):
    """en-de pairs whose gold z-score is +1 when the translation holds "rot", else -1."""
    rng = np.random.default_rng(seed)
    (root / "mlqe" / "en-de").mkdir(parents=True)
    for split, rows in zip(("train", "dev"), n):
        lines = [HEADER]
        for i in range(rows):
            noun, colour = NOUNS[rng.integers(4)], COLOURS[rng.integers(4)]
            z = 1.0 if colour == "rot" else -1.0
            lines.append(f"{i}\tthe {noun} is here\tdas {noun} ist {colour}\t[50]\t50\t[{z}]\t{z}\t0")
        (root / "mlqe" / "en-de" / f"{split}.ende.df.short.tsv").write_text("\n".join(lines) + "\n")


@pytest.fixture(scope="module")
def toy(tmp_path_factory):
    root = tmp_path_factory.mktemp("cross")
    write_toy(root)
    return root, make_tiny_model_dir(root / "tiny")


def _config(model_dir, **kw):
    base = dict(base=str(model_dir), pairs=("en-de",), max_steps=60, batch_size=16, lr=1e-3, head_lr=1e-2,
                warmup_steps=0, max_len=32, precision="fp32", eval_every=20, checkpoint_every=10, log_every=10)
    return CrossQEConfig(**{**base, **kw})


def test_joint_input_is_head_source_tail_translation_tail_and_cut_from_the_longer_side(toy):
    from xlingua.encoders.hf import TransformerEncoder

    _, model_dir = toy
    scorer = CrossScorer(TransformerEncoder(model_dir), max_len=8)
    tok = scorer.encoder.tok
    a, b = tok.content_ids(["the cat"])[0], tok.content_ids(["die katze ist auf dem auto"])[0]
    ids = scorer.batch(["the cat"], ["die katze ist auf dem auto"])["input_ids"][0].tolist()
    # [CLS] the cat [SEP] + as much of the translation as fits (8 - 3 specials - 2) + [SEP]
    assert ids == [*tok.head, *a, *tok.tail, *b[:3], *tok.tail]
    long = "a big red dog and a small cat"
    ids = scorer.batch([long], [long])["input_ids"][0].tolist()
    assert len(ids) == 8 and ids.count(tok.tail[0]) == 2  # each side keeps room // 2 = 2 tokens


def test_tiny_cross_encoder_learns_the_toy_judgement_and_reloads(toy, tmp_path):
    root, model_dir = toy
    found = train_cross(_config(model_dir), tmp_path / "run", show_progress=False, data_dir=root)
    assert found["dev"]["pearson"] > 0.8  # cosine of unrelated tiny vectors could not do this
    model, meta = load_scorer(tmp_path / "run" / "best")
    assert meta["step"] == found["best_step"] and len(meta["calibration"]) == 2
    again = evaluate(tmp_path / "run" / "best", split="dev", data_dir=root)
    # evaluation scores in bf16 where the CPU has bf16 units, as `score --qe` does
    assert again["qe"]["mean"] == pytest.approx(found["dev"]["pearson"], abs=1e-3)


def test_a_stopped_run_resumes_where_it_stopped(toy, tmp_path):
    root, model_dir = toy
    out = tmp_path / "run"
    train_cross(_config(model_dir, max_steps=20), out, show_progress=False, data_dir=root)
    train_cross(_config(model_dir, max_steps=40), out, show_progress=False, data_dir=root)
    steps = [json.loads(line) for line in (out / "log.jsonl").read_text().splitlines()]
    logged = [r["step"] for r in steps if "loss" in r]
    assert logged == [10, 20, 30, 40]  # nothing repeated, nothing skipped
    starts = [r for r in steps if "config" in r]
    assert len(starts) == 1


def test_settings_are_checked_before_any_work():
    with pytest.raises(ValueError, match="precision must be bf16 or fp32"):
        CrossQEConfig(precision="fp16")


def test_cli_trains_then_eval_reads_the_cross_model(toy, tmp_path, monkeypatch):
    from typer.testing import CliRunner

    from xlingua.cli import app

    root, model_dir = toy
    monkeypatch.setenv("XLINGUA_DATA", str(root))
    out = tmp_path / "run"
    sets = [f"base={model_dir}", "pairs=en-de", "max_steps=20", "batch_size=16", "lr=1e-3", "head_lr=1e-2",
            "warmup_steps=0", "max_len=32", "precision=fp32", "eval_every=10"]
    result = CliRunner().invoke(app, ["qe", "cross", "-o", str(out), "--partner", "none",
                                      *sum((["--set", s] for s in sets), [])])
    assert result.exit_code == 0, result.output
    assert "| cross-encoder, step" in result.output and (out / "best" / "cross.json").is_file()
    result = CliRunner().invoke(app, ["qe", "eval", str(out / "best"), "--split", "dev"])
    assert result.exit_code == 0, result.output
    assert result.output.splitlines()[2].startswith("| qe | ")
    result = CliRunner().invoke(app, ["qe", "cross", "-o", str(tmp_path / "r2"), "--set", "precision=fp16"])
    assert result.exit_code == 2 and "precision must be bf16 or fp32" in result.output
