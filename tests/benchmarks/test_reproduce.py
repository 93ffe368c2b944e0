"""benchmarks/reproduction's bookkeeping on a tiny model and toy data: every run of a comparison
at equal steps and pairs seen (an unequal plan is refused), objectives that lack an option
blocked before anything runs, a finished run not rerun, a killed run resumed from its checkpoint
without repeating steps, the noise and the verdict rule on hand-made numbers."""
import json
import shutil
from pathlib import Path

import pytest
import yaml

import benchmarks.reproduction as R
from tests.training.conftest import PAIRS, make_tiny_model_dir
from xlingua.io import write_json


# -- the verdict rule -------------------------------------------------------------------------
def test_verdict_rule_on_hand_made_numbers():
    assert R.noise(71.0, 69.5) == pytest.approx(1.5)
    assert R.verdict(3.0, 1.5) == "reproduced"
    assert R.verdict(1.0, 1.5) == "reproduced in direction"        # holds, but within the noise
    assert R.verdict(1.5, 1.5) == "reproduced in direction"        # equal to the noise is not beyond it
    assert R.verdict(0.0, 0.1) == "not reproduced"
    assert R.verdict(-2.0, 0.1) == "not reproduced"
    assert R.verdict(0.4, None) == "reproduced in direction"       # noise not measured: never "reproduced"
    # "A within 2 points of B" is A - B > -2
    assert R.verdict(-1.0, 0.5, threshold=-2.0) == "reproduced"
    assert R.verdict(-1.8, 0.5, threshold=-2.0) == "reproduced in direction"
    assert R.verdict(-2.5, 0.5, threshold=-2.0) == "not reproduced"


def result(**summary):
    return {"complete": True, "tasks": {"t": {"summary": summary, "rows": {}}}}


def test_claim_rows_measure_difference_noise_and_verdict():
    m = R.Measure("t", ("acc",), "accuracy")
    results = {"a": result(acc=80.0), "a_seed1": result(acc=78.5), "b": result(acc=77.0)}
    row = R.claim_row(R.Claim("A beats B", R.Ref("a", m), R.Ref("b", m), 0.0, ("a", "a_seed1")), results)
    assert (row["diff"], row["noise"], row["verdict"]) == (pytest.approx(3.0), pytest.approx(1.5), "reproduced")
    # the noise pair may be another setting than A's: the claim's figure is read there
    results.update(c=result(acc=76.0), c_seed1=result(acc=70.0))
    row = R.claim_row(R.Claim("A beats B", R.Ref("a", m), R.Ref("b", m), 0.0, ("c", "c_seed1")), results)
    assert (row["noise"], row["verdict"]) == (pytest.approx(6.0), "reproduced in direction")
    within = R.claim_row(R.Claim("A within 2 of B", R.Ref("b", m), R.Ref("a", m), -2.0, ("a", "a_seed1")), results)
    assert (within["diff"], within["verdict"]) == (pytest.approx(-3.0), "not reproduced")
    missing = R.claim_row(R.Claim("x", R.Ref("a", m), R.Ref("d", m), 0.0, ("a", "a_seed1")), results)
    assert missing["verdict"] == "not yet run (d)" and "diff" not in missing
    blocked = R.claim_row(R.Claim("x", R.Ref("a", m), R.Ref("d", m)), results, {"d": "no such option"})
    assert blocked["verdict"] == "not run: d: no such option"
    wrong = R.claim_row(R.Claim("x", R.Ref("a", R.Measure("t", ("f1",), "f1")), R.Ref("b", m)), results)
    assert wrong["verdict"] == "error: no figure 'f1' in the result"  # not mistaken for a run still to do
    recorded = R.claim_row(R.Claim("x", R.Fixed(89.5, "doc"), R.Fixed(84.7, "doc")), {})
    assert (recorded["noise"], recorded["verdict"]) == (None, "reproduced in direction")


def test_noise_of_two_figures_of_one_result_is_taken_on_their_difference():
    rows = {"en": {"accuracy": 66.0}, "de": {"accuracy": 60.0}}
    seed0 = {"tasks": {"xnli": {"summary": {"others": 60.0}, "rows": rows}}}
    seed1 = {"tasks": {"xnli": {"summary": {"others": 59.0}, "rows": {**rows, "en": {"accuracy": 67.0}}}}}
    others = R.Measure("xnli", ("others",), "others")
    english = R.Measure("xnli", ("accuracy",), "en", rows=True, only=("en",))
    claim = R.Claim("drop within 4", R.Ref("x", others), R.Ref("x", english), -4.0, ("x", "x1"))
    row = R.claim_row(claim, {"x": seed0, "x1": seed1})
    assert row["diff"] == pytest.approx(-6.0)
    assert row["noise"] == pytest.approx(2.0)  # |(60 - 66) - (59 - 67)|
    assert row["verdict"] == "not reproduced"
    outside = R.Measure("xnli", ("accuracy",), "not en", rows=True, exclude=("en",))
    assert outside.value(seed0) == pytest.approx(60.0)


# -- plans on a tiny model ---------------------------------------------------------------------
@pytest.fixture(scope="module")
def toy(tmp_path_factory):
    """A configs folder with one base recipe over a tiny BERT and a pair file."""
    root = tmp_path_factory.mktemp("toy")
    model = make_tiny_model_dir(root / "model")
    pairs = root / "pairs.tsv"
    pairs.write_text("".join(f"{a}\t{b}\n" for a, b in PAIRS))
    configs = root / "configs"
    configs.mkdir()
    (configs / "base.yaml").write_text(yaml.safe_dump({
        "model": str(model), "output_dir": "unused", "max_steps": 99, "batch_size": 4, "max_seq_length": 16,
        "lr": 1e-3, "warmup_steps": 1, "log_every": 1, "checkpoint_every": 1, "eval_every": 0,
        "tasks": [{"name": "x", "objective": "translation_ranking", "data": {"type": "tsv", "path": str(pairs)}}]}))
    return {"configs": configs, "pairs": str(pairs)}


def toy_run(toy, name, objective="translation_ranking", seed=0, steps=2, batch=4, **options):
    task = {"name": objective, "objective": objective, "data": {"type": "tsv", "path": toy["pairs"]}, "options": options}
    return R.Run(name, "base.yaml", {"max_steps": steps, "batch_size": batch, "tasks": [task], "seed": seed})


def test_a_plan_at_equal_compute_counts_steps_and_pairs_seen(toy, tmp_path):
    runs = [toy_run(toy, "rank"), toy_run(toy, "rank_seed1", seed=1), toy_run(toy, "aligner", "onealigner", layer=1)]
    planned, shared = R.plan(R.Comparison("toy", "toy", runs), tmp_path, toy["configs"])
    rows = [R.plan_row(p.run, p.template) for p in planned]
    assert {(r["steps"], r["batch"], r["pairs_seen"]) for r in rows} == {(2, 4, 8)}
    assert [p.state for p in planned] == ["new"] * 3
    assert shared["max_steps"] == 2 and shared["early_stopping_patience"] == 0 and shared["max_minutes"] == 0
    two_tasks = dict(runs[0].overrides, tasks=runs[0].overrides["tasks"] + runs[2].overrides["tasks"], max_steps=3)
    assert R.task_steps(two_tasks) == {"translation_ranking": 2, "onealigner": 1}  # cycled, one step each in turn


@pytest.mark.parametrize("change", [{"steps": 3}, {"batch": 8}])
def test_a_plan_with_unequal_compute_is_refused(toy, tmp_path, change):
    runs = [toy_run(toy, "rank"), toy_run(toy, "other", **{"seed": 0, **change})]
    key = "max_steps" if "steps" in change else "batch_size"
    with pytest.raises(R.PlanError, match=rf"unequal compute.*{key}: rank=\d+, other=\d+"):
        R.plan(R.Comparison("toy", "toy", runs), tmp_path, toy["configs"])


def test_an_objective_without_the_option_blocks_its_run_before_anything_runs(toy, tmp_path):
    runs = [toy_run(toy, "aligner", "onealigner", layer=1), toy_run(toy, "pooled", "onealigner", pooling="max")]
    planned, _ = R.plan(R.Comparison("toy", "toy", runs), tmp_path, toy["configs"])
    assert planned[0].state == "new" and planned[0].blocked is None
    assert planned[1].state == "blocked" and "pooling" in planned[1].blocked
    with pytest.raises(R.PlanError, match="blocked"):
        R.train_run(planned[1], runner=lambda *a: pytest.fail("a blocked run must not start"))


def test_a_finished_run_is_not_rerun_and_a_killed_one_resumes_without_repeating_steps(toy, tmp_path, monkeypatch):
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    comp = R.Comparison("toy", "toy", [toy_run(toy, "rank")])
    (p,), _ = R.plan(comp, tmp_path, toy["configs"])
    calls = []
    record = R.train_run(p, runner=lambda argv, log: (calls.append(argv), R.execute(argv, log)))
    assert calls[0][:2] == ["xlingua", "train"] and "--resume" not in calls[0]
    assert yaml.safe_load((p.dir / "recipe.yaml").read_text())["output_dir"] == str(p.dir)
    assert (record["steps"], record["pairs_seen"], record["task_steps"]) == (2, 8, {"translation_ranking": 2})
    assert json.loads((p.dir / "done.json").read_text())["recipe_hash"] == R.recipe_hash(p.template)

    (again,), _ = R.plan(comp, tmp_path, toy["configs"])
    assert again.state == "done"
    assert R.train_run(again, runner=lambda *a: pytest.fail("a finished run was started again")) == record

    # killed after its last checkpoint, before the final model: resumed, no step trained twice
    (p.dir / "done.json").unlink()
    import shutil

    shutil.rmtree(p.dir / "final")
    (killed,), _ = R.plan(comp, tmp_path, toy["configs"])
    assert killed.state == "resume"
    calls.clear()
    R.train_run(killed, runner=lambda argv, log: (calls.append(argv), R.execute(argv, log)))
    assert calls[0][-1] == "--resume"
    steps = [r["step"] for r in R.read_log(p.dir) if "loss" in r]
    assert steps == [1, 2]
    assert (p.dir / "done.json").exists() and (p.dir / "final").is_dir()


def test_run_state_new_resume_done_and_a_directory_of_another_recipe(toy, tmp_path):
    recipe = R.derive_recipe(toy_run(toy, "rank"), toy["configs"])
    run_dir = tmp_path / "rank"
    run_dir.mkdir()
    (run_dir / "log.jsonl").write_text('{"step": 1, "loss": 1.0}\n')  # killed before its first checkpoint
    assert R.run_state(run_dir, recipe) == "new"
    (run_dir / "checkpoint.pt").write_bytes(b"")
    assert R.run_state(run_dir, recipe) == "resume"
    assert R.train_command(run_dir, "resume")[-1] == "--resume" and "--resume" not in R.train_command(run_dir, "new")
    (run_dir / "done.json").write_text(json.dumps({"recipe_hash": R.recipe_hash(recipe)}))
    (run_dir / "final").mkdir()
    assert R.run_state(run_dir, recipe) == "done"
    other = R.derive_recipe(toy_run(toy, "rank", seed=5), toy["configs"])
    with pytest.raises(R.PlanError, match="another recipe"):
        R.run_state(run_dir, other)


def test_the_papers_comparisons_run_at_equal_compute_with_a_repeated_seed(tmp_path):
    for name, make in R.COMPARISONS.items():
        comp = make()
        runs, shared = R.plan(comp, tmp_path / name)
        steps = {R.plan_row(p.run, p.template)["pairs_seen"] for p in runs}
        assert len(steps) <= 1, name
        if runs:
            assert shared["max_steps"] >= 600 and shared["model"] == R.START, name
            seeds = {p.run.name: p.template["seed"] for p in runs}
            assert 1 in seeds.values(), f"{name}: no setting repeated with another seed"
        for claim in comp.claims:
            if isinstance(claim.a, R.Ref):
                assert claim.noise_pair or claim.fixed_noise, f"{name}: {claim.name} has no noise beside it"
        evals = {e.name for e in comp.evals} | {j.name for j in comp.jobs}
        for claim in comp.claims:
            for ref in (claim.a, claim.b):
                if isinstance(ref, R.Ref):
                    assert ref.source in evals, f"{name}: {claim.name} reads {ref.source}, which nothing writes"


def fake_cli(calls):
    """A stand-in for the CLI: training writes what `xlingua train` writes (log, final/),
    evaluation writes a result with the run's figure."""
    figure = {"a": 80.0, "a_seed1": 79.0, "b": 75.0}

    def cli(argv, log):
        calls.append(argv[1])
        if argv[1] == "train":
            recipe = yaml.safe_load(open(argv[2]))
            out = Path(argv[argv.index("-o") + 1])
            out.joinpath("final").mkdir(parents=True, exist_ok=True)
            out.joinpath("log.jsonl").write_text("".join(
                json.dumps({"step": s, "task": "translation_ranking", "loss": 1.0, "seconds": s}) + "\n"
                for s in range(1, recipe["max_steps"] + 1)))
        else:
            model = argv[argv.index("-m") + 1]
            run = Path(model).parent.name
            write_json(Path(argv[argv.index("-o") + 1]), {"model": model, "complete": True, "tasks": {
                "t": {"summary": {"acc": figure[run]}, "rows": {}}}})
    return cli


def toy_comparison(toy):
    """Runs a, a_seed1 (the noise) and b, each evaluated; the claim a beats b."""
    m = R.Measure("t", ("acc",), "accuracy")
    return R.Comparison("toy", "toy", [toy_run(toy, "a"), toy_run(toy, "a_seed1", seed=1), toy_run(toy, "b")],
                        [R.Eval(n, n, ("t",)) for n in ("a", "a_seed1", "b")],
                        claims=[R.Claim("a beats b", R.Ref("a", m), R.Ref("b", m), 0.0, ("a", "a_seed1"))])


@pytest.mark.parametrize("precision", ["fp32", "bf16"])
def test_a_comparison_evaluates_once_every_run_is_done_and_a_rerun_runs_nothing(toy, tmp_path, precision):
    """reproduce() end to end with a stand-in for the CLI: training writes what `xlingua train`
    writes (log, final/), evaluation writes a result; the table holds the verdict, in either
    precision (the results are read back under the model spec they were written with)."""
    calls = []
    cli = fake_cli(calls)
    comp = toy_comparison(toy)
    table = R.reproduce("toy", tmp_path, comparison=comp, configs=toy["configs"], runner=cli, echo=lambda *a: None,
                        precision=precision)
    assert calls == ["train", "train", "train", "eval", "eval", "eval"]  # evaluation sets read after all training
    (claim,) = table["claims"]
    assert (claim["diff"], claim["noise"], claim["verdict"]) == (5.0, 1.0, "reproduced")
    assert json.loads((tmp_path / "toy" / "table.json").read_text())["claims"][0]["verdict"] == "reproduced"
    assert "| a beats b | accuracy | 80.00 (a) | 75.00 (b) | +5.00 | > 0 | 1.00 | reproduced |" in \
        (tmp_path / "toy" / "table.md").read_text()
    calls.clear()
    R.reproduce("toy", tmp_path, comparison=comp, configs=toy["configs"], runner=cli, echo=lambda *a: None,
                precision=precision)
    assert calls == []

    # only the runs named: b trains, nothing is evaluated while a and a_seed1 are not done
    calls.clear()
    R.reproduce("toy", tmp_path / "one", comparison=comp, configs=toy["configs"], runner=cli, echo=lambda *a: None,
                only=("b",))
    assert calls == ["train"] and (tmp_path / "one" / "toy" / "b" / "final").is_dir()
    with pytest.raises(R.PlanError, match="no run c"):
        R.reproduce("toy", tmp_path / "one", comparison=comp, configs=toy["configs"], runner=cli,
                    echo=lambda *a: None, only=("c",))

    # dev only: training, no evaluation set read
    calls.clear()
    R.reproduce("toy", tmp_path / "dev", comparison=comp, configs=toy["configs"], runner=cli, echo=lambda *a: None,
                dev_only=True)
    assert calls == ["train"] * 3


def test_records_carry_a_comparison_to_a_new_root_without_weights_or_retraining(toy, tmp_path, monkeypatch):
    """Results kept under --records rebuild the table on a machine that has none of the runs; a
    run whose evaluation is not recorded is trained and read again, and only that one."""
    monkeypatch.chdir(tmp_path)  # relative roots, as the CLI's default: results name the same paths
    calls = []
    cli = fake_cli(calls)
    comp = toy_comparison(toy)
    quiet = dict(comparison=comp, configs=toy["configs"], runner=cli, echo=lambda *a: None, records=Path("kept"))
    first = R.reproduce("toy", Path("runs"), **quiet)
    kept = sorted(str(p.relative_to("kept/toy")) for p in Path("kept/toy").rglob("*") if p.is_file())
    assert kept == ["a/done.json", "a_seed1/done.json", "b/done.json", "claims.png", "eval/a.json",
                    "eval/a_seed1.json", "eval/b.json", "table.json", "table.md"]  # no weights, no logs

    calls.clear()
    shutil.rmtree("runs")  # another machine: nothing of the runs is there
    again = R.reproduce("toy", Path("runs"), **quiet)
    assert calls == [] and not Path("runs/toy/a/final").exists()
    assert again["claims"] == first["claims"] and again["claims"][0]["verdict"] == "reproduced"

    shutil.rmtree("runs")
    Path("kept/toy/eval/b.json").unlink()
    partial = R.reproduce("toy", Path("runs"), table_only=True, **quiet)  # the table so far: b not read
    assert calls == [] and partial["claims"][0]["verdict"].startswith("not yet run")
    assert not Path("runs/toy/b/final").exists()
    R.reproduce("toy", Path("runs"), **quiet)
    assert calls == ["train", "eval"] and Path("runs/toy/b/final").is_dir()
    assert Path("kept/toy/eval/b.json").exists()


def test_a_finished_run_without_weights_is_done_only_once_evaluated(toy, tmp_path):
    comp = toy_comparison(toy)
    recipe = R.derive_recipe(comp.runs[0], toy["configs"])
    run_dir = tmp_path / "a"
    run_dir.mkdir()
    (run_dir / "done.json").write_text(json.dumps({"recipe_hash": R.recipe_hash(recipe)}))
    assert R.run_state(run_dir, recipe) == "new"
    assert R.run_state(run_dir, recipe, evaluated=True) == "done"
    planned, _ = R.plan(comp, tmp_path, toy["configs"])
    assert planned[0].state == "new"
    write_json(tmp_path / "eval" / "a.json", {"model": R.run_model(run_dir), "complete": True, "tasks": {}})
    planned, _ = R.plan(comp, tmp_path, toy["configs"])
    assert planned[0].state == "done"


def test_bf16_trains_every_run_and_reads_every_model_in_bf16(toy, tmp_path):
    comp = R.Comparison("toy", "toy", [toy_run(toy, "a"), toy_run(toy, "b", seed=1)],
                        [R.Eval("start", R.START, ("t",)), R.Eval("a", "a", ("t",))])
    same = R.in_precision(comp, "bf16")
    assert {r.overrides["precision"] for r in same.runs} == {"bf16"}
    runs, _ = R.plan(same, tmp_path / "toy", toy["configs"])
    assert {p.recipe["precision"] for p in runs} == {"bf16"}  # equal compute: one precision for all
    planned = {p.run.name: p for p in runs}
    assert R.eval_model(same.evals[0], planned, "bf16") == "e5-small:bf16"
    assert R.eval_model(R.Eval("default", "bundled", ("t",)), planned, "bf16") == "bundled:bf16"
    assert R.eval_model(same.evals[1], planned, "bf16") == f"bf16:{planned['a'].dir / 'final'}"
    assert R.eval_model(same.evals[1], planned) == str(planned["a"].dir / "final")
    assert R.in_precision(comp, "fp32") is comp
    with pytest.raises(R.PlanError, match="precision must be one of"):
        R.in_precision(comp, "fp16")


def test_the_dueam_tatoeba_measure_reads_a_real_tatoeba_result_leaving_the_training_languages_out(tmp_path):
    """The measure averages the rows the tatoeba task writes, by the keys it writes them under."""
    import numpy as np

    from xlingua.evaluation import runner
    from xlingua.mining.toy import CharNgramEncoder

    root = tmp_path / "bench" / "tatoeba"
    root.mkdir(parents=True)
    for lang in ("deu", "fra", "nld"):
        for side in (lang, "eng"):
            (root / f"tatoeba.{lang}-eng.{side}").write_text(
                "".join(f"{side} sentence {i} {'x' * i}\n" for i in range(5)), encoding="utf-8")
    res = runner.run(CharNgramEncoder(), ["tatoeba:all"], data_dir=str(tmp_path / "bench"), show_progress=False,
                     echo=lambda *_: None)
    (claim_sts, claim_tatoeba) = R.dueam().claims
    outside = claim_tatoeba.a.measure
    rows = res["tasks"]["tatoeba:all"]["rows"]
    expected = np.mean([(rows[l]["cosine xx-en"] + rows[l]["cosine en-xx"]) / 2 for l in ("nld",)])
    assert set(rows) == {"deu", "fra", "nld"}
    assert outside.value(res) == pytest.approx(expected)  # deu and fra are training pairs: left out


def test_an_eval_is_done_only_with_the_options_it_was_planned_with(tmp_path):
    """A result made without `--opt tatoeba.bertscore=true` does not stand for one made with it
    (the options are read back from the command the result records)."""
    out = tmp_path / "e.json"
    write_json(out, {"model": "m", "complete": True,
                     "command": "xlingua eval -m m tatoeba:all -o e.json --opt tatoeba.bertscore=true"})
    assert R.eval_done(out, "m", ("tatoeba.bertscore=true",))
    assert not R.eval_done(out, "m")
    assert not R.eval_done(out, "m", ("tatoeba.bertscore=true", "seed=1"))
    assert not R.eval_done(out, "other", ("tatoeba.bertscore=true",))
    write_json(out, {"model": "m", "complete": True, "command": "xlingua eval -m m tatoeba:all -o e.json"})
    assert R.eval_done(out, "m") and not R.eval_done(out, "m", ("tatoeba.bertscore=true",))


def test_estimates_take_the_rates_measured_on_finished_work(toy, tmp_path):
    comp = R.Comparison("toy", "toy", [toy_run(toy, "a")], [R.Eval("a", "a", ("t",))])
    (p,), _ = R.plan(comp, tmp_path / "toy", toy["configs"])
    assert R.measured_rates([(p.dir, p.recipe)], [], tmp_path) == R.Rates()  # nothing finished: the reference rates
    p.dir.mkdir(parents=True, exist_ok=True)
    (p.dir / "log.jsonl").write_text('{"step": 1, "steps_per_s": 2.0}\n{"step": 2, "steps_per_s": 4.0}\n')
    done = tmp_path / "done.json"
    write_json(done, {"tasks": {"t": {"seconds": 15.0}, "u": {"seconds": 5.0}}})
    rates = R.measured_rates([(p.dir, p.recipe)], [(1000, done)], tmp_path)
    assert rates.sentences_per_s == pytest.approx(50.0)  # 1,000 sentences in 20 s
    ev = p.recipe.get("eval") or {}
    n_evals = (1 + p.recipe["max_steps"] // p.recipe["eval_every"]) if p.recipe.get("eval_every") else 0
    dev = n_evals * 2 * len(ev.get("general_langs", [])) * ev.get("limit", 500)
    # the last logged rate (4 steps/s) stands for the run's steps
    assert R.train_estimate(p.recipe, rates) == pytest.approx(p.recipe["max_steps"] * 0.25 + dev / 50.0)
    assert "1 finished run(s)" in rates.source
    assert R.encoder_passes("tatoeba:all", ("tatoeba.bertscore=true",)) == 2  # tokens encoded a second time
    assert R.encoder_passes("sts", ("tatoeba.bertscore=true",)) == 1 and R.encoder_passes("tatoeba", ()) == 1


def test_before_its_own_work_finishes_a_plan_estimates_with_the_other_comparisons_in_its_precision(toy, tmp_path):
    comp = R.Comparison("toy", "toy", [toy_run(toy, "a")], [R.Eval("a", "a", ("t",))])
    runs, shared = R.plan(comp, tmp_path / "toy", toy["configs"])
    assert "reference 2-core CPU" in R.describe_plan(comp, runs, shared, tmp_path / "toy")
    for name, precision, rate in (("same", "fp32", 4.0), ("other_precision", "bf16", 100.0)):
        d = tmp_path / "other" / name
        d.mkdir(parents=True)
        (d / "recipe.yaml").write_text(yaml.safe_dump({**runs[0].recipe, "precision": precision}))
        (d / "log.jsonl").write_text(json.dumps({"step": 1, "steps_per_s": rate}) + "\n")
        (d / "done.json").write_text("{}")
    (tmp_path / "other" / "unfinished").mkdir()  # no done.json: not a rate
    found, evals = R.other_comparisons_work(tmp_path / "toy", "fp32")
    assert [d.name for d, _ in found] == ["same"] and evals == []
    text = R.describe_plan(comp, runs, shared, tmp_path / "toy")
    assert "the other comparisons under the same root, in the same precision" in text


def test_a_claim_reading_a_and_b_by_different_figures_names_both():
    bs, cos = R.Measure("t", ("bs",), "by BERTScore"), R.Measure("t", ("cos",), "by cosine")
    results = {"a": {"complete": True, "tasks": {"t": {"summary": {"bs": 80.0, "cos": 70.0}, "rows": {}}}},
               "b": {"complete": True, "tasks": {"t": {"summary": {"bs": 60.0, "cos": 75.0}, "rows": {}}}}}
    row = R.claim_row(R.Claim("own similarity", R.Ref("a", bs), R.Ref("b", cos)), results)
    assert row["measure"] == "by BERTScore (A) against by cosine (B)" and row["diff"] == 5.0
    same = R.claim_row(R.Claim("same", R.Ref("a", cos), R.Ref("b", cos)), results)
    assert same["measure"] == "by cosine" and same["diff"] == -5.0


def test_the_claims_plot_shows_each_measured_claim_past_its_threshold_with_its_noise(tmp_path):
    m = R.Measure("t", ("acc",), "accuracy")
    results = {"a": result(acc=80.0), "a_seed1": result(acc=78.5), "b": result(acc=77.0)}
    claims = [R.claim_row(R.Claim("A beats B", R.Ref("a", m), R.Ref("b", m), 0.0, ("a", "a_seed1")), results),
              R.claim_row(R.Claim("B within 2 of A", R.Ref("b", m), R.Ref("a", m), -2.0), results),
              R.claim_row(R.Claim("A beats D", R.Ref("a", m), R.Ref("d", m)), results)]  # D not run: no bar
    table = {"title": "toy", "date": "2026-01-01T00:00:00+00:00", "claims": claims, "runs": [], "figures": {}}
    bars = R.claim_bars(table)
    assert [(b["label"], b["margin"], b["noise"], b["verdict"]) for b in bars] == [
        ("A beats B: accuracy", pytest.approx(3.0), pytest.approx(1.5), "reproduced"),
        ("B within 2 of A: accuracy", pytest.approx(-1.0), None, "not reproduced")]  # -3 - (-2)
    table["title"] = "toy: N²−N negatives"  # written as UTF-8 and read back unchanged
    R.write_table(tmp_path, table)
    assert json.loads((tmp_path / "table.json").read_text(encoding="utf-8")) == table
    assert (tmp_path / "table.md").read_text(encoding="utf-8") == R.table_markdown(table)
    assert (tmp_path / "claims.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert not list(tmp_path.glob("*.partial*"))
