"""Where a shipped model's files are: in a model package installed beside xlingua. The xlingua
wheel holds code only; the models ship as wheels of their own (packages/ in the source tree):

  xlingua-models-small     xlingua-small and its versions (encoders/versions.py names each one's
                           package), meaning-bundled
  xlingua-models-small-vN  a version of xlingua-small in a package named after it: one whose
                           student would take the first past 100 MB
  xlingua-models-qe        xlingua-qe, qe-small, qe-cross
  xlingua-models-static    static-small

Each declares its models as entry points in the group `xlingua.models`: the entry point's name is
the model's, its value the importable package holding the model's directory, `<package>/<name>/`
(manifest.json and the files it lists). Every lookup of a shipped model by name goes through
`model_dir`; a model no installed package declares fails with one line naming the pip command
that installs it.

`xlingua ship`, `qe ship`, `static ship` and `meaning ship` write a model into a source
checkout's src/xlingua/models/<name>/, where the model packages take their files from when
they are built: reinstalling the package picks a new model up (packages/README.md).
"""
from __future__ import annotations

from importlib import resources
from importlib.metadata import entry_points
from pathlib import Path

from xlingua.encoders.versions import SMALL_PACKAGE, VERSIONS

GROUP = "xlingua.models"
MANIFEST = "manifest.json"  # what every model directory holds (xlingua.encoders.manifest reads it)


def _providers() -> dict[str, tuple[str, ...]]:
    """The versions of xlingua-small by the package declared for each (versions.py), the meaning
    model beside the first, then the other models."""
    small: dict[str, list[str]] = {}
    for v in VERSIONS:
        small.setdefault(v.package, []).append(v.name)
    small[SMALL_PACKAGE].append("meaning-bundled")
    return {**{dist: tuple(names) for dist, names in small.items()},
            "xlingua-models-qe": ("xlingua-qe", "qe-small", "qe-cross"),
            "xlingua-models-static": ("static-small",)}


#: the models xlingua ships, by the distribution that holds them (what `pip install` takes)
PROVIDERS = _providers()


class ModelNotInstalledError(FileNotFoundError):
    """No installed model package declares the model."""


def provider(name: str) -> str | None:
    """The distribution that ships model `name`, None for a model xlingua does not ship."""
    return next((dist for dist, names in PROVIDERS.items() if name in names), None)


def shipped_names() -> list[str]:
    """Every model xlingua ships, whether installed or not, in the order of PROVIDERS."""
    return [name for names in PROVIDERS.values() for name in names]


def installed() -> dict[str, Path]:
    """Model name -> its directory, for every model an installed package declares."""
    found: dict[str, Path] = {}
    owner: dict[str, str] = {}
    for ep in entry_points(group=GROUP):
        dist = ep.dist.name if ep.dist is not None else ep.value
        if ep.name in found:
            raise ValueError(f"model {ep.name} is declared by two installed packages, {owner[ep.name]} and "
                             f"{dist}: uninstall one")
        if ep.attr:
            raise ValueError(f"{dist} declares model {ep.name} as {ep.value!r}; an `{GROUP}` entry point "
                             "names a package, whose directory <package>/<model name> holds the model")
        try:
            package = Path(str(resources.files(ep.module)))
        except ImportError as e:
            raise ModelNotInstalledError(f"{dist} declares model {ep.name} in {ep.module}, which does not import "
                                         f"({e}); reinstall {dist}") from None
        found[ep.name], owner[ep.name] = package / ep.name, dist
    return found


def not_installed(name: str, build: str = "") -> str:
    """One line saying that `name` is not installed and what installs (or builds) it."""
    dist = provider(name)
    if dist:
        return f"{name} is not installed: pip install {dist}"
    how = f"; build it with {build}" if build else ""
    return f"{name} is not installed: no xlingua model package provides it{how}"


def model_dir(name: str, build: str = "") -> Path:
    """The directory of shipped model `name`, from the model package that declares it;
    `build` says how to make a model xlingua does not ship."""
    path = installed().get(name)
    if path is None:
        raise ModelNotInstalledError(not_installed(name, build))
    if not (path / MANIFEST).is_file():
        raise FileNotFoundError(f"{path / MANIFEST} is missing; reinstall {provider(name) or 'its package'}")
    return path


def source_models_dir() -> Path | None:
    """src/xlingua/models/ of a source checkout (what the model packages are built from), None in
    an installed wheel, which has no models/."""
    root = Path(__file__).resolve().parent.parent / "models"
    return root if root.is_dir() else None


def reinstall_hint(out) -> str:
    """What makes a model just shipped to `out` load by name ('' unless `out` is in the source
    checkout's models/): the loader reads installed packages, not the source tree."""
    root = source_models_dir()
    out = Path(out).resolve()
    if root is None or out.parent != root.resolve():
        return ""
    dist = provider(out.name)
    if dist:
        return (f"{out.name} loads by name from the installed {dist}: rebuild and reinstall it to pick this up "
                f"(pip install ./packages/{dist}, or make setup)")
    return f"no model package ships {out.name}: add it to one to load it by name (packages/README.md)"
