"""benchmarks/own_model_dev.py's inputs: a run directory stands for its training config (the
recipe on the first line of its log), and the mix starts from a model directory as it is."""
import json

import pytest

from tests.benchmark_script import load_benchmark

D = load_benchmark("own_model_dev")

RECIPE = {"model": "runs/x/start", "output_dir": "runs/x", "max_steps": 7, "lr": 1e-4,
          "tasks": [{"name": "new", "objective": "laser3", "data": {"type": "general", "langs": ["dz"]}}],
          "eval": {"general_langs": ["dz", "de"], "limit": 500, "select": "mean"}}


def test_a_run_directory_gives_the_recipe_its_log_recorded(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    lines = [{"step": 0, "config": RECIPE}, {"step": 10, "loss": 0.5}]
    (run / "log.jsonl").write_text("".join(json.dumps(l) + "\n" for l in lines))
    cfg = D.recipe(str(run))
    assert (cfg.model, cfg.max_steps, cfg.lr) == ("runs/x/start", 7, 1e-4)
    assert [t.name for t in cfg.tasks] == ["new"] and cfg.eval.general_langs == ["dz", "de"]


def test_a_run_without_a_recorded_config_is_one_error_naming_its_log(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    (run / "log.jsonl").write_text('{"step": 10, "loss": 0.5}\n')
    with pytest.raises(SystemExit, match=r"run/log.jsonl: no recorded config"):
        D.recipe(str(run))
    with pytest.raises(SystemExit, match=r"log.jsonl: no recorded config"):
        D.recipe(str(tmp_path))  # no log at all


def test_the_mix_starts_from_a_model_directory_as_it_is(tmp_path):
    assert D.start_dir(f"{tmp_path}:torch") == tmp_path


def test_the_mix_rule_names_each_figure_below_the_start():
    start = {"retrieval_mean": 67.0, "stsb_multi_mt_dev": 83.9, "qe_dev": 0.3654, "sts_de": 84.5, "sts_zh": 84.6}
    holds = {"retrieval_mean": 86.6, "stsb_multi_mt_dev": 84.4, "qe_dev": 0.3665, "sts_de": 82.6, "sts_zh": 85.0}
    assert D.shortfalls(holds, start) == [] and D.holds_start(holds, start)  # de 1.9 down: within 2
    short = {**holds, "qe_dev": 0.3609, "sts_zh": 82.5}
    assert D.shortfalls(short, start) == ["qe_dev 0.361 < 0.365", "sts_zh 82.5 < 84.6 - 2"]
    assert not D.holds_start(short, start)


def test_a_model_beats_the_recipe_only_above_it_on_every_dev_figure(capsys):
    recipe = {"retrieval_mean": 99.0, "stsb_multi_mt_dev": 82.0, "qe_dev": 0.36, "sts_de": 80.0}
    start = {"retrieval_mean": 98.0, "stsb_multi_mt_dev": 83.0, "qe_dev": 0.25, "sts_de": 81.0}
    better = {"retrieval_mean": 99.2, "stsb_multi_mt_dev": 82.5, "qe_dev": 0.37, "sts_de": 80.5}
    mixed = {**better, "qe_dev": 0.35}
    assert D.beats(better, recipe) and not D.beats(mixed, recipe) and not D.beats(recipe, recipe)
    D._print({"start": start, "distill+rank+sts": recipe, "runs/a": better, "runs/b": mixed,
              "chosen_alpha": None}, against="distill+rank+sts")
    out = capsys.readouterr().out
    assert "above distill+rank+sts on all three" in out
    assert "| runs/a |" in out and out.split("| runs/a |")[1].splitlines()[0].endswith("| yes |")
    assert out.split("| runs/b |")[1].splitlines()[0].endswith("| no |")
    assert out.split("| distill+rank+sts |")[1].splitlines()[0].endswith("| - |")
