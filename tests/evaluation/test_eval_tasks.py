"""Tasks end to end on tiny benchmark files with a lookup encoder whose answers are known,
the result JSON / markdown, --compare and the CLI."""
import json

import numpy as np
import pytest
from typer.testing import CliRunner

from eval_toys import LookupEncoder, one_hot
from xlingua.cli import app
from xlingua.encoders.cache import CachedEncoder
from xlingua.evaluation import report, runner
from xlingua.evaluation.registry import get_task, task_names
from xlingua.mining.toy import CharNgramEncoder


def _write(path, lines):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(l + "\n" for l in lines), encoding="utf-8")


@pytest.fixture
def toy(tmp_path):
    """Tatoeba deu (4 pairs, all right) and fra (4 pairs, fra #3 means what #2 means)."""
    root = tmp_path / "bench"
    table = {}
    for lang in ("deu", "fra"):
        xx = [f"{lang} s{i}" for i in range(4)]
        en = [f"en {lang} s{i}" for i in range(4)]
        _write(root / "tatoeba" / f"tatoeba.{lang}-eng.{lang}", xx)
        _write(root / "tatoeba" / f"tatoeba.{lang}-eng.eng", en)
        for i in range(4):
            table[xx[i]] = one_hot(i, 8)
            table[en[i]] = one_hot(i, 8)
    table["fra s3"] = one_hot(2, 8)
    # STS2017-extended en-de: s1 = e0, s2 at cosine c_i; gold 1..5 -> Spearman 80 (see metrics test)
    rows = []
    for i, c in enumerate([0.1, 0.5, 0.3, 0.9, 0.7]):
        a, b = f"en sentence {i}", f"de Satz {i}"
        table[a] = one_hot(0, 8)
        table[b] = [c, float(np.sqrt(1 - c * c))] + [0.0] * 6
        rows.append(f"{a}\t{b}\t{i + 1}")
    _write(root / "sts17_extended" / "STS.en-de.txt", rows)
    return root, LookupEncoder(table, dim=8)


def test_tatoeba_known_accuracies(toy):
    root, enc = toy
    res = runner.run(enc, ["tatoeba"], data_dir=str(root), show_progress=False, echo=lambda *_: None)
    t = res["tasks"]["tatoeba"]
    assert t["config"]["languages"] == ["deu", "fra"]
    # fra: row 3 (= meaning 2) retrieves en 2: 3/4. Column 3 (en s3) matches no fra vector
    # (all cosines 0), argmax falls to row 0: 3/4; column 2 ties rows 2 and 3 -> row 2, right.
    assert t["rows"]["fra"]["cosine xx-en"] == pytest.approx(75.0)
    assert t["rows"]["fra"]["cosine en-xx"] == pytest.approx(75.0)
    assert t["rows"]["fra"]["err cosine xx-en"] == pytest.approx(25.0)
    assert t["rows"]["deu"]["margin xx-en"] == pytest.approx(100.0)
    assert t["summary"]["acc cosine xx-en"] == pytest.approx(87.5)
    assert t["summary"]["err cosine xx-en"] == pytest.approx(12.5)
    assert any("absent from the data" in n for n in t["notes"])


class WordTokens(LookupEncoder):
    """Pooled vectors from the table; token embeddings one-hot per word (BERTScore 1 between
    sentences of the same words, ~0 between sentences sharing none)."""

    def encode_tokens(self, texts, layer=None, content_only=False):
        vocab = sorted({w for t in texts for w in t.split()} | {"a", "b", "c", "d", "e", "f"})
        return [np.eye(len(vocab), dtype=np.float32)[[vocab.index(w) for w in t.split()]] for t in texts]


def test_tatoeba_bertscore_retrieves_by_tokens(tmp_path):
    # pooled vectors swap pairs 0 and 1 (cosine gets 1 of 3 right); the words match exactly
    xx, en = ["a b", "c d", "e f"], ["b a", "d c", "f e"]
    _write(tmp_path / "tatoeba" / "tatoeba.deu-eng.deu", xx)
    _write(tmp_path / "tatoeba" / "tatoeba.deu-eng.eng", en)
    table = {xx[0]: one_hot(1, 3), xx[1]: one_hot(0, 3), xx[2]: one_hot(2, 3)}
    table.update({e: one_hot(i, 3) for i, e in enumerate(en)})
    enc = WordTokens(table, dim=3)
    res = runner.run(enc, ["tatoeba:deu"], data_dir=str(tmp_path), options=["tatoeba.bertscore=true"],
                     show_progress=False, echo=lambda *_: None)["tasks"]["tatoeba:deu"]
    assert res["rows"]["deu"]["cosine xx-en"] == pytest.approx(100 / 3)
    for method in ("bertscore", "bertscore-inbatch"):
        assert res["rows"]["deu"][f"{method} xx-en"] == pytest.approx(100.0)
        assert res["summary"][f"acc {method} en-xx"] == pytest.approx(100.0)
    assert res["config"]["bertscore"] is True
    plain = runner.run(enc, ["tatoeba:deu"], data_dir=str(tmp_path), show_progress=False,
                       echo=lambda *_: None)["tasks"]["tatoeba:deu"]
    assert "acc bertscore xx-en" not in plain["summary"]
    with pytest.raises(ValueError, match="gives no token embeddings"):
        runner.run(LookupEncoder(table, dim=3), ["tatoeba:deu"], data_dir=str(tmp_path),
                   options=["tatoeba.bertscore=1"], show_progress=False, echo=lambda *_: None)


def test_limit_and_subset_and_options(toy):
    root, enc = toy
    res = runner.run(enc, ["tatoeba:fra"], data_dir=str(root), limit=3, options=["alpha=0.25"],
                     show_progress=False, echo=lambda *_: None)
    t = res["tasks"]["tatoeba:fra"]
    assert list(t["rows"]) == ["fra"] and t["rows"]["fra"]["n"] == 3
    assert t["config"]["alpha"] == 0.25
    assert t["rows"]["fra"]["cosine xx-en"] == pytest.approx(100.0)  # the bad pair is cut off
    with pytest.raises(ValueError, match="no selected task takes option"):
        runner.run(enc, ["tatoeba"], data_dir=str(root), options=["bogus=1"], echo=lambda *_: None)
    with pytest.raises(ValueError, match="expected a float"):
        runner.run(enc, ["tatoeba"], data_dir=str(root), options=["tatoeba.alpha=high"], echo=lambda *_: None)


def test_sts_known_spearman(toy):
    root, enc = toy
    res = runner.run(enc, ["sts:sts17_extended"], data_dir=str(root), show_progress=False, echo=lambda *_: None)
    t = res["tasks"]["sts:sts17_extended"]
    assert t["rows"]["sts17_extended.en-de"]["spearman"] == pytest.approx(80.0)
    assert t["summary"]["sts17_extended cross-lingual spearman"] == pytest.approx(80.0)


def test_missing_benchmark_file_names_what_and_where(toy, tmp_path):
    root, enc = toy
    with pytest.raises(FileNotFoundError, match=r"WMT20 QE en-de test20 not found: looked for .*mlqe/en-de/test20\.ende"):
        runner.run(enc, ["qe"], data_dir=str(root), echo=lambda *_: None)
    with pytest.raises(ValueError, match="unknown task 'tatoba'"):
        runner.run(enc, ["tatoeba", "tatoba"], data_dir=str(root), echo=lambda *_: None)


def test_json_markdown_and_compare(toy, tmp_path):
    root, enc = toy
    out = tmp_path / "a.json"
    a = runner.run(CachedEncoder(enc, cache_dir=tmp_path / "c"), ["tatoeba", "sts:sts17_extended"],
                   data_dir=str(root), output=str(out), show_progress=False, echo=lambda *_: None)
    assert json.loads(out.read_text())["tasks"]["tatoeba"]["summary"] == a["tasks"]["tatoeba"]["summary"]
    assert a["tasks"]["tatoeba"]["seconds"] >= 0
    md = report.to_markdown(a)
    assert "### tatoeba (" in md and "| acc cosine xx-en | 87.5 |" in md
    b = json.loads(json.dumps(a))
    b["model"] = "other"
    b["tasks"]["tatoeba"]["summary"]["acc cosine xx-en"] = 90.0
    table = report.compare(a, b)
    assert "| tatoeba: acc cosine xx-en | 87.5 | 90.0 | +2.5 |" in table


def test_reference_figures_are_well_formed_and_shown():
    refs = report.references()
    assert refs, "no reference figures found"
    names = set(task_names())
    for r in refs:
        assert r["task"] in names, r
        assert r["source"] and r["model"] and isinstance(r["value"], (int, float)), r
    some = refs[0]
    res = {"task": some["task"], "seconds": 1.0, "summary": {} if some.get("row") else {some["figure"]: 1.0},
           "rows": {some["row"]: {some["figure"]: 1.0}} if some.get("row") else {}, "notes": [], "config": {}}
    assert some["source"] in "\n".join(report.task_markdown(some["task"], res))


def test_registry_lists_every_task_with_metadata():
    assert task_names() == ["bucc", "classify", "eigen", "plot", "qe", "retrieval", "sts", "tatoeba", "xnli"]
    for name in task_names():
        t = get_task(name)
        assert t.name == name and t.description and t.data


def test_a_new_task_needs_only_its_own_file(monkeypatch):
    from xlingua.evaluation import registry
    from xlingua.evaluation.base import Task, TaskResult

    monkeypatch.setattr(registry, "_TASKS", dict(registry._TASKS))

    @registry.register
    class Echo(Task):
        name, description, data = "echo", "returns its option", "-"
        default_options = {"value": 1.0}

        def evaluate(self, ctx):
            return TaskResult(self.name, summary={"value": self.options(ctx)["value"]})

    assert "echo" in task_names()
    res = runner.run(CharNgramEncoder(dim=8), ["echo"], options=["value=2.5"], show_progress=False,
                     echo=lambda *_: None)
    assert res["tasks"]["echo"]["summary"] == {"value": 2.5}
    with pytest.raises(ValueError, match="two tasks named 'echo'"):
        @registry.register
        class Other(Task):
            name = "echo"


def test_cli_list_and_compare(tmp_path):
    cli = CliRunner()
    out = cli.invoke(app, ["eval", "--list"])
    assert out.exit_code == 0 and "tatoeba" in out.output and "options: subset=tatoeba36" in out.output
    res = {"model": "m", "encoder": "m", "fingerprint": "f", "dim": 2, "limit": None, "tasks": {
        "qe": {"task": "qe", "seconds": 2.0, "summary": {"pearson": 0.25}, "rows": {}, "notes": [], "config": {}}}}
    (tmp_path / "a.json").write_text(json.dumps(res))
    res["tasks"]["qe"]["summary"]["pearson"] = 0.30
    (tmp_path / "b.json").write_text(json.dumps(res))
    out = cli.invoke(app, ["eval", "--compare", str(tmp_path / "a.json"), str(tmp_path / "b.json")])
    assert out.exit_code == 0 and "| qe: pearson | 0.250 | 0.300 | +0.050 |" in out.output
    out = cli.invoke(app, ["eval", "--compare", str(tmp_path / "a.json"), str(tmp_path / "missing.json")])
    assert out.exit_code == 2 and out.output == f"error: {tmp_path / 'missing.json'}: no such file\n"
    out = cli.invoke(app, ["eval"])
    assert out.exit_code == 2


def test_a_result_cut_short_says_so(toy, tmp_path):
    """The JSON is rewritten after every task: one cut by a kill is marked incomplete."""
    root, enc = toy
    out = tmp_path / "a.json"
    seen = []

    def echo(msg):  # called once the first task is in the JSON: stop there, like a kill
        seen.append(json.loads(out.read_text()) if out.exists() else None)

    runner.run(enc, ["tatoeba", "sts:sts17_extended"], data_dir=str(root), output=str(out),
               show_progress=False, echo=echo)
    partial = next(r for r in seen if r)
    assert partial["complete"] is False and list(partial["tasks"]) == ["tatoeba"]
    assert "**incomplete**" in report.to_markdown(partial)
    assert "warning**: A is incomplete" in report.compare(partial, json.loads(out.read_text()))
    assert json.loads(out.read_text())["complete"] is True


@pytest.mark.parametrize("limit", [-5, 0])
def test_limit_below_one_is_an_error(toy, limit):
    root, enc = toy
    with pytest.raises(ValueError, match=f"--limit must be at least 1, got {limit}"):
        runner.run(enc, ["tatoeba"], data_dir=str(root), limit=limit, echo=lambda *_: None)
    res = CliRunner().invoke(app, ["eval", "tatoeba", "--limit", str(limit), "-m", "/no/such/model"])
    assert res.exit_code == 2 and res.output == f"error: --limit must be at least 1, got {limit}\n"


def test_benchmark_file_with_bad_utf8_names_file_and_line(toy):
    root, enc = toy
    path = root / "sts17_extended" / "STS.en-de.txt"
    path.write_bytes(path.read_bytes() + b"caf\xe9\tx\t1\n")
    n = path.read_bytes().count(b"\n")
    with pytest.raises(ValueError, match=rf"STS\.en-de\.txt:{n}: invalid UTF-8 at byte 3 of the line$"):
        runner.run(enc, ["sts:sts17_extended"], data_dir=str(root), echo=lambda *_: None)


def test_subset_option_is_all_or_comma_separated_names():
    from xlingua.evaluation.base import Task

    assert Task.subset({"subset": "all"}, ("a", "b", "c")) == ("a", "b", "c")
    assert Task.subset({"subset": "b, c"}, ("a", "b", "c")) == ("b", "c")


def test_the_result_records_the_command_that_made_it():
    from xlingua.evaluation.runner import invocation

    assert invocation(["/venv/bin/xlingua", "eval", "-m", "bundled", "sts"]) == "xlingua eval -m bundled sts"
    assert invocation(["/src/xlingua/cli.py", "eval", "sts"]) == "xlingua eval sts"  # python -m xlingua.cli
    assert invocation(["/src/xlingua/cli/__main__.py", "eval", "sts"]) == "xlingua eval sts"
    assert invocation(["benchmarks/meaning.py", "--base", "xlingua-small"]) == \
        "python benchmarks/meaning.py --base xlingua-small"
