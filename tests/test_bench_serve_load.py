"""benchmarks/serve_load.py on a tiny setting: a tiny model, 2 clients, 2-second runs, the kill
-9 and restart, the sentence-transformers baseline; every answer clear, none lost."""
from __future__ import annotations

import runpy
from pathlib import Path

BENCH = Path(__file__).resolve().parents[1] / "benchmarks" / "serve_load.py"


def test_load_and_fault_benchmark_runs_small(tmp_path):
    from tests.training.conftest import make_tiny_model_dir

    model = make_tiny_model_dir(tmp_path / "tiny")
    sents = tmp_path / "sents.txt"
    sents.write_text("".join(f"the cat {w} the dog {i}\n" for i in range(40) for w in ("runs", "eats")))
    main = runpy.run_path(str(BENCH))["main"]
    report = main(["--model", str(model), "--clients", "2", "--seconds", "2", "--sentences", str(sents),
                   "--max-items", "16", "--baselines", "infinity-emb", "sentence-transformers",
                   "--out", str(tmp_path / "out")])
    assert report["inprocess_texts_per_s"] > 0 and report["xlingua_valid"]["texts_per_s"] > 0
    for run in ("xlingua_valid", "xlingua_mixed", "xlingua_fault"):
        assert report[run]["unclear_answers"] == 0, report[run]
    mixed = report["xlingua_mixed"]["codes"]
    assert set(mixed) <= {200, 400, 413, 422} and 200 in mixed
    fault = report["xlingua_fault"]
    assert fault["down_s"] > 0 and fault["requests_ok"] > 0
    assert set(fault["codes"]) <= {200, 400, 413, 422}
    assert "error" in report["infinity-emb"] or report["infinity-emb"]["texts_per_s"] > 0
    assert report["sentence-transformers"]["texts_per_s"] > 0
    assert "| xlingua_fault |" in (tmp_path / "out" / "serve_load.md").read_text()
