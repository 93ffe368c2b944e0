"""Crash-safe writes, stable hashes and disk-full errors: the one way xlingua writes files.

Every writer goes through `atomic_path` (a file) or `atomic_dir` (a directory): the content is
written under a hidden temporary name beside the target (`.NAME.partial-PID`), flushed to disk
(fsync) and renamed into place only when complete. So a crash, a kill -9 or a full disk never
leaves a complete-looking file, and `remove_stale_partials` clears what dead processes left.
A full disk (ENOSPC, EDQUOT, or EFBIG from a file-size limit) becomes `DiskFullError`:
"no space left on device while writing FILE", with the partial removed.
"""
from __future__ import annotations

import contextlib
import dataclasses
import errno
import hashlib
import json
import os
import re
import shutil
from pathlib import Path

import numpy as np

_FULL = (errno.ENOSPC, errno.EDQUOT, errno.EFBIG)
_PARTIAL = re.compile(r"^\.(?P<name>.+)\.partial-(?P<pid>\d+)$")


class DiskFullError(OSError):
    """No space left while writing a file; the message names the file, the partial is gone."""


def disk_full(exc: OSError, path) -> DiskFullError | None:
    """`exc` as a DiskFullError naming `path` when it is a full disk, else None."""
    if isinstance(exc, DiskFullError):
        return exc
    if getattr(exc, "errno", None) in _FULL or (exc.errno is None and _no_room(path)):
        err = DiskFullError(errno.ENOSPC, f"no space left on device while writing {path}; "
                            "nothing was written there (free space and rerun)")
        err.filename = str(path)
        return err
    return None


def _no_room(path) -> bool:
    """True when the file system of `path` has no free block (numpy's short writes raise an
    OSError without errno)."""
    try:
        return os.statvfs(Path(path).parent).f_bavail == 0
    except OSError:
        return False


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


def partial_name(path: str | os.PathLike) -> Path:
    """The hidden temporary name this process writes `path` under."""
    path = Path(path)
    return path.with_name(f".{path.name}.partial-{os.getpid()}")


def _fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        with contextlib.suppress(FileNotFoundError):
            path.unlink()


@contextlib.contextmanager
def _publish(path: Path, tmp: Path, replace):
    try:
        yield tmp
        if tmp.is_file():
            _fsync(tmp)
        replace(tmp, path)
        with contextlib.suppress(OSError):
            _fsync(path.parent)
    except OSError as exc:
        _remove(tmp)
        full = disk_full(exc, path)
        if full is not None and full is not exc:
            raise full from exc
        raise
    except BaseException:
        _remove(tmp)
        raise


def atomic_path(path: str | os.PathLike):
    """Context manager: yield a temporary path beside `path` to write (a file, or a memmap);
    it becomes `path` only if the block succeeds."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    return _publish(path, partial_name(path), os.replace)


def atomic_dir(path: str | os.PathLike, replace: bool = True):
    """Context manager: yield an empty temporary directory that becomes `path` only if the block
    succeeds. An existing `path` is replaced (and removed afterwards), or with replace=False
    kept, raising FileExistsError. Files get the usual umask modes (some writers use 0600)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = partial_name(path)
    _remove(tmp)
    tmp.mkdir()
    return _publish(path, tmp, _replace_dir if replace else _rename_new)


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _usual_modes(folder: Path) -> None:
    mask = _umask()
    for root, dirs, files in os.walk(folder):
        for d in dirs:
            os.chmod(os.path.join(root, d), 0o777 & ~mask)
        for f in files:
            os.chmod(os.path.join(root, f), 0o666 & ~mask)
    os.chmod(folder, 0o777 & ~mask)


def _replace_dir(src: Path, dst: Path) -> None:
    _usual_modes(src)
    old = None
    if dst.exists():
        old = dst.with_name(f".{dst.name}.old-{os.getpid()}")
        os.replace(dst, old)
    os.replace(src, dst)
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


def _rename_new(src: Path, dst: Path) -> None:
    _usual_modes(src)
    try:
        os.rename(src, dst)  # fails if another writer got there first
    except OSError:
        if dst.exists():
            raise FileExistsError(f"{dst} already exists") from None
        raise


@contextlib.contextmanager
def atomic_open(path: str | os.PathLike, mode: str = "w", encoding: str | None = "utf-8"):
    """Context manager: a file object open on the temporary name (`mode` "w" or "wb")."""
    with atomic_path(path) as tmp:
        with open(tmp, mode, encoding=None if "b" in mode else encoding) as f:
            yield f


def write_text(path, text: str) -> None:
    """Write `text` (UTF-8) under a temporary name, then rename it into place."""
    with atomic_open(path) as f:
        f.write(text)


def write_json(path, obj, indent: int | None = 1, sort_keys: bool = False) -> None:
    """`obj` as JSON (non-ASCII kept as is), written as `write_text` writes."""
    write_text(path, json.dumps(obj, indent=indent, sort_keys=sort_keys, ensure_ascii=False,
                                allow_nan=True) + "\n")


def save_npy(path, array: np.ndarray) -> None:
    """np.save's bytes, written by Python's file object so that a full disk raises ENOSPC."""
    array = np.ascontiguousarray(array)
    with atomic_open(path, "wb") as f:
        np.lib.format.write_array_header_1_0(f, np.lib.format.header_data_from_array_1_0(array))
        f.write(array.reshape(-1).view(np.uint8).data)


def save_npz(path, **arrays) -> None:
    with atomic_open(path, "wb") as f:
        np.savez(f, **arrays)


def save_torch(path, obj) -> None:
    import torch

    try:
        with atomic_open(path, "wb") as f:
            torch.save(obj, f)
    except RuntimeError as exc:
        # torch's zip writer turns a failed write into a RuntimeError without errno
        if _no_room(path) or _file_size_limited():
            raise disk_full(OSError(errno.ENOSPC, str(exc)), path) from exc
        raise


def _file_size_limited() -> bool:
    """True when this process runs under a file-size limit (RLIMIT_FSIZE), the other way a
    write runs out of room."""
    import resource

    return resource.getrlimit(resource.RLIMIT_FSIZE)[0] != resource.RLIM_INFINITY


def reserve(path: str | os.PathLike, nbytes: int) -> None:
    """Claim `nbytes` of disk for `path` now. A memory map over a sparse file on a full disk dies
    of SIGBUS at some later page; reserving first turns that into an error here."""
    fd = os.open(path, os.O_RDWR)
    try:
        if nbytes > 0:
            os.posix_fallocate(fd, 0, nbytes)
    except OSError as exc:
        if exc.errno not in (errno.EOPNOTSUPP, errno.EINVAL) or disk_full(exc, path):
            raise
        _write_zeros(fd, nbytes)  # a file system without fallocate: write the bytes
    finally:
        os.close(fd)


def _write_zeros(fd: int, nbytes: int) -> None:
    block = bytes(1 << 20)
    os.lseek(fd, 0, os.SEEK_SET)
    left = nbytes
    while left > 0:
        left -= os.write(fd, block[: min(left, len(block))])


def open_memmap(tmp: str | os.PathLike, dtype, shape):
    """A writable .npy memory map at `tmp` (from `atomic_path`) with its disk space reserved."""
    from numpy.lib.format import open_memmap as _open

    arr = _open(tmp, mode="w+", dtype=dtype, shape=shape)
    reserve(tmp, os.path.getsize(tmp))
    return arr


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def remove_stale_partials(folder: str | os.PathLike) -> list[Path]:
    """Remove the `.NAME.partial-PID` files and folders left in `folder` by processes that are
    no longer running (a kill -9 runs no cleanup); a live writer's partials are kept."""
    folder = Path(folder)
    removed = []
    if not folder.is_dir():
        return removed
    for entry in folder.iterdir():
        m = _PARTIAL.match(entry.name)
        if m and int(m["pid"]) != os.getpid() and not _alive(int(m["pid"])):
            _remove(entry)
            removed.append(entry)
    return removed


def check_writable(path: str | os.PathLike, is_dir: bool = False) -> None:
    """Fail now, not after hours of work, when `path` cannot be written: the nearest existing
    ancestor must be a writable directory (and `path` itself, if it exists, of the right kind)."""
    from xlingua.data.text import InputError

    path = Path(path)
    if path.exists():
        if is_dir and not path.is_dir():
            raise InputError(f"{path}: exists and is not a directory")
        if not is_dir and path.is_dir():
            raise InputError(f"{path}: is a directory, expected a file name")
    parent = path if (is_dir and path.is_dir()) else path.parent
    while not parent.exists():
        parent = parent.parent
    if not parent.is_dir():
        raise InputError(f"{path}: cannot write there ({parent} is not a directory)")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise InputError(f"{path}: cannot write there (permission denied on {parent})")


__all__ = ["DiskFullError", "atomic_dir", "atomic_open", "atomic_path", "check_writable", "disk_full",
           "file_fingerprint", "open_memmap", "partial_name", "remove_stale_partials", "reserve",
           "save_npy", "save_npz", "save_torch", "stable_hash", "write_json", "write_text"]
