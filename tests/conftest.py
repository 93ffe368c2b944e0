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


@pytest.fixture(autouse=True)
def _isolated_home(tmp_path_factory, monkeypatch):
    """Keep tests' caches out of the user's ~/.cache/xlingua: one fresh XLINGUA_HOME per test
    session, so the bundled model is converted once per session (about 20 s)."""
    home = tmp_path_factory.getbasetemp() / "xlingua_home"
    monkeypatch.setenv("XLINGUA_HOME", str(home))
    yield
