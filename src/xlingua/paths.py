"""Where xlingua keeps its cache and where it looks for benchmark data."""
from __future__ import annotations

import os
from pathlib import Path


def xlingua_home() -> Path:
    """Cache root: $XLINGUA_HOME, else ~/.cache/xlingua."""
    root = os.environ.get("XLINGUA_HOME") or os.path.join(Path.home(), ".cache", "xlingua")
    path = Path(root)
    path.mkdir(parents=True, exist_ok=True)
    return path


def shared_dir() -> Path:
    """The project's ../shared folder (benchmarks and corpora), next to the checkout."""
    env = os.environ.get("XLINGUA_SHARED")
    if env:
        return Path(env)
    here = Path(__file__).resolve()
    for parent in here.parents:
        candidate = parent.parent / "shared"
        if (candidate / "benchmarks").is_dir():
            return candidate
    return Path.cwd().parent / "shared"


def benchmarks_dir(data_dir: str | os.PathLike | None = None) -> Path:
    """Benchmark root: the argument, else $XLINGUA_DATA, else ../shared/benchmarks."""
    if data_dir:
        return Path(data_dir)
    env = os.environ.get("XLINGUA_DATA")
    if env:
        return Path(env)
    return shared_dir() / "benchmarks"


def corpora_dir() -> Path:
    return shared_dir() / "corpora"
