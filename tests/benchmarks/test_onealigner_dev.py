"""benchmarks/onealigner_dev.py: its probe runs are reproduce.py's `de` run with only the
scale and the step count changed."""
from benchmarks.reproduction.bookkeeping import derive_recipe, in_precision
from benchmarks.reproduction.papers import onealigner
from tests.benchmark_script import load_benchmark

D = load_benchmark("onealigner_dev")


def test_probe_recipe_differs_from_the_reproduction_run_only_in_scale_and_steps(tmp_path):
    probe = D.recipe(7.0, 200, "bf16", tmp_path / "t20")
    (run,) = [r for r in in_precision(onealigner(), "bf16").runs if r.name == "de"]
    base = derive_recipe(run)
    assert probe["tasks"][0]["options"]["scale"] == 7.0
    assert base["tasks"][0]["options"]["scale"] != 7.0
    assert (probe["max_steps"], probe["eval_every"], probe["output_dir"]) == (200, 200, str(tmp_path / "t20"))
    changed = {k for k in set(probe) | set(base) if probe.get(k) != base.get(k)}
    assert changed == {"tasks", "max_steps", "eval_every", "output_dir"}
    assert probe["precision"] == "bf16" and probe["tasks"][0]["data"] == base["tasks"][0]["data"]


def test_dev_read_scores_each_language_by_bertscore_and_by_pooled_cosine(monkeypatch):
    import numpy as np

    xx, en = ["a b", "c d", "e f"], ["b a", "d c", "f e"]
    pooled = {"a b": [0, 1, 0], "c d": [1, 0, 0], "e f": [0, 0, 1], "b a": [1, 0, 0], "d c": [0, 1, 0],
              "f e": [0, 0, 1]}  # pooled vectors swap pairs 0 and 1; the words match exactly

    class Toy:
        def encode(self, texts):
            return np.array([pooled[t] for t in texts], dtype=np.float32)

        def encode_tokens(self, texts, content_only=False):
            vocab = "abcdef"
            return [np.eye(6, dtype=np.float32)[[vocab.index(w) for w in t.split()]] for t in texts]

    monkeypatch.setattr(D, "load_encoder", lambda spec: Toy())
    monkeypatch.setattr(D, "general_dev_pairs", lambda langs, limit: {"de": (xx, en), "fr": (xx, en)})
    got = D.dev_read("toy", ["de", "fr"], 200)
    assert got["bertscore-inbatch"] == 100.0
    assert abs(got["cosine"] - 100 / 3) < 1e-9
