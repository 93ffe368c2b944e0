"""The fault suite: one table of bad inputs, run against every command (tests/commands.py).

Each row is a fault and what every command must do with it:
- "error": exit code 2, exactly one `error: ...` line naming the file (and line), no
  complete-looking output, and once the fault is fixed a rerun writes the same bytes as a
  clean run;
- "same": accepted, with the same output bytes as the clean input (CRLF, a BOM);
- "ok": accepted (e.g. an empty line is a row of its own for `embed`).
A command that has no such input or option lists the fault in its Job's `skip`. A new
command joins every row by adding a Job to tests/commands.py.
"""
from __future__ import annotations

import gzip

import numpy as np
import pytest
from typer.testing import CliRunner

from tests.cli_run import run_cli
from tests.commands import JOBS, put_bytes, read_bytes
from xlingua.cli import app


def _insert(job, line: bytes, at: int = 3):
    """Put `line` as line number `at` of the job's target (a file of text lines)."""
    lines = read_bytes(job.target).split(b"\n")
    lines.insert(at - 1, line)
    put_bytes(job.target, b"\n".join(lines))
    return job.target, at


def _replace_line(job, line: bytes, at: int = 3):
    lines = read_bytes(job.target).split(b"\n")
    lines[at - 1] = line
    put_bytes(job.target, b"\n".join(lines))
    return job.target, at


def _empty(job):
    put_bytes(job.target, b"")
    return job.target, None


def _directory(job):
    job.target.unlink()
    job.target.mkdir()
    return job.target, None


def _missing(job):
    job.target.unlink()
    return job.missing_names, None


def _crlf(job):
    put_bytes(job.target, read_bytes(job.target).replace(b"\n", b"\r\n"))
    return job.target, None


def _bom(job):
    put_bytes(job.target, b"\xef\xbb\xbf" + read_bytes(job.target))
    return job.target, None


def _unwritable(job):
    job.out.parent.mkdir(parents=True, exist_ok=True)
    job.out.write_text("a file where the output directory should be")
    return job.out, None


#: name -> (apply(job) -> (file named, line or None), {command: expectation}, default expectation)
FAULTS = {
    "invalid_utf8": (lambda job: _insert(job, b"caf\xe9 au lait"), {}, "error"),
    "nul": (lambda job: _insert(job, b"bin\x00ary"), {}, "error"),
    "empty_file": (_empty, {"embed": "ok", "score": "ok", "align": "ok", "prepare": "ok"}, "error"),
    "empty_lines": (lambda job: _insert(job, b""), {"embed": "ok", "mine": "ok", "align": "ok", "prepare": "ok"},
                    "error"),
    "line_1mb": (lambda job: _insert(job, job.row(b"x" * (1 << 20))), {"train": "ok", "laser": "ok"}, "error"),
    "crlf": (_crlf, {}, "same"),
    "bom": (_bom, {}, "same"),
    "directory": (_directory, {}, "error"),
    "missing": (_missing, {}, "error"),
    "unwritable": (_unwritable, {}, "error"),
    "mismatched": (lambda job: _replace_line(job, b"one side only"), {}, "error"),
    "lang": (None, {}, "error"),
    "model": (None, {}, "error"),
    "changed": (None, {"mine": "same", "prepare": "same"}, "error"),
}
#: rows an accepted fault gives: a number, or "clean" (as many as the clean input)
ACCEPTED = {("empty_file", "embed"): 0, ("empty_file", "score"): 1,  # score's header row
            ("empty_file", "prepare"): 0,
            ("empty_file", "align"): 1 + 8,  # the header and B's 8 sentences, each unaligned
            ("empty_lines", "embed"): 13,  # the empty line is a row of its own
            ("empty_lines", "mine"): "clean", ("empty_lines", "align"): "clean", ("empty_lines", "prepare"): "clean"}
#: faults that are not run for a command, and why (beyond each Job's `skip`)
NOT_RUN = {("line_1mb", c): "embedding a 1 MB line whole (the window policy) takes minutes with any model; "
           "embed's --max-chars row covers the limit" for c in ("mine", "eval", "meaning")}
CASES = [(f, j) for f in [*FAULTS, "full_disk"] for j in JOBS
         if f not in j.skip and (f, j.name) not in NOT_RUN and not (f == "full_disk" and "full_disk" in j.skip)]


class Runner:
    def __init__(self, monkeypatch):
        self.monkeypatch = monkeypatch

    def __call__(self, job, args):
        for k, v in job.env.items():
            self.monkeypatch.setenv(k, v)
        self.monkeypatch.setenv("HF_HUB_OFFLINE", "1")
        result = CliRunner().invoke(app, [str(a) for a in args])
        return result.exit_code, result.stderr, result


_clean: dict[str, bytes] = {}


def clean_result(job_cls, tmp_path_factory, model, run, changed=False) -> bytes:
    key = job_cls.name + ("+changed" if changed else "")
    if key not in _clean:
        job = job_cls(tmp_path_factory.mktemp(f"clean_{key}"), model)
        job.setup()
        code, err, res = run(job, job.changed_args() if changed else job.args())
        assert code == 0, (job.name, res.output, res.exception)
        _clean[key] = job.result()
    return _clean[key]


def assert_one_error_line(stderr: str, path, line=None, contains: str | None = None):
    lines = [l for l in stderr.splitlines() if l.strip()]
    errors = [l for l in lines if l.startswith("error: ")]
    assert len(errors) == 1 and lines[-1] == errors[0] and "Traceback" not in stderr, stderr[-2000:]
    want = f"{path}:{line}:" if line else str(path)
    assert want in errors[0], (want, errors[0])
    if contains:
        assert contains in errors[0], errors[0]


@pytest.mark.parametrize("fault, job_cls", CASES, ids=[f"{f}-{j.name}" for f, j in CASES])
def test_fault(fault, job_cls, tmp_path, tmp_path_factory, tiny_model, monkeypatch, request):
    run = Runner(monkeypatch)
    job = job_cls(tmp_path / "ws", tiny_model)
    job.setup()
    if fault == "full_disk":
        return _full_disk(job, request.getfixturevalue("full_disk"), clean_result(job_cls, tmp_path_factory, tiny_model, run))
    apply, special, default = FAULTS[fault]
    expect = special.get(job.name, default)
    clean = clean_result(job_cls, tmp_path_factory, tiny_model, run, changed=fault == "changed" and expect == "same")
    before = None
    if fault == "lang":
        named, line, args = None, None, job.lang_args("klingon")
    elif fault == "model":
        named, line = tmp_path / "no_such_model", None
        args = job.model_args(named)
    elif fault == "changed":
        code, err, res = run(job, job.args(shard=5) if job.name == "embed" else job.args())
        assert code == 0, res.output
        before = _snapshot(job.out)
        args = [*job.args(shard=5), "--dtype", "float16"] if job.name == "embed" else job.changed_args()
        named, line = {"embed": job.out / "emb", "train": job.out / "run" / "checkpoint.pt",
                       "laser": job.out / "laser" / "checkpoint.pt",
                       "meaning": job.out / "meaning" / "checkpoint.pt"}.get(job.name), None
    else:
        pristine = job.target.read_bytes()
        named, line = apply(job)
        args = job.args()
    code, err, res = run(job, args)
    if expect == "same":
        assert code == 0, res.output
        assert job.result() == clean
        return
    if expect == "ok":
        assert code == 0 and job.output.exists(), res.output
        want = ACCEPTED.get((fault, job.name))
        if want is not None:
            assert _rows(job) == (_rows_of(clean) if want == "clean" else want), (fault, job.name)
        return
    assert code == 2, (res.output[-3000:], res.exception)
    assert_one_error_line(err, named or "", line, contains="klingon" if fault == "lang" else None)
    if before is not None:  # a refused rerun leaves the finished run as it was
        assert _snapshot(job.out) == before
        if job.name == "train":
            job.setup()  # the recipe as it was
        code, err, res = run(job, job.args(shard=5) if job.name == "embed" else job.args())
        assert code == 0, res.output
        return
    assert not job.output.exists()
    # fix the fault, run again: the same bytes as a clean run
    if fault not in ("lang", "model"):
        if job.target.is_dir():
            job.target.rmdir()
        if fault == "unwritable":
            job.out.unlink()
        else:
            job.target.write_bytes(pristine)
    if job.name == "train":
        job.setup()
    code, err, res = run(job, job.args())
    assert code == 0, res.output
    assert job.result() == clean


def _rows_of(data: bytes) -> int:
    return len(gzip.decompress(data).splitlines() if data[:2] == b"\x1f\x8b" else data.splitlines())


def _rows(job) -> int:
    if job.output.suffix == ".npy":
        return len(np.load(job.output))
    return _rows_of(job.output.read_bytes())


def _snapshot(folder):
    return {p.relative_to(folder): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def _full_disk(job, disk, clean):
    """The output (and any work directory) on a full file system, in a child process."""
    job.out = disk.path / "out"
    if job.name == "train":
        job.setup()
    args = job.args()
    args = [disk.path / "wd" if a == job.ws / "wd" else a for a in args]
    disk.fill(leave=1024)
    proc = run_cli(args, preexec_fn=disk.preexec, **job.env)
    if proc.returncode == 0 and disk.how == "rlimit":
        # RLIMIT_FSIZE bounds each file, not the file system: a command whose every file fits
        # under it meets no full disk at all. Only a real small file system (root) tests it.
        sizes = [p.stat().st_size for p in disk.path.rglob("*") if p.is_file()]
        assert max(sizes, default=0) <= disk.room, "a file over the limit was written without an error"
        pytest.skip(f"every file {job.name} writes here fits under RLIMIT_FSIZE; a full disk needs the tmpfs (root)")
    assert proc.returncode == 2, proc.stderr[-3000:]
    assert_one_error_line(proc.stderr, disk.path, contains="no space left on device while writing")
    assert not job.output.exists()
    disk.free()
    proc = run_cli(args, **job.env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert job.result() == clean


def test_serve_with_an_unknown_model_is_one_line(tmp_path, monkeypatch):
    """`serve` reads no files and keeps nothing: its fault is a model that cannot load."""
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    spec = tmp_path / "no_such_model"
    result = CliRunner().invoke(app, ["serve", "-m", str(spec), "--port", "0"])
    assert result.exit_code == 2, result.output
    assert_one_error_line(result.stderr, spec)
