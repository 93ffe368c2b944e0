"""Settings given on the command line as NAME=VALUE (`--set`), typed by a dataclass's defaults."""
from __future__ import annotations

import dataclasses
from pathlib import Path


def parse_settings(cls, items: list[str]) -> dict:
    """['embed_dim=128', 'exclude_langs=af,eu'] -> overrides of dataclass `cls`, typed by its
    defaults (lists and tuples comma-separated); an unknown name or a bad value raises naming it."""
    types = {f.name for f in dataclasses.fields(cls)}
    defaults = cls()
    out = {}
    for item in items:
        name, eq, value = item.partition("=")
        name = name.strip().replace("-", "_")
        if not eq or name not in types:
            raise ValueError(f"setting {item!r} is not NAME=VALUE with NAME one of {', '.join(sorted(types))}")
        default = getattr(defaults, name)
        try:
            if isinstance(default, bool):
                if value.lower() not in ("true", "false", "1", "0"):
                    raise ValueError
                out[name] = value.lower() in ("true", "1")
            elif isinstance(default, (list, tuple)):
                out[name] = type(default)(v.strip() for v in value.split(",") if v.strip())
            else:
                out[name] = type(default)(value)
        except ValueError:
            raise ValueError(f"setting {item!r}: expected a {type(default).__name__}") from None
    return out


def split_lists(cls, data: dict) -> dict:
    """`data` with each comma-separated string given for a list setting of dataclass `cls` split
    (`langs: de,fr` as `langs: [de, fr]`)."""
    defaults = cls()
    return {k: [v.strip() for v in value.split(",") if v.strip()]
            if isinstance(value, str) and isinstance(getattr(defaults, k, None), list) else value
            for k, value in data.items()}


def recipe_settings(name: str, data: dict, *classes, extra: tuple[str, ...] = ()) -> tuple[Path, dict]:
    """(output directory, the other settings) of a `recipe: NAME` training config; a setting no
    field of `classes` (nor `extra`) names is an error, so a misspelt one does not run at its default."""
    data = {k: v for k, v in data.items() if k != "recipe"}
    if "output_dir" not in data:
        raise ValueError(f"a {name} recipe needs output_dir")
    out = Path(data.pop("output_dir"))
    known = {f.name for cls in classes for f in dataclasses.fields(cls)} | set(extra)
    unknown = sorted(set(data) - known)
    if unknown:
        raise ValueError(f"unknown {name} setting(s) {unknown}; known: {sorted(known | {'output_dir'})}")
    return out, data
