"""`xlingua train CONFIG.yaml --set KEY=VALUE` runs the LASER, meaning and static recipes, and
their own commands (`xlingua laser train`, `xlingua meaning train`, `xlingua static train`) are
the same runs."""
import json

import pytest
import torch
from typer.testing import CliRunner

from tests.meaning.test_meaning_dev import toy  # noqa: F401  (fixture)
from tests.meaning.test_meaning_ship import hash_base, toy_shared  # noqa: F401  (fixtures)
from tests.training import legacy_setups as S
from xlingua.cli import app


def invoke(*args):
    result = CliRunner().invoke(app, [str(a) for a in args])
    assert result.exit_code == 0, result.output
    return result.output


@pytest.fixture
def laser_shared(tmp_path, monkeypatch):
    S.write_laser_corpus(tmp_path / "shared" / "corpora" / "l10n")
    monkeypatch.setenv("XLINGUA_SHARED", str(tmp_path / "shared"))


def test_laser_recipe_equals_laser_train(tmp_path, laser_shared):
    yaml = tmp_path / "laser.yaml"
    yaml.write_text("recipe: laser\noutput_dir: elsewhere\nlangs: de,fr\nmulti30k: false\nvocab_size: 30\n"
                    "embed_dim: 8\nhidden: 8\ndec_hidden: 8\nmax_tokens: 120\nlr: 0.005\nmax_steps: 9\n")
    said = invoke("train", yaml, "-o", tmp_path / "a", "--set", "max_steps=4", "--set", "log_every=2")
    assert "4 steps in" in said and "encoder.pt" in said
    invoke("laser", "train", "-o", tmp_path / "b", "--langs", "de,fr", "--no-multi30k", "--vocab-size", 30,
           "--embed-dim", 8, "--hidden", 8, "--dec-hidden", 8, "--max-tokens", 120, "--lr", 0.005, "--max-steps", 4)
    a, b = (torch.load(tmp_path / d / "checkpoint.pt", weights_only=False) for d in "ab")
    assert a["step"] == b["step"] == 4
    assert {k for k in a["config"] if a["config"][k] != b["config"][k]} == {"log_every"}
    assert all(torch.equal(a["model"][k], b["model"][k]) for k in b["model"])
    records = [json.loads(l) for l in (tmp_path / "a" / "log.jsonl").read_text().splitlines()]
    assert [r["step"] for r in records if "loss" in r] == [2, 4]
    # a rerun of the same config with a larger budget goes on; another setting is refused
    assert "6 steps in" in invoke("train", yaml, "-o", tmp_path / "a", "--set", "max_steps=6")
    refused = CliRunner().invoke(app, ["train", str(yaml), "-o", str(tmp_path / "a"), "--set", "hidden=4"])
    assert refused.exit_code == 2 and "hidden: 8 -> 4" in refused.output


def test_meaning_recipe_equals_meaning_train(toy_shared, tmp_path, hash_base):  # noqa: F811
    yaml = tmp_path / "meaning.yaml"
    yaml.write_text("recipe: meaning\noutput_dir: elsewhere\nbase: hash\nlangs: []\npairs: 0\n"
                    "general: [mlqe-pe, ntrex]\ngeneral_langs: []\ndev: [retrieval-dev]\nselect_on: retrieval-dev\n"
                    "batch_size: 8\n")
    said = invoke("train", yaml, "-o", tmp_path / "a", "--set", "max_epochs=3")
    assert "of 3 by retrieval-dev" in said
    invoke("meaning", "train", "-o", tmp_path / "b", "--base", "hash", "--langs", "", "--pairs", 0,
           "--general", "mlqe-pe,ntrex", "--general-langs", "", "--select-on", "retrieval-dev",
           "--dev", "retrieval-dev", "--max-epochs", 3, "--batch-size", 8)
    a, b = (json.loads((tmp_path / d / "train_log.json").read_text()) for d in "ab")
    assert a["config"] == b["config"] and a["best_epoch"] == b["best_epoch"]
    assert [h["train_loss"] for h in a["history"]] == [h["train_loss"] for h in b["history"]]
    unknown = CliRunner().invoke(app, ["train", str(yaml), "--set", "max_steps=3"])
    assert unknown.exit_code == 2 and "unknown meaning setting(s) ['max_steps']" in unknown.output


@pytest.fixture
def static_shared(tmp_path, monkeypatch):
    """A general corpus of NTREX de-en alone: 200 dev pairs, 60 train pairs, in the words of the
    tiny teacher's vocabulary."""
    from tests.commands import parallel, write_text

    write_text(tmp_path / "shared" / "corpora" / "general" / "ntrex" / "de-en.tsv.gz",
               [f"{de}\t{en}" for de, en in parallel("de", 260, seed=11)], gz=True)
    monkeypatch.setenv("XLINGUA_SHARED", str(tmp_path / "shared"))
    monkeypatch.delenv("XLINGUA_DATA", raising=False)


def test_static_recipe_equals_static_train(static_shared, tmp_path, tiny_model_dir):
    yaml = tmp_path / "static.yaml"
    yaml.write_text(f"recipe: static\noutput_dir: elsewhere\nteacher: {tiny_model_dir}\ndim: 8\nmin_count: 1\n"
                    "init: random\nbatch_size: 16\nlr: 0.05\nmax_steps: 9\ndev_every: 2\n")
    said = invoke("train", yaml, "-o", tmp_path / "a", "--set", "max_steps=5", "--set", "log_every=1")
    assert "5 steps in" in said and f"model: {tmp_path / 'a' / 'model'}" in said
    invoke("static", "train", "-o", tmp_path / "b", "--set", f"teacher={tiny_model_dir}", "--set", "dim=8",
           "--set", "min_count=1", "--set", "init=random", "--set", "batch_size=16", "--set", "lr=0.05",
           "--set", "max_steps=5", "--set", "dev_every=2")
    a, b = (torch.load(tmp_path / d / "checkpoint.pt", weights_only=False) for d in "ab")
    assert a["step"] == b["step"] == 5
    assert {k for k in a["config"] if a["config"][k] != b["config"][k]} == {"log_every"}
    assert torch.equal(a["model"]["weight"], b["model"]["weight"])
    assert (tmp_path / "a" / "model" / "vectors.safetensors").read_bytes() == \
        (tmp_path / "b" / "model" / "vectors.safetensors").read_bytes()
    records = [json.loads(l) for l in (tmp_path / "a" / "log.jsonl").read_text().splitlines()]
    assert [r["step"] for r in records if "eval" in r] == [0, 2, 4, 5]
    # a rerun with a larger budget goes on; a setting that fixes the weights is refused, by both commands
    assert "7 steps in" in invoke("train", yaml, "-o", tmp_path / "a", "--set", "max_steps=7")
    for args in (["train", str(yaml), "-o", str(tmp_path / "a"), "--set", "dim=4"],
                 ["static", "train", "-o", str(tmp_path / "b"), "--set", f"teacher={tiny_model_dir}", "--set", "dim=4"]):
        refused = CliRunner().invoke(app, args)
        assert refused.exit_code == 2 and "dim: 8 -> 4" in refused.output
        assert len(refused.output.strip().splitlines()) == 1, refused.output
