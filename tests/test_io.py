"""xlingua.io: atomic files and directories, disk-full errors, stale partials, stable hashes."""
import os
import stat
import subprocess
import sys

import numpy as np
import pytest

from tests.cli_run import run_python
from xlingua.data.text import InputError
from xlingua.io import (DiskFullError, atomic_dir, atomic_open, atomic_path, check_writable, open_memmap,
                        remove_stale_partials, save_npy, stable_hash, write_json)


def test_atomic_path_publishes_only_on_success(tmp_path):
    target = tmp_path / "sub" / "a.txt"
    with atomic_open(target) as f:
        f.write("one\n")
        assert not target.exists() and len(list(target.parent.iterdir())) == 1  # only the partial
    assert target.read_text() == "one\n"
    with pytest.raises(RuntimeError):
        with atomic_open(target) as f:
            f.write("two\n")
            raise RuntimeError("boom")
    assert target.read_text() == "one\n" and os.listdir(target.parent) == ["a.txt"]


def test_atomic_dir_replaces_whole_and_gives_usual_modes(tmp_path):
    target = tmp_path / "model"
    target.mkdir()
    (target / "old.bin").write_text("old")
    with atomic_dir(target) as tmp:
        (tmp / "weights").write_text("new")
        os.chmod(tmp / "weights", 0o600)  # what some writers (safetensors) leave
    assert sorted(os.listdir(target)) == ["weights"]
    mask = os.umask(0)
    os.umask(mask)
    assert stat.S_IMODE(os.stat(target / "weights").st_mode) == 0o666 & ~mask
    assert os.listdir(tmp_path) == ["model"]
    with pytest.raises(FileExistsError):
        with atomic_dir(target, replace=False) as tmp:
            (tmp / "x").write_text("x")
    assert sorted(os.listdir(tmp_path)) == ["model"] and os.listdir(target) == ["weights"]


def test_stable_hash_ignores_key_order():
    assert stable_hash({"a": 1, "b": [1, 2]}) == stable_hash({"b": [1, 2], "a": 1})
    assert stable_hash({"a": 1}) != stable_hash({"a": 2})


def test_full_disk_names_the_file_and_removes_the_partial(full_disk):
    target = full_disk.path / "big.json"
    code = ("from xlingua.io import write_json\n"
            f"write_json({str(target)!r}, {{'x': 'y' * 200_000}})\n")
    proc = run_python(code, preexec_fn=full_disk.preexec)
    assert proc.returncode == 1, proc.stderr
    assert f"DiskFullError: [Errno 28] no space left on device while writing {target}" in proc.stderr
    assert os.listdir(full_disk.path) == []


def test_memmap_on_full_disk_is_an_error_not_sigbus(full_disk):
    """Without reserving, a sparse memory map on a full tmpfs dies of SIGBUS at the first page
    past the room; open_memmap claims the space first, so the error comes at once."""
    target = full_disk.path / "e.npy"
    code = ("import numpy as np\nfrom xlingua.io import atomic_path, open_memmap\n"
            f"with atomic_path({str(target)!r}) as tmp:\n"
            "    a = open_memmap(tmp, 'float32', (200_000, 4))\n    a[:] = 1.0\n    a.flush()\n")
    proc = run_python(code, preexec_fn=full_disk.preexec)
    assert proc.returncode == 1, (proc.returncode, proc.stderr)
    assert f"no space left on device while writing {target}" in proc.stderr
    assert os.listdir(full_disk.path) == []


def test_memmap_reserved_and_filled(tmp_path):
    with atomic_path(tmp_path / "e.npy") as tmp:
        arr = open_memmap(tmp, "float32", (3, 2))
        arr[:] = 2.0
        arr.flush()
        del arr
    assert np.load(tmp_path / "e.npy").tolist() == [[2.0, 2.0]] * 3


def test_remove_stale_partials_keeps_live_writers(tmp_path):
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    live = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        (tmp_path / f".out.npy.partial-{dead.pid}").write_bytes(b"x" * 100)
        (tmp_path / f".shard.partial-{dead.pid}").mkdir()
        (tmp_path / f".out.npy.partial-{live.pid}").write_bytes(b"x")
        (tmp_path / "out.npy").write_bytes(b"done")
        removed = remove_stale_partials(tmp_path)
        assert sorted(p.name for p in removed) == sorted([f".out.npy.partial-{dead.pid}", f".shard.partial-{dead.pid}"])
        assert sorted(os.listdir(tmp_path)) == sorted([f".out.npy.partial-{live.pid}", "out.npy"])
    finally:
        live.kill()
        live.wait()


def test_check_writable(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    with pytest.raises(InputError, match=r"file/out\.npy: cannot write there \(.*file is not a directory\)"):
        check_writable(blocker / "out.npy")
    with pytest.raises(InputError, match="is a directory"):
        check_writable(tmp_path)
    with pytest.raises(InputError, match="exists and is not a directory"):
        check_writable(blocker, is_dir=True)
    check_writable(tmp_path / "new" / "deeper" / "out.npy")
    save_npy(tmp_path / "a.npy", np.zeros(2))
    write_json(tmp_path / "a.json", {"k": 1})
    assert (tmp_path / "a.json").read_text() == '{\n "k": 1\n}\n'


def test_disk_full_error_is_an_oserror():
    assert issubclass(DiskFullError, OSError)


def test_save_torch_reads_torchs_failed_write_as_a_full_disk(tmp_path, monkeypatch):
    """torch's zip writer reports a failed write as a RuntimeError without errno: under a
    file-size limit (or with no room) it is the usual full-disk error, partial removed;
    otherwise the RuntimeError stays what it is."""
    import torch

    from xlingua import io

    def failing_save(obj, f):
        f.write(b"PK")
        raise RuntimeError("[enforce fail at inline_container.cc:672] . unexpected pos 64 vs 0")

    monkeypatch.setattr(torch, "save", failing_save)
    target = tmp_path / "checkpoint.pt"
    monkeypatch.setattr(io, "_file_size_limited", lambda: True)
    with pytest.raises(io.DiskFullError, match=r"no space left on device while writing .*checkpoint\.pt") as err:
        io.save_torch(target, {"a": 1})
    assert err.value.filename == str(target)
    assert list(tmp_path.iterdir()) == []
    monkeypatch.setattr(io, "_file_size_limited", lambda: False)
    with pytest.raises(RuntimeError, match="unexpected pos"):
        io.save_torch(target, {"a": 1})
    assert list(tmp_path.iterdir()) == []
