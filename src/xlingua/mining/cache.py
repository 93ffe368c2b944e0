"""Caching and crash-safe writes shared by the mining steps (stopes style).

Every step's output lives in `workdir/<step>/<key>/`, where key is a hash of the step's
config and its inputs' fingerprints. Files are written to a temporary name and moved into
place with os.replace, and a step directory counts as finished only once its `done.json`
exists, so a run killed at any moment resumes without trusting a half-written file.
"""
from __future__ import annotations

import contextlib
import dataclasses
import errno
import gzip
import hashlib
import json
import os
from pathlib import Path

import numpy as np


class DiskFullError(OSError):
    """Raised instead of a bare ENOSPC so the message names the file that was not written."""


def stable_hash(obj, n: int = 16) -> str:
    """Hash of a JSON-able object (dataclasses included), independent of key order."""
    if dataclasses.is_dataclass(obj):
        obj = dataclasses.asdict(obj)
    text = json.dumps(obj, sort_keys=True, default=str, ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:n]


def file_fingerprint(path: str | os.PathLike) -> str:
    """Content hash of a file (so a renamed or touched file keeps its cache, an edited one not)."""
    h = hashlib.blake2b(digest_size=16)
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike):
    """Yield a temporary path beside `path`; move it into place only if the block succeeds."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp{os.getpid()}")
    try:
        yield tmp
        os.replace(tmp, path)
    except OSError as exc:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()
        if exc.errno == errno.ENOSPC and not isinstance(exc, DiskFullError):
            raise DiskFullError(errno.ENOSPC, f"no space left on device while writing {path}; "
                                "nothing was written there (free space and rerun: finished "
                                "steps are reused)") from exc
        raise
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()
        raise


def save_npy(path, array: np.ndarray) -> None:
    with atomic_path(path) as tmp:
        with open(tmp, "wb") as f:
            np.save(f, array)


def save_npz(path, **arrays) -> None:
    with atomic_path(path) as tmp:
        with open(tmp, "wb") as f:
            np.savez(f, **arrays)


def save_json(path, obj) -> None:
    with atomic_path(path) as tmp:
        tmp.write_text(json.dumps(obj, indent=2, sort_keys=True, ensure_ascii=False) + "\n",
                       encoding="utf-8")


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
