"""Run `xlingua ...` as a child process (for limits that must not touch the test process)."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

SRC = str(Path(__file__).resolve().parents[1] / "src")


def run_cli(args, preexec_fn=None, timeout: float = 1800, **env) -> subprocess.CompletedProcess:
    environ = {**os.environ, "PYTHONPATH": SRC + os.pathsep + os.environ.get("PYTHONPATH", ""),
               "COLUMNS": "200", **{k: str(v) for k, v in env.items()}}
    return subprocess.run([sys.executable, "-m", "xlingua.cli", *map(str, args)], capture_output=True,
                          text=True, preexec_fn=preexec_fn, env=environ, timeout=timeout)


def run_python(code: str, preexec_fn=None, timeout: float = 1800) -> subprocess.CompletedProcess:
    environ = {**os.environ, "PYTHONPATH": SRC + os.pathsep + os.environ.get("PYTHONPATH", "")}
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          preexec_fn=preexec_fn, env=environ, timeout=timeout)
