"""What the registries (encoder specs, training objectives, evaluation tasks) share: each file of
a package declares its own entries with a decorator, so the package's modules are imported before
a registry is read, and a name declared twice by different code is an error."""
from __future__ import annotations

import importlib
import pkgutil
from typing import Any, Callable


def import_package(package: str) -> None:
    """Import every module of `package` (once: Python caches imports), so each declares its entries."""
    pkg = importlib.import_module(package)
    for info in pkgutil.iter_modules(pkg.__path__):
        importlib.import_module(f"{package}.{info.name}")


def qualname(item: Any) -> str:
    return item.__qualname__


def declare(table: dict, name: str, item: Any, what: str, origin: Callable[[Any], str] = qualname) -> None:
    """table[name] = item, unless another origin already holds `name` (the same code registering
    again, e.g. its module imported twice, is fine)."""
    old = table.get(name)
    if old is not None and origin(old) != origin(item):
        raise ValueError(f"two {what} {name!r}: {origin(old)} and {origin(item)}")
    table[name] = item
