"""The kill -9 suite: every long command killed at seeded random points, then rerun, ends with
the same output bytes as an uninterrupted run.

The points are the moments a file is about to be published (every writer renames a finished
temporary file into place, xlingua.io): a clean run counts them, then for each point drawn
(seeded) a child process runs the command and SIGKILLs itself just before that rename, leaving
whatever a real kill there would leave (a partial file, a checkpoint from before, a log line
too many). The same command is run again and must finish with the uninterrupted run's output.
"""
from __future__ import annotations

import os
import random
import subprocess
import sys

import pytest
import torch
from typer.testing import CliRunner

from tests.cli_run import SRC
from tests.commands import JOBS, MineTwoStage, TrainStudent
from xlingua.cli import app

POINTS = 3  # kill points per command
#: the long commands: the ones that cache, shard or checkpoint their work
KILLED = [j for j in JOBS if j.name in ("embed", "mine", "eval", "train", "laser", "meaning", "prepare")]
KILLED.append(TrainStudent)  # train again, as a student of some of the model's layers
KILLED.append(MineTwoStage)  # mine again, in two stages
CHILD = """
import os, sys
import torch
torch.set_num_threads(int(os.environ["XLINGUA_TORCH_THREADS"]))  # the parent's: float sums in its order
at = int(os.environ["XLINGUA_KILL_AT"])
seen = [0]

def killing(real):
    def rename(src, dst, **kw):
        seen[0] += 1
        if seen[0] == at:
            os.kill(os.getpid(), 9)
        return real(src, dst, **kw)
    return rename

os.replace, os.rename = killing(os.replace), killing(os.rename)
from xlingua.cli import app
app(sys.argv[1:], prog_name="xlingua")
"""


def _args(job):
    """The command as a user reruns it after a kill (embed with shards, train with --resume)."""
    return job.args(shard=5) if job.name == "embed" else job.args()


def _result(job):
    if job.name == "embed":
        from xlingua.embed import load_embeddings

        return load_embeddings(job.out / "emb").tobytes()
    return job.result()


def _invoke(job, monkeypatch, counter=None):
    for k, v in job.env.items():
        monkeypatch.setenv(k, v)
    real = os.replace, os.rename
    if counter is not None:
        def counting(fn):
            def rename(src, dst, **kw):
                counter.append(str(dst))
                return fn(src, dst, **kw)
            return rename

        os.replace, os.rename = counting(real[0]), counting(real[1])
    try:
        result = CliRunner().invoke(app, [str(a) for a in _args(job)])
    finally:
        os.replace, os.rename = real
    assert result.exit_code == 0, (result.output[-3000:], result.exception)


@pytest.mark.parametrize("job_cls", KILLED, ids=[j.name for j in KILLED])
def test_kill_9_then_rerun_gives_the_uninterrupted_output(job_cls, tmp_path, tiny_model, monkeypatch):
    clean = job_cls(tmp_path / "clean", tiny_model)
    clean.setup()
    published: list[str] = []
    _invoke(clean, monkeypatch, counter=published)
    want = _result(clean)
    assert len(published) >= 2, published
    points = sorted(random.Random(f"kill-{job_cls.name}").sample(range(1, len(published) + 1),
                                                                 min(POINTS, len(published))))
    for point in points:
        job = job_cls(tmp_path / f"killed_{point}", tiny_model)
        job.setup()
        env = {**os.environ, **job.env, "XLINGUA_KILL_AT": str(point), "HF_HUB_OFFLINE": "1",
               "XLINGUA_TORCH_THREADS": str(torch.get_num_threads()),
               "PYTHONPATH": SRC + os.pathsep + os.environ.get("PYTHONPATH", "")}
        proc = subprocess.run([sys.executable, "-c", CHILD, *map(str, _args(job))], env=env,
                              capture_output=True, text=True, timeout=300)
        assert proc.returncode == -9, (point, published[point - 1], proc.stderr[-2000:])
        _invoke(job, monkeypatch)  # the same command again
        assert _result(job) == want, (job.name, point, published[point - 1])
