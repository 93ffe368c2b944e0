"""benchmarks/gate.py on hand-made eval results: a candidate equal to today's passes, a Tatoeba
language more than 2 points down fails it, and with --dev the groups `xlingua extend` teaches may
not get worse while no other language of the dev reports rises beyond the allowance."""
import json

import pytest

from tests.benchmark_script import load_benchmark

G = load_benchmark("gate")


def eval_result(model, deu=90.0, xnli=60.0):
    langs = {"deu": deu, "fra": 91.0}
    rows = {k: {"margin xx-en": v, "margin en-xx": v} for k, v in langs.items()}
    return {"model": model, "tasks": {
        "tatoeba": {"rows": rows}, "tatoeba:all": {"rows": rows},
        "sts": {"summary": {"sts17_extended cross-lingual spearman": 76.0,
                            "sts17_extended monolingual spearman": 81.5}},
        "bucc": {"summary": {"zh-en f1 best": 93.0}}, "qe": {"summary": {"pearson": 0.37}},
        "xnli": {"summary": {"accuracy": xnli}}}}


def dev_report(model, **errors):
    return {"model": model, "report": {l: {"pairs": 500, "xx->en": e, "en->xx": e} for l, e in errors.items()}}


def run_gate(tmp_path, monkeypatch, capsys, now, cand, dev=None):
    files = []
    for i, doc in enumerate([now, cand, *(dev or [])]):
        files.append(tmp_path / f"{i}.json")
        files[-1].write_text(json.dumps(doc), encoding="utf-8")
    argv = ["gate.py", str(files[0]), str(files[1])] + (["--dev", str(files[2]), str(files[3])] if dev else [])
    monkeypatch.setattr("sys.argv", argv)
    with pytest.raises(SystemExit) as exit_:
        G.main()
    return exit_.value.code, capsys.readouterr().out


def test_equal_candidate_passes_and_a_language_drop_fails(tmp_path, monkeypatch, capsys):
    code, out = run_gate(tmp_path, monkeypatch, capsys, eval_result("now"), eval_result("cand"))
    assert code == 0 and "verdict: passes the gate" in out
    code, out = run_gate(tmp_path, monkeypatch, capsys, eval_result("now"), eval_result("cand", deu=87.5))
    assert code == 1 and "below now: deu -2.5" in out
    code, out = run_gate(tmp_path, monkeypatch, capsys, eval_result("now"), eval_result("cand", xnli=57.0))
    assert code == 1 and "| XNLI zero-shot accuracy (15 languages) | 60.0 | **57.0** (below the gate) | 57.2 |" in out


def test_dev_rows_of_the_new_languages(tmp_path, monkeypatch, capsys):
    now = dev_report("bundled", dz=78.0, bo=56.0, **{"ace-Arab": 64.0}, ar=1.0, de=0.5)
    better = dev_report("cand", dz=40.0, bo=30.0, **{"ace-Arab": 30.0}, ar=2.5, de=0.5)
    code, out = run_gate(tmp_path, monkeypatch, capsys, eval_result("now"), eval_result("cand"), [now, better])
    assert code == 0, out
    assert "| dev retrieval error, tibetan (dz, bo), lower is better | 67.0 | **35.0** | 67.0 (not above) | 30.0 |" in out
    assert "| dev retrieval error, arabic-script (ace-Arab), lower is better | 64.0 | **30.0** |" in out
    assert "more than 2 points above now: none" in out  # ar up 1.5: within the allowance
    worse = dev_report("cand", dz=70.0, bo=66.0, **{"ace-Arab": 30.0}, ar=3.5, de=0.5)
    code, out = run_gate(tmp_path, monkeypatch, capsys, eval_result("now"), eval_result("cand"), [now, worse])
    assert code == 1
    assert "| 67.0 | **68.0** (above the gate) |" in out and "more than 2 points above now: ar +2.5" in out
    code, _ = run_gate(tmp_path, monkeypatch, capsys, eval_result("now"), eval_result("cand"),
                       [now, dev_report("cand", dz=1.0, **{"ace-Arab": 1.0}, ar=1.0, de=1.0)])
    assert code.startswith("the two dev reports cover different languages (bo)")
