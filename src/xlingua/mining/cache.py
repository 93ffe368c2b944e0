"""Caching and crash-safe writes shared by the mining steps (stopes style).

Every step's output lives in `workdir/<step>/<key>/`, where key is a hash of the step's
config and its inputs' fingerprints. Files are written to a temporary name and moved into
place (xlingua.io), and a step directory counts as finished only once its `done.json`
exists, so a run killed at any moment resumes without trusting a half-written file.
"""
from __future__ import annotations

import dataclasses
import gzip
import json
import os
from pathlib import Path

from xlingua.io import (DiskFullError, atomic_path, file_fingerprint, save_npy, save_npz,  # noqa: F401
                        stable_hash, write_json)


def save_json(path, obj) -> None:
    write_json(path, obj, indent=2, sort_keys=True)


def load_json(path):
    return json.loads(Path(path).read_text(encoding="utf-8"))


def open_gzip_writer(path):
    """A gzip stream with no name and mtime 0 in its header, so equal content -> equal bytes."""
    raw = open(path, "wb")
    return raw, gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0)


def peak_memory_mb() -> float:
    """Peak resident memory of this process so far (MiB)."""
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


class Step:
    """One cached pipeline step: a config (dataclass) -> a directory of artefacts."""

    name = "step"
    #: bump when the step's code changes its output, so old caches are not reused
    version = 1

    def __init__(self, config, workdir: str | os.PathLike):
        self.config = config
        self.workdir = Path(workdir)

    def key_config(self):
        """The config as it enters the key (subclasses blank out paths that don't matter)."""
        return self.config

    @property
    def key(self) -> str:
        versioned = {"version": self.version} if self.version > 1 else {}
        return stable_hash({"step": self.name, "config": self.key_config(), **versioned})

    @property
    def dir(self) -> Path:
        return self.workdir / self.name / self.key

    @property
    def done_file(self) -> Path:
        return self.dir / "done.json"

    def done(self) -> bool:
        return self.done_file.exists()

    def meta(self) -> dict:
        return load_json(self.done_file)

    def finish(self, meta: dict) -> dict:
        save_json(self.dir / "config.json", dataclasses.asdict(self.config))
        save_json(self.done_file, meta)
        return meta
