"""benchmarks/onealigner_dev.py: its probe runs are reproduce.py's `de` run with only the
scale and the step count changed."""
from tests.benchmark_script import load_benchmark

D = load_benchmark("onealigner_dev")
R = load_benchmark("reproduce")


def test_probe_recipe_differs_from_the_reproduction_run_only_in_scale_and_steps(tmp_path):
    probe = D.recipe(7.0, 200, "bf16", tmp_path / "t20")
    (run,) = [r for r in R.in_precision(R.onealigner(), "bf16").runs if r.name == "de"]
    base = R.derive_recipe(run)
    assert probe["tasks"][0]["options"]["scale"] == 7.0
    assert base["tasks"][0]["options"]["scale"] != 7.0
    assert (probe["max_steps"], probe["eval_every"], probe["output_dir"]) == (200, 200, str(tmp_path / "t20"))
    changed = {k for k in set(probe) | set(base) if probe.get(k) != base.get(k)}
    assert changed == {"tasks", "max_steps", "eval_every", "output_dir"}
    assert probe["precision"] == "bf16" and probe["tasks"][0]["data"] == base["tasks"][0]["data"]
