"""benchmarks/meaning.py end to end on a tiny BERT and tiny QE/STS files: one command, every
scorer on the base, the sentence-vector scorers on a meaning model and its snapshots."""
import json

import numpy as np

from tests.benchmark_script import load_benchmark
from tests.encoders.test_hf_encoder import WORDS, tiny_dir  # noqa: F401  (fixture)
from xlingua.data.benchmarks import MLQE_PAIRS
from xlingua.meaning.trainer import MeaningTrainConfig, train_meaning

def _sentence(rng, n):
    return " ".join(rng.choice(WORDS, size=n))


def test_one_command_gives_the_whole_table(tmp_path, tiny_dir, capsys):  # noqa: F811
    rng = np.random.default_rng(0)
    bench = tmp_path / "bench"
    for pair in MLQE_PAIRS:
        src, tgt = pair.split("-")
        for split, n in (("train", 40), ("dev", 12), ("test20", 12)):
            path = bench / "mlqe" / pair / f"{split}.{src}{tgt}.df.short.tsv"
            path.parent.mkdir(parents=True, exist_ok=True)
            rows = [f"{i}\t{_sentence(rng, 4)}\t{_sentence(rng, 3)}\t{rng.normal():.3f}" for i in range(n)]
            path.write_text("index\toriginal\ttranslation\tz_mean\n" + "\n".join(rows) + "\n")
    sts = bench / "sts17_extended"
    sts.mkdir()
    for pair in ("en-en", "en-de"):
        (sts / f"STS.{pair}.txt").write_text(
            "".join(f"{_sentence(rng, 4)}\t{_sentence(rng, 4)}\t{i % 5}\n" for i in range(10)))
    run_dir = tmp_path / "run"
    src, tgt = rng.normal(size=(40, 32)).astype(np.float32), rng.normal(size=(40, 32)).astype(np.float32)
    train_meaning(src, tgt, ["de"] * 40, run_dir, config=MeaningTrainConfig(max_epochs=1, snapshot_every=1),
                  show_progress=False)

    out = tmp_path / "results.json"
    load_benchmark("meaning").main(["--base", str(tiny_dir), "--model", f"m={run_dir}", "--snapshots", f"s={run_dir}",
                  "--data", str(bench), "--limit", "8", "--out", str(out)])
    table = capsys.readouterr().out.splitlines()
    assert table[0].startswith("| model | scorer | QE dev avg | QE en-de |") and table[0].endswith("STS17 cross |")
    labels = [tuple(c.strip() for c in line.split("|")[1:3]) for line in table[2:]]
    base = str(tiny_dir)
    assert labels == [(f"{base} base", s) for s in ("cosine", "inbatch", "bertscore", "bertscore-inbatch", "regressor")] + \
        [(f"{base} {m}", s) for m in ("m", "s@1") for s in ("cosine", "inbatch", "regressor")]
    regressor_row = table[2 + 4].split("|")
    assert regressor_row[-3].strip() == "-" and regressor_row[-2].strip() == "-"  # a QE model: no STS
    saved = json.loads(out.read_text())
    assert saved["base bertscore"]["tasks"]["qe"]["config"]["scorer"] == "bertscore"
    assert saved["base cosine"]["tasks"]["qe dev"]["config"]["split"] == "dev"
    assert saved["s@1 cosine"]["model"].endswith("model_epoch1.pt")
    assert saved["base regressor"]["tasks"]["qe"]["rows"]["en-de"]["n"] == 8


def test_a_rerun_keeps_finished_rows_and_computes_the_rest(tmp_path, tiny_dir, capsys, monkeypatch):  # noqa: F811
    rng = np.random.default_rng(1)
    bench = tmp_path / "bench"
    for pair in MLQE_PAIRS:
        src, tgt = pair.split("-")
        for split in ("dev", "test20"):
            path = bench / "mlqe" / pair / f"{split}.{src}{tgt}.df.short.tsv"
            path.parent.mkdir(parents=True, exist_ok=True)
            rows = [f"{i}\t{_sentence(rng, 4)}\t{_sentence(rng, 3)}\t{rng.normal():.3f}" for i in range(8)]
            path.write_text("index\toriginal\ttranslation\tz_mean\n" + "\n".join(rows) + "\n")
    out = tmp_path / "results.json"
    mod = load_benchmark("meaning")
    args = ["--base", str(tiny_dir), "--data", str(bench), "--no-sts", "--out", str(out)]
    mod.main([*args, "--scorers", "cosine"])
    saved = json.loads(out.read_text())
    saved["base cosine"]["tasks"]["qe"]["summary"]["pearson"] = 0.123  # marks the row as not recomputed
    out.write_text(json.dumps(saved))

    calls = []
    real_run = mod.run
    monkeypatch.setattr(mod, "run", lambda enc, tasks, **kw: calls.append(kw["options"]) or real_run(enc, tasks, **kw))
    mod.main([*args, "--scorers", "cosine,inbatch"])
    assert all("qe.scorer=inbatch" in opts for opts in calls) and len(calls) == 2  # dev and test20 of the new row
    saved = json.loads(out.read_text())
    assert saved["base cosine"]["tasks"]["qe"]["summary"]["pearson"] == 0.123
    assert "base inbatch" in saved

    calls.clear()
    mod.main([*args, "--scorers", "inbatch", "--alpha", "0.3"])  # another setting: computed again
    assert len(calls) == 2
    saved = json.loads(out.read_text())
    assert saved["base cosine"]["tasks"]["qe"]["summary"]["pearson"] == 0.123  # rows not asked for stay
    assert saved["base inbatch"]["benchmark"]["alpha"] == 0.3

    calls.clear()
    mod.main([*args, "--scorers", "cosine", "--recompute"])
    assert len(calls) == 2 and json.loads(out.read_text())["base cosine"]["tasks"]["qe"]["summary"]["pearson"] != 0.123
