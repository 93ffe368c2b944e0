"""Shared fixtures. Data from ../shared: skip without it, fail when CI=true."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from xlingua.paths import shared_dir


def _require(path: Path) -> Path:
    if path.exists():
        return path
    if os.environ.get("CI") == "true":
        pytest.fail(f"CI=true but the shared data is missing: {path}")
    pytest.skip(f"shared data not found: {path}")


@pytest.fixture(scope="session")
def shared() -> Path:
    """The ../shared folder (benchmarks/ and corpora/)."""
    return _require(shared_dir())


@pytest.fixture(scope="session")
def benchmarks(shared) -> Path:
    return _require(shared / "benchmarks")


@pytest.fixture(scope="session")
def corpora(shared) -> Path:
    return _require(shared / "corpora" / "l10n")


@pytest.fixture(scope="session")
def lowres_corpus(shared) -> Path:
    return _require(shared / "corpora" / "lowres")


@pytest.fixture(autouse=True)
def _isolated_home(tmp_path_factory, monkeypatch):
    """Keep tests' caches out of the user's ~/.cache/xlingua: one fresh XLINGUA_HOME per test
    session, so the bundled model is converted once per session (about 20 s)."""
    home = tmp_path_factory.getbasetemp() / "xlingua_home"
    monkeypatch.setenv("XLINGUA_HOME", str(home))
    yield


@pytest.fixture
def models_dir(tmp_path, monkeypatch) -> Path:
    """An empty models/ standing in for the installed model packages and for a source checkout's
    src/xlingua/models/: a model directory put in it loads by its name."""
    from xlingua.encoders import model_packages

    root = tmp_path / "models"
    root.mkdir()
    monkeypatch.setattr(model_packages, "installed", lambda: {p.name: p for p in sorted(root.iterdir()) if p.is_dir()})
    monkeypatch.setattr(model_packages, "source_models_dir", lambda: root)
    return root


class FullDisk:
    """A directory where writing more than `room` bytes fails as on a full disk.

    As root (where `mount` works) it is a tmpfs of `room` bytes: a real ENOSPC, and a real
    SIGBUS for a memory map over a sparse file. Elsewhere (CI without root) the command runs
    under RLIMIT_FSIZE = `room` with SIGXFSZ ignored, so writing past it fails with EFBIG; run
    the command with `preexec_fn=disk.preexec`. XLINGUA_TEST_DISK=rlimit forces the second way.
    """

    room = 64 * 1024

    def __init__(self, path, how: str):
        self.path = path
        self.how = how

    def fill(self, leave: int) -> None:
        """Leave only `leave` bytes of room."""
        if self.how == "tmpfs":
            st = os.statvfs(self.path)
            with open(self.path / ".filler", "wb") as f:
                f.write(b"\0" * max(0, st.f_bavail * st.f_frsize - leave))
        self.room = leave

    def free(self) -> None:
        """Make room again (the rerun after the fix)."""
        import subprocess

        (self.path / ".filler").unlink(missing_ok=True)
        if self.how == "tmpfs":
            subprocess.run(["mount", "-o", "remount,size=256m", str(self.path)], check=True)
        self.room = None

    def preexec(self):
        if self.how == "rlimit" and self.room:
            import resource
            import signal

            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
            resource.setrlimit(resource.RLIMIT_FSIZE, (self.room, self.room))


def _mount_tmpfs(path, room: int) -> bool:
    import shutil
    import subprocess

    if os.environ.get("XLINGUA_TEST_DISK") == "rlimit" or os.geteuid() != 0 or not shutil.which("mount"):
        return False
    return subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={room}", "xlingua-test", str(path)],
                          capture_output=True).returncode == 0


@pytest.fixture
def full_disk(tmp_path):
    import subprocess

    path = tmp_path / "small_disk"
    path.mkdir()
    mounted = _mount_tmpfs(path, FullDisk.room)
    yield FullDisk(path, "tmpfs" if mounted else "rlimit")
    if mounted:
        subprocess.run(["umount", "-l", str(path)], capture_output=True)


@pytest.fixture(scope="session")
def tiny_model(tmp_path_factory):
    """A 2-layer BERT with hidden size 32 saved to disk: a model spec for any command."""
    from tests.training.conftest import make_tiny_model_dir

    return make_tiny_model_dir(tmp_path_factory.mktemp("tiny_model"))
