"""The engines e5-small and the models shipped on it run on (`MODEL:ENGINE`, e.g. `bundled:ct2`).

Each engine file declares its engines with `@register_engine(NAME, ...)` on the function that
builds the encoder, `build(model=, alias=, **options)`, and states what the engine needs: the
Python packages it imports (`needs`, with the pip command that installs them), whether it gives
hidden layers (`layers`, for `layer=`) and which models it serves (`serves`; None: all).
`bundled` (bundled.py) looks engines up here by name and runs the first of its per-CPU
preference that is installed; nothing here imports an engine file by name, so this module sits
below them all (docs/engines.md).
"""
from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from typing import Callable

from xlingua.registry import declare, import_package


class MissingPackage(ImportError, ValueError):
    """An engine asked for by name whose package is not installed: one line naming the pip
    command (a ValueError too, so that the command line prints it as a user error)."""


@dataclass(frozen=True)
class Engine:
    name: str
    build: Callable
    help: str
    needs: tuple[str, ...] = ()  # modules it imports that xlingua does not always have
    pip: str = ""  # the command that installs them
    layers: bool = False  # gives intermediate layers (`layer=`), not only the last one
    serves: tuple[str, ...] | None = None  # the models it runs; None: every model on e5-small

    def missing(self) -> list[str]:
        return [m for m in self.needs if importlib.util.find_spec(m) is None]

    def require(self, spec: str) -> None:
        """Raise MissingPackage, one line, when a package this engine needs is not installed."""
        missing = self.missing()
        if missing:
            raise MissingPackage(f"{spec} needs {' and '.join(missing)}: {self.pip}")

    def runs(self, model: str, options: dict) -> bool:
        """Whether it can embed with `model` and `options` (its packages aside)."""
        return ((self.serves is None or model in self.serves)
                and (self.layers or options.get("layer") is None))


_ENGINES: dict[str, Engine] = {}


def register_engine(name: str, help: str, needs: tuple[str, ...] = (), pip: str = "",
                    layers: bool = False, serves: tuple[str, ...] | None = None):
    """Function decorator: `build(model=, alias=, **options)` makes the encoder of engine `name`."""
    def add(build: Callable) -> Callable:
        declare(_ENGINES, name, Engine(name, build, help, tuple(needs), pip, layers, serves),
                "engines named", lambda e: f"{e.build.__module__}.{e.build.__qualname__}")
        return build
    return add


def _load() -> None:
    # the encoder files declare engines as they declare specs: import them all (once)
    import_package("xlingua.encoders")


def engines() -> list[Engine]:
    """Every declared engine, by name."""
    _load()
    return [_ENGINES[n] for n in sorted(_ENGINES)]


def engine(name: str) -> Engine:
    _load()
    if name not in _ENGINES:
        raise ValueError(f"no engine {name!r}; engines: {', '.join(sorted(_ENGINES))}")
    return _ENGINES[name]
