"""The encoder spec registry: each encoder file declares the specs it answers with
`@register_spec(PATTERN, help)` on the function that builds its encoder; nothing else lists them.

A pattern is literal text with UPPERCASE placeholders at its ends:
  NAME              exactly that spec (`use`, `static-small`): build(**options)
  PREFIX:REST       a spec starting with PREFIX: (`laser:PATH`): build(REST, **options)
  LEFT<sep>RIGHT    a spec holding <sep> (`A,B`, `BASE+meaning:PATH`), cut at its first
                    occurrence: build(LEFT, RIGHT, **options)
  LEFT<sep>         a spec ending with <sep> (`BASE+meaning`): build(LEFT, **options)
  PATH              what nothing else matches (a model directory or hub name): build(PATH, **options)
Combining patterns (the last two but one) are tried first, longest separator first, then names,
then prefixes (longest first), then PATH: the order in which files load never changes what a
spec means. Encoder files are imported when a spec is first looked up, not before, so importing
the CLI does not import torch."""
from __future__ import annotations

import re
from dataclasses import dataclass
from fnmatch import fnmatch
from typing import Callable

from xlingua.encoders.base import Encoder
from xlingua.registry import declare, import_package

_PATTERN = re.compile(r"^([A-Z]+)?([^A-Z]*)([A-Z]+)?$")
_RANK = {"combine": 0, "suffix": 0, "name": 1, "prefix": 2, "fallback": 3}


@dataclass(frozen=True)
class Spec:
    pattern: str
    kind: str  # combine | suffix | name | prefix | fallback
    literal: str
    build: Callable[..., Encoder]
    help: str | Callable[[], str]  # a function when the text depends on other entries (the engines)
    package: str = ""  # a spec of a shipped model: its name (a glob) in the model packages

    def text(self) -> str:
        return self.help() if callable(self.help) else self.help

    def installed(self) -> bool:
        """False for a shipped model's spec that no installed model package provides."""
        if not self.package:
            return True
        from xlingua.encoders.model_packages import installed

        return any(fnmatch(name, self.package) for name in installed())

    def match(self, spec: str) -> tuple | None:
        """The arguments `build` takes for `spec`, or None if this pattern does not answer it."""
        if self.kind == "combine":
            return tuple(spec.split(self.literal, 1)) if self.literal in spec else None
        if self.kind == "suffix":
            return (spec[: -len(self.literal)],) if spec.endswith(self.literal) else None
        if self.kind == "name":
            return () if spec == self.literal else None
        if self.kind == "prefix":
            return (spec[len(self.literal):],) if spec.startswith(self.literal) else None
        return (spec,)


_SPECS: dict[str, Spec] = {}


def _kind(pattern: str) -> tuple[str, str]:
    m = _PATTERN.match(pattern)
    if not m or not any(m.groups()) or (m[1] and m[3] and not m[2]):
        raise ValueError(f"bad encoder spec pattern {pattern!r}")
    left, literal, right = m.groups()
    if not literal:
        return "fallback", ""
    if left:
        return ("combine" if right else "suffix"), literal
    return ("prefix" if right else "name"), literal


def _origin(spec: Spec) -> str:
    f = getattr(spec.build, "func", spec.build)  # a functools.partial: the function it wraps
    return f"{f.__module__}.{f.__qualname__}"


def register_spec(pattern: str, help: str | Callable[[], str], package: str = ""):
    """Function decorator: `build` makes the encoder for the specs `pattern` matches; `package`
    names the shipped model (a glob) it loads from a model package (model_packages.py)."""
    kind, literal = _kind(pattern)

    def add(build: Callable[..., Encoder]) -> Callable[..., Encoder]:
        declare(_SPECS, pattern, Spec(pattern, kind, literal, build, help, package), "encoders for spec", _origin)
        return build
    return add


def _load() -> None:
    import_package("xlingua.encoders")


def specs() -> list[Spec]:
    """Every declared spec, in the order a spec string is tried against them."""
    _load()
    return sorted(_SPECS.values(), key=lambda s: (_RANK[s.kind], -len(s.literal), s.pattern))


def spec_table() -> list[tuple[str, str]]:
    """(pattern, help) of every spec, in the order they are tried."""
    return [(s.pattern, s.text()) for s in specs()]


_READING = {"name": 0, "prefix": 1, "combine": 2, "suffix": 2, "fallback": 3}


def readable_specs() -> list[Spec]:
    """Every declared spec in the order a reader looks for one: names, then prefixes, then
    combinations, then PATH."""
    return sorted(specs(), key=lambda s: (_READING[s.kind], s.pattern.lower()))


def resolve(spec: str) -> tuple[Callable[..., Encoder], tuple]:
    """The builder that answers `spec` and the arguments it takes from it."""
    for entry in specs():
        args = entry.match(spec)
        if args is not None:
            return entry.build, args
    raise ValueError(f"{spec!r}: no encoder answers this spec")  # only without a PATH fallback
