"""Crash-safe writes shared by the mining steps: every file is written to a temporary name and
moved into place (xlingua.io), so a run killed at any moment leaves no half-written file under
its real name. The steps themselves follow mining.step."""
from __future__ import annotations

import gzip
import json
from pathlib import Path

from xlingua.io import (DiskFullError, atomic_path, file_fingerprint, save_npy, save_npz,  # noqa: F401
                        write_json)


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
