"""`embed_files`: one row per line, in order; float16; shards that resume; no complete-looking
output after a failure."""
from __future__ import annotations

import gzip
import json

import numpy as np
import pytest

from xlingua.data.text import InputError
from xlingua.embed import EmbedFilesConfig, embed_files, load_embeddings
from xlingua.encoders.base import Encoder


class HashEncoder(Encoder):
    """Deterministic toy encoder: a row depends only on its text (and length), so row order
    can be checked against the input."""

    name = "hash-test"
    dim = 8

    def __init__(self, fail_after: int | None = None):
        self.calls = 0
        self.seen: list[str] = []
        self.fail_after = fail_after

    def _encode_batch(self, texts, lang):
        self.calls += 1
        if self.fail_after is not None and self.calls > self.fail_after:
            raise RuntimeError("simulated kill")
        self.seen.extend(texts)
        return np.stack([self.vector(t) for t in texts])

    @staticmethod
    def vector(text: str) -> np.ndarray:
        rng = np.random.default_rng(sum(map(ord, text)) * 1000 + len(text))
        return rng.standard_normal(HashEncoder.dim).astype(np.float32)


LINES = ["short", "", "a much longer sentence than the others", "mid length", "x", "",
         "émoji 🙂 and 日本語", "last"]


def _write(tmp_path, lines=LINES, name="in.txt"):
    path = tmp_path / name
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return str(path)


def _expected(lines=LINES):
    return np.stack([HashEncoder.vector(t) for t in lines])


def test_round_trip_rows_in_input_order(tmp_path):
    src = _write(tmp_path)
    out = tmp_path / "out.npy"
    res = embed_files(HashEncoder(), EmbedFilesConfig([src], str(out), batch_size=3, buffer_lines=5,
                                                      show_progress=False))
    got = np.load(out)
    assert res.rows == len(LINES) and got.shape == (len(LINES), 8) and got.dtype == np.float32
    np.testing.assert_array_equal(got, _expected())
    assert [p.name for p in tmp_path.iterdir()] and not any(p.name.startswith(".") for p in tmp_path.iterdir())


def test_float16_and_several_gzip_inputs(tmp_path):
    a = tmp_path / "a.txt.gz"
    a.write_bytes(gzip.compress("\n".join(LINES[:3]).encode() + b"\n"))
    b = _write(tmp_path, LINES[3:], "b.txt")
    out = tmp_path / "half.npy"
    embed_files(HashEncoder(), EmbedFilesConfig([str(a), b], str(out), dtype="float16", show_progress=False))
    got = np.load(out)
    assert got.dtype == np.float16
    np.testing.assert_allclose(got.astype(np.float32), _expected(), rtol=1e-3, atol=1e-3)


def test_ids_written_beside_the_rows(tmp_path):
    src = tmp_path / "ids.tsv"
    src.write_text("k1\tone\nk2\t\nk3\tthree\n")
    out = tmp_path / "v.npy"
    embed_files(HashEncoder(), EmbedFilesConfig([str(src)], str(out), ids=True, show_progress=False))
    assert (tmp_path / "v.ids.txt").read_text().split() == ["k1", "k2", "k3"]
    np.testing.assert_array_equal(np.load(out), _expected(["one", "", "three"]))


def test_failure_leaves_no_output(tmp_path):
    src = _write(tmp_path)
    out = tmp_path / "out.npy"
    with pytest.raises(RuntimeError, match="simulated kill"):
        embed_files(HashEncoder(fail_after=1), EmbedFilesConfig([src], str(out), batch_size=2,
                                                                show_progress=False))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.txt"]


def test_bad_input_fails_before_any_embedding(tmp_path):
    src = tmp_path / "bad.txt"
    src.write_bytes(b"ok\n" * 10 + b"bad \xff\n")
    enc = HashEncoder()
    with pytest.raises(InputError, match=r"bad\.txt:11: invalid UTF-8"):
        embed_files(enc, EmbedFilesConfig([str(src)], str(tmp_path / "o.npy"), buffer_lines=2,
                                          show_progress=False))
    assert enc.calls == 0 and not (tmp_path / "o.npy").exists()


def test_output_name_must_be_npy_without_shards(tmp_path):
    with pytest.raises(InputError, match="must end in .npy"):
        embed_files(HashEncoder(), EmbedFilesConfig([_write(tmp_path)], str(tmp_path / "out"),
                                                    show_progress=False))


def test_sharded_resume_after_kill(tmp_path):
    lines = [f"sentence number {i}" for i in range(10)]
    src = _write(tmp_path, lines)
    out = tmp_path / "shards"
    # batch_size 4 = shard size: the first shard is one batch; the second one dies.
    cfg = EmbedFilesConfig([src], str(out), shard_size=4, batch_size=4, show_progress=False)
    with pytest.raises(RuntimeError, match="simulated kill"):
        embed_files(HashEncoder(fail_after=1), cfg)
    names = sorted(p.name for p in out.iterdir())
    assert names == ["job.json", "shard-00000.npy"]  # no index: not complete
    with pytest.raises(InputError, match="has not finished"):
        load_embeddings(out)

    enc = HashEncoder()
    res = embed_files(enc, cfg)
    assert res.shards_reused == 1 and res.rows == 10
    assert sorted(enc.seen) == sorted(lines[4:])  # only the rest
    index = json.loads((out / "index.json").read_text())
    assert [s["rows"] for s in index["shards"]] == [4, 4, 2]
    np.testing.assert_array_equal(load_embeddings(out), _expected(lines))

    # a complete job is not redone; a different job in the same directory is refused
    again = HashEncoder()
    embed_files(again, cfg)
    assert again.calls == 0
    with pytest.raises(InputError, match="holds a different job"):
        embed_files(HashEncoder(), EmbedFilesConfig([src], str(out), shard_size=3, show_progress=False))


def _stdin(monkeypatch, lines=LINES):
    import io
    import sys

    data = "\n".join(lines).encode() + b"\n"
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BufferedReader(io.BytesIO(data))))


def test_stdin_input(tmp_path, monkeypatch):
    _stdin(monkeypatch)
    out = tmp_path / "s.npy"
    embed_files(HashEncoder(), EmbedFilesConfig(["-"], str(out), show_progress=False))
    np.testing.assert_array_equal(np.load(out), _expected())
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.npy"]


def test_stdin_into_shards_resumes_on_the_same_bytes_only(tmp_path, monkeypatch):
    _stdin(monkeypatch)
    out = tmp_path / "s"
    cfg = EmbedFilesConfig(["-"], str(out), shard_size=3, show_progress=False)
    res = embed_files(HashEncoder(), cfg)
    assert res.rows == len(LINES) and res.shards == ["shard-00000.npy", "shard-00001.npy", "shard-00002.npy"]
    np.testing.assert_array_equal(load_embeddings(out), _expected())
    assert not any(p.name.startswith(".") for p in out.iterdir())  # the copy of stdin is gone
    _stdin(monkeypatch)
    again = HashEncoder()
    assert embed_files(again, cfg).rows == len(LINES) and again.calls == 0
    _stdin(monkeypatch, LINES[:-1])
    with pytest.raises(InputError, match="holds a different job"):
        embed_files(HashEncoder(), cfg)


@pytest.mark.parametrize("shard_size", [None, 3])
def test_progress_bar_runs(tmp_path, shard_size):
    out = tmp_path / ("p" if shard_size else "p.npy")
    embed_files(HashEncoder(), EmbedFilesConfig([_write(tmp_path)], str(out), shard_size=shard_size,
                                                show_progress=True))
    assert load_embeddings(out).shape == (len(LINES), 8)


def test_cli_rerun_after_a_partial_run_embeds_only_the_shards_left(tmp_path, monkeypatch):
    from typer.testing import CliRunner

    from xlingua.cli import app
    from xlingua.encoders import loading

    lines = [f"sentence number {i}" for i in range(10)]
    src, out = _write(tmp_path, lines), tmp_path / "shards"
    args = ["embed", src, "-o", str(out), "--shard-size", "3", "--batch-size", "3"]
    monkeypatch.setattr(loading, "load_encoder", lambda spec: HashEncoder(fail_after=2))
    assert CliRunner().invoke(app, args).exit_code != 0  # dies on the third shard
    kept = {p.name: p.stat().st_mtime_ns for p in out.glob("shard-*.npy")}
    assert sorted(kept) == ["shard-00000.npy", "shard-00001.npy"]

    enc = HashEncoder()
    monkeypatch.setattr(loading, "load_encoder", lambda spec: enc)
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 0, res.output
    assert res.stderr.splitlines()[-1] == f"wrote 10 x 8 float32 -> {out} (2 shards reused)"
    assert res.stdout == ""  # the runner's per-item lines stay off
    assert enc.seen == lines[6:] and enc.calls == 2  # shards 2 and 3 only
    assert {name: (out / name).stat().st_mtime_ns for name in kept} == kept
    np.testing.assert_array_equal(load_embeddings(out), _expected(lines))


def test_a_partial_store_of_the_earlier_code_resumes(tmp_path):
    """job.json as `xlingua embed` has written it from the start: a directory a killed run left
    is resumed, not refused, and its finished shard is not embedded again."""
    import os

    lines = [f"sentence number {i}" for i in range(5)]
    src, out = _write(tmp_path, lines), tmp_path / "old"
    out.mkdir()
    st = os.stat(src)
    job = {"format": "xlingua-embeddings/1", "model": HashEncoder().fingerprint(), "dim": 8,
           "dtype": "float32", "shard_size": 3, "lang": None, "errors": "strict",
           "max_chars": 1_000_000, "ids": False,
           "inputs": [{"path": os.path.abspath(src), "size": st.st_size, "mtime": int(st.st_mtime)}]}
    (out / "job.json").write_text(json.dumps(job, indent=1) + "\n")
    np.save(out / "shard-00000.npy", _expected(lines[:3]))
    enc = HashEncoder()
    res = embed_files(enc, EmbedFilesConfig([src], str(out), shard_size=3, show_progress=False))
    assert res.shards_reused == 1 and enc.seen == lines[3:]
    np.testing.assert_array_equal(load_embeddings(out), _expected(lines))


def test_cli_embed_round_trip_and_one_line_errors(tmp_path, monkeypatch):
    from typer.testing import CliRunner

    from xlingua.cli import app
    from xlingua.encoders import loading

    monkeypatch.setattr(loading, "load_encoder", lambda spec: HashEncoder())
    src = _write(tmp_path)
    out = tmp_path / "cli.npy"
    res = CliRunner().invoke(app, ["embed", src, "-o", str(out), "--dtype", "float16"])
    assert res.exit_code == 0, res.output
    assert np.load(out).shape == (len(LINES), 8) and np.load(out).dtype == np.float16

    res = CliRunner().invoke(app, ["embed", str(tmp_path / "missing.txt"), "-o", str(out)])
    assert res.exit_code == 2
    assert "missing.txt: no such file" in res.output and len(res.output.strip().splitlines()) == 1

    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"ok\n\xc3(\n")
    res = CliRunner().invoke(app, ["embed", str(bad), "-o", str(tmp_path / "b.npy")])
    assert res.exit_code == 2 and "bad.txt:2: invalid UTF-8" in res.output
    res = CliRunner().invoke(app, ["embed", str(bad), "-o", str(tmp_path / "b.npy"), "--errors", "replace"])
    assert res.exit_code == 0 and np.load(tmp_path / "b.npy").shape == (2, 8)


def _lines_file(path, n=1000):
    path.write_text("".join(f"the cat {i} runs to the house\n" for i in range(n)), encoding="utf-8")
    return path


@pytest.mark.parametrize("shards", [False, True])
def test_full_disk_is_one_line_and_leaves_nothing(tmp_path, tiny_model, full_disk, shards):
    """1,000 x 32 float32 rows (128 KB) onto 64 KB of room: the single .npy used to die of SIGBUS
    (exit 135, a hidden partial left), the sharded form said "N requested and M written"."""
    from tests.cli_run import run_cli

    src = _lines_file(tmp_path / "in.txt")
    out = full_disk.path / ("out" if shards else "out.npy")
    extra = ["--shard-size", "600"] if shards else []
    proc = run_cli(["embed", src, "-o", out, "--model", tiny_model, *extra], preexec_fn=full_disk.preexec)
    assert proc.returncode == 2, proc.stderr
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith(f"error: {out}") and "no space left on device while writing" in last, last
    leftovers = sorted(p.name for p in full_disk.path.rglob("*"))
    assert leftovers == (["job.json", "out"] if shards else []), leftovers


def test_rerun_removes_partials_of_dead_processes(tmp_path):
    import subprocess
    import sys

    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    stale = tmp_path / f".out.npy.partial-{dead.pid}"
    stale.write_bytes(b"\0" * 4096)  # what a kill -9 leaves
    embed_files(HashEncoder(), EmbedFilesConfig([str(_write(tmp_path))], str(tmp_path / "out.npy"), show_progress=False))
    assert not stale.exists() and (tmp_path / "out.npy").exists()


def test_unwritable_destination_and_unknown_language_fail_before_the_model_loads(tmp_path):
    from typer.testing import CliRunner

    from xlingua.cli import app

    src = _write(tmp_path)
    blocker = tmp_path / "a_file"
    blocker.write_text("")
    for args, message in (
        ([str(src), "-o", str(blocker / "out.npy")], f"error: {blocker / 'out.npy'}: cannot write there"),
        ([str(src), "-o", str(tmp_path / "o.npy"), "--lang", "klingon"], "error: unknown language code 'klingon'"),
    ):
        res = CliRunner().invoke(app, ["embed", *args, "--model", str(tmp_path / "no_such_model")])
        assert res.exit_code == 2 and res.output.startswith(message) and res.output.count("\n") == 1, res.output
