"""Every command that reads text files takes pipes: real FIFOs fed once (tests/fifo.py), `-`
for one input, and bash's <(...); bad input in a pipe is one line naming it as typed; score and
align name their columns in a header row unless --no-header."""
from __future__ import annotations

import gzip
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

import numpy as np
import pytest
from typer.testing import CliRunner

from tests.cli_run import SRC
from tests.fifo import fifos
from xlingua.cli import app

EN = ["the red cat", "a dog", "the house is big", "one tree", "blue sky"]
DE = ["die rote katze", "der hund", "das haus ist groß", "ein baum", "blauer himmel"]


def _data(lines) -> bytes:
    return "".join(f"{t}\n" for t in lines).encode()


def _invoke(args, input=None):
    return CliRunner().invoke(app, [str(a) for a in args], input=input)


def _error(res) -> str:
    """The one error line of a failed command (embed's progress bar may have drawn a line first)."""
    errors = [line for line in res.output.splitlines() if line.startswith("error: ")]
    assert res.exit_code == 2 and len(errors) == 1 and res.output.splitlines()[-1] == errors[0], res.output
    return errors[0]


@pytest.fixture(autouse=True)
def _own_tmp(tmp_path, monkeypatch):
    """Temporary copies go under tmp_path/tmp, where a test can see that none is left."""
    (tmp_path / "tmp").mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    yield
    assert os.listdir(tmp_path / "tmp") == []


def _files(tmp_path):
    a, b = tmp_path / "s.en", tmp_path / "s.de"
    a.write_bytes(_data(EN))
    b.write_bytes(_data(DE))
    return a, b


def test_score_reads_a_fifo_and_names_its_columns(tmp_path, tiny_model):
    en, de = _files(tmp_path)
    plain = _invoke(["score", de, en, "-o", tmp_path / "plain.tsv", "-m", tiny_model, "--margin", "--no-header"])
    assert plain.exit_code == 0, plain.output
    rows = (tmp_path / "plain.tsv").read_text().splitlines()
    assert len(rows) == len(EN) and all(len(r.split("\t")) == 2 for r in rows)
    with fifos(tmp_path, _data(EN)) as (fifo,):
        res = _invoke(["score", de, fifo, "-o", tmp_path / "out.tsv", "-m", tiny_model, "--margin"])
    assert res.exit_code == 0, res.output
    assert (tmp_path / "out.tsv").read_text().splitlines() == ["cosine\tmargin", *rows]


def test_score_takes_stdin_for_one_side(tmp_path, tiny_model):
    en, de = _files(tmp_path)
    assert _invoke(["score", de, en, "-o", tmp_path / "plain.tsv", "-m", tiny_model]).exit_code == 0
    res = _invoke(["score", "-", en, "-o", tmp_path / "out.tsv", "-m", tiny_model], input=_data(DE))
    assert res.exit_code == 0, res.output
    assert (tmp_path / "out.tsv").read_text() == (tmp_path / "plain.tsv").read_text()
    assert (tmp_path / "out.tsv").read_text().startswith("cosine\n")


def test_score_bad_line_in_a_fifo_is_one_line_naming_it(tmp_path, tiny_model):
    en, _ = _files(tmp_path)
    with fifos(tmp_path, b"die katze\nb\x00se\n") as (bad,):
        res = _invoke(["score", en, bad, "-o", tmp_path / "out.tsv", "-m", tiny_model])
    assert res.exit_code == 2
    assert res.output.splitlines() == [f"error: {bad}:2: NUL byte in line (binary file?)"]
    assert not (tmp_path / "out.tsv").exists()


def test_two_stdins_are_refused_in_one_line(tmp_path, tiny_model):
    for args in (["score", "-", "-"], ["align", "-", "-"]):
        res = _invoke([*args, "-o", tmp_path / "out.tsv", "-m", tiny_model], input=b"x\n")
        assert res.exit_code == 2
        assert res.output.splitlines() == ["error: - (stdin) can stand for one input only, and is given 2 "
                                           "times; give the others as files or as <(command)"]


def test_align_reads_two_fifos_with_and_without_header(tmp_path, tiny_model):
    from xlingua.align import HEADER

    en, de = _files(tmp_path)
    res = _invoke(["align", en, de, "-o", tmp_path / "plain.tsv", "-m", tiny_model, "--no-split"])
    assert res.exit_code == 0, res.output
    plain = (tmp_path / "plain.tsv").read_text()
    assert plain.startswith(HEADER) and HEADER == "a_start\ta_end\tb_start\tb_end\tscore\ta_text\tb_text\n"
    with fifos(tmp_path, _data(EN), _data(DE)) as (a, b):
        res = _invoke(["align", a, b, "-o", tmp_path / "out.tsv", "-m", tiny_model, "--no-split", "--no-header"])
    assert res.exit_code == 0, res.output
    assert (tmp_path / "out.tsv").read_text() == plain[len(HEADER):]


def test_embed_reads_a_fifo(tmp_path, tiny_model):
    en, _ = _files(tmp_path)
    assert _invoke(["embed", en, "-o", tmp_path / "plain.npy", "-m", tiny_model]).exit_code == 0
    with fifos(tmp_path, gzip.compress(_data(EN))) as (fifo,):
        res = _invoke(["embed", fifo, "-o", tmp_path / "out.npy", "-m", tiny_model])
    assert res.exit_code == 0, res.output
    np.testing.assert_array_equal(np.load(tmp_path / "out.npy"), np.load(tmp_path / "plain.npy"))
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == []


def test_embed_shards_from_a_pipe_resume_on_the_same_bytes(tmp_path, monkeypatch):
    from tests.test_embed_job import HashEncoder, _expected
    from xlingua.embed import load_embeddings
    from xlingua.encoders import loading

    lines = [f"sentence number {i}" for i in range(10)]
    out = tmp_path / "shards"
    args = ["-o", out, "--shard-size", "3", "--batch-size", "3"]
    monkeypatch.setattr(loading, "load_encoder", lambda spec: HashEncoder(fail_after=2))
    with fifos(tmp_path, _data(lines), names=["p1"]) as (fifo,):
        assert _invoke(["embed", fifo, *args]).exit_code != 0  # dies on the third shard
    assert sorted(p.name for p in out.glob("shard-*.npy")) == ["shard-00000.npy", "shard-00001.npy"]
    job = json.loads((out / "job.json").read_text())
    assert job["inputs"] == [{"stream": True, "size": len(_data(lines)), "blake2b": job["inputs"][0]["blake2b"]}]

    enc = HashEncoder()
    monkeypatch.setattr(loading, "load_encoder", lambda spec: enc)
    res = _invoke(["embed", "-", *args], input=_data(lines))  # the same bytes, now on stdin
    assert res.exit_code == 0, res.output
    assert res.stderr.splitlines()[-1] == f"wrote 10 x 8 float32 -> {out} (2 shards reused)"
    assert enc.seen == lines[6:]
    np.testing.assert_array_equal(load_embeddings(out), _expected(lines))
    assert not any(p.name.startswith(".") for p in out.iterdir())  # the copy is gone

    with fifos(tmp_path, _data(lines[:9]), names=["p2"]) as (fifo,):
        res = _invoke(["embed", fifo, *args])
    assert _error(res) == (f"error: {out} holds a different job (other inputs, model or settings); "
                           "remove it or choose another output")


def test_a_copy_that_would_fill_the_disk_stops_in_one_line(tmp_path, tiny_model, monkeypatch):
    from xlingua.data import spool

    monkeypatch.setattr(spool, "MIN_FREE", 1 << 60)  # more than any disk has
    with fifos(tmp_path, _data(EN)) as (fifo,):
        res = _invoke(["embed", fifo, "-o", tmp_path / "out.npy", "-m", tiny_model])
    assert re.fullmatch(rf"error: {re.escape(str(fifo))}: copying it to {re.escape(str(tmp_path))} would leave "
                        r"less than \S+ GiB of disk free \(stopped after 0 bytes\); free space there and rerun",
                        _error(res))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fifo0", "tmp"]


def test_mine_reads_pipes_and_caches_by_content(tmp_path, tiny_model):
    from tests.commands import sentences

    src, tgt = sentences("en", 12, seed=1), sentences("en", 10, seed=2) + sentences("en", 4, seed=1)
    (tmp_path / "s.txt").write_bytes(_data(src))
    (tmp_path / "t.txt").write_bytes(_data(tgt))
    wd = tmp_path / "wd"
    common = ["--src-lang", "en", "--tgt-lang", "en", "-m", tiny_model, "--workdir", wd, "--k", "2", "--shard-size", "5"]
    res = _invoke(["mine", tmp_path / "s.txt", tmp_path / "t.txt", "-o", tmp_path / "plain.tsv.gz", *common])
    assert res.exit_code == 0, res.output
    with fifos(tmp_path, _data(src), _data(tgt)) as (a, b):
        res = _invoke(["mine", a, b, "-o", tmp_path / "out.tsv.gz", *common])
    assert res.exit_code == 0, res.output
    assert (tmp_path / "out.tsv.gz").read_bytes() == (tmp_path / "plain.tsv.gz").read_bytes()
    summary = json.loads((tmp_path / "out.tsv.gz.summary.json").read_text())
    assert all(summary["timings"][f"shard_{side}"]["cached"] for side in ("src", "tgt"))  # same bytes
    assert not [p for p in wd.iterdir() if p.name.startswith(".")]


def test_prepare_reads_stdin_and_names_it_in_ids(tmp_path):
    docs = _data(["The cat is red. The dog is blue.", "A house stands here."])
    args = ["prepare", "-", "-o", tmp_path / "prep", "--lang", "en", "--no-lid", "--min-chars", "3",
            "--workdir", tmp_path / "wd"]
    res = _invoke(args, input=docs)
    assert res.exit_code == 0, res.output
    assert (tmp_path / "prep" / "en.txt").read_text().splitlines() == [
        "<stdin>:1:1\tThe cat is red.", "<stdin>:1:2\tThe dog is blue.", "<stdin>:2:1\tA house stands here."]
    summary = json.loads((tmp_path / "prep" / "en.summary.json").read_text())
    assert summary["files"][0]["path"] == "<stdin>"
    with fifos(tmp_path, b"ok\nbad \xff\n") as (fifo,):
        res = _invoke(["prepare", fifo, *args[2:]])
    assert res.exit_code == 2
    assert res.output.splitlines() == [f"error: {fifo}:2: invalid UTF-8 at byte 4 of the line"]


def _results(tmp_path):
    res = {"model": "m", "encoder": "m", "fingerprint": "f", "dim": 2, "limit": None, "tasks": {
        "qe": {"task": "qe", "seconds": 2.0, "summary": {"pearson": 0.25}, "rows": {}, "notes": [], "config": {}}}}
    (tmp_path / "a.json").write_text(json.dumps(res))
    res["tasks"]["qe"]["summary"]["pearson"] = 0.30
    (tmp_path / "b.json").write_text(json.dumps(res))
    return tmp_path / "a.json", tmp_path / "b.json"


def test_eval_compare_reads_a_fifo_and_stdin(tmp_path):
    a, b = _results(tmp_path)
    with fifos(tmp_path, a.read_bytes()) as (fifo,):
        res = _invoke(["eval", "--compare", fifo, "-"], input=b.read_bytes())
    assert res.exit_code == 0, res.output
    assert "| qe: pearson | 0.250 | 0.300 | +0.050 |" in res.output
    with fifos(tmp_path, b'{"tasks": \n oops}', names=["bad"]) as (fifo,):
        res = _invoke(["eval", "--compare", a, fifo])
    assert res.exit_code == 2
    assert res.output.splitlines() == [f"error: {fifo}:2: not JSON (Expecting value)"]


def _bash(script: str, tmp_path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": SRC + os.pathsep + os.environ.get("PYTHONPATH", ""),
           "XL": f"{sys.executable} -m xlingua.cli", "TMPDIR": str(tmp_path / "tmp")}
    return subprocess.run(["bash", "-c", script], capture_output=True, text=True, cwd=tmp_path, env=env,
                          timeout=1800)


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash for <(...)")
def test_process_substitution_in_bash(tmp_path):
    a, b = _results(tmp_path)
    proc = _bash("$XL eval --compare <(cat a.json) <(cat b.json)", tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "| qe: pearson | 0.250 | 0.300 | +0.050 |" in proc.stdout
    # the bad line is found while the pipe is copied, before any model loads
    (tmp_path / "s.de").write_bytes(_data(DE))
    proc = _bash("$XL score s.de <(printf 'one\\nt\\0wo\\n') -o out.tsv -m no-such-model", tmp_path)
    assert proc.returncode == 2
    assert re.fullmatch(r"error: /dev/fd/\d+:2: NUL byte in line \(binary file\?\)\n", proc.stderr), proc.stderr
    assert not (tmp_path / "out.tsv").exists()
