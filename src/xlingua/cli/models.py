"""`xlingua models`: the encoder specs, read from the encoder registry, then the models xlingua
ships, each installed (where) or with the pip command that installs it. Only what an installation
can load is listed: a spec of a shipped model that no package provides, installed or not, is left
out."""
from __future__ import annotations

from fnmatch import fnmatch

import typer


def _providers(pattern: str, shipped: list[str]) -> list[str]:
    """The model packages that ship a model matching a spec's `pattern`."""
    from xlingua.encoders.model_packages import provider

    return sorted({dist for name in shipped if fnmatch(name, pattern) and (dist := provider(name))})


def models_command():
    """The encoder specs --model takes, with what each is; then the shipped models, installed or not."""
    from xlingua.encoders.model_packages import installed, provider, shipped_names
    from xlingua.encoders.registry import readable_specs

    found = readable_specs()
    here = installed()
    names = shipped_names() + sorted(set(here) - set(shipped_names()))
    width = max(len(s.pattern) for s in found)
    for spec in found:
        missing = ""
        if not spec.installed():
            dists = _providers(spec.package, names)
            if not dists:
                continue  # nothing installs it: not a model this installation can load
            missing = f" [not installed: pip install {' '.join(dists)}]"
        typer.echo(f"{spec.pattern:<{width}}  {spec.text()}{missing}")
    typer.echo("\nshipped models (each from a model package installed beside xlingua):")
    width = max(len(n) for n in names)
    for name in names:
        where = f"installed: {here[name]}" if name in here else f"not installed: pip install {provider(name)}"
        typer.echo(f"  {name:<{width}}  {where}")
