from __future__ import annotations

import importlib.util

import pytest


@pytest.fixture
def hide_packages(monkeypatch):
    """hide_packages("openvino", ...): those packages look uninstalled to the engine registry,
    which asks importlib.util.find_spec; a module already imported stays importable."""
    real = importlib.util.find_spec

    def hide(*modules: str) -> None:
        monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name in modules else real(name, *a))
    return hide
