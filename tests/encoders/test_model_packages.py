"""Shipped models come from model packages, found through the `xlingua.models` entry points they
declare; a model no installed package declares fails with one line naming the pip command."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.cli_run import run_python
from xlingua.cli import app
from xlingua.encoders import model_packages
from xlingua.encoders.loading import SMALL_VERSIONS
from xlingua.encoders.versions import SMALL_PACKAGE, VERSIONS
from xlingua.encoders.model_packages import (PROVIDERS, ModelNotInstalledError, installed, model_dir,
                                             reinstall_hint)

REPO = Path(__file__).resolve().parents[2]


def _install(site: Path, dist: str, package: str, models: dict[str, str], manifest: bool = True) -> Path:
    """A model package laid out in `site` as pip installs one: the package, a directory per model
    and a dist-info whose entry points declare `models` (name -> entry point value)."""
    (site / package).mkdir(parents=True)
    (site / package / "__init__.py").write_text('"""toy models"""\n')
    for name in models:
        (site / package / name).mkdir()
        if manifest:
            (site / package / name / "manifest.json").write_text(json.dumps({"format": 1, "files": {}}))
    info = site / f"{dist.replace('-', '_')}-0.1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 0.1.0\n")
    (info / "entry_points.txt").write_text("[xlingua.models]\n" + "".join(f"{n} = {v}\n" for n, v in models.items()))
    return site / package


@pytest.fixture
def site(tmp_path, monkeypatch):
    site = tmp_path / "site"
    site.mkdir()
    monkeypatch.syspath_prepend(str(site))
    return site


def test_a_model_is_found_through_the_entry_point_its_package_declares(site):
    package = _install(site, "toy-models", "toy_models_found", {"toy-a": "toy_models_found", "toy-b": "toy_models_found"})
    found = installed()
    assert found["toy-a"] == package / "toy-a" and found["toy-b"] == package / "toy-b"
    assert model_dir("toy-b") == package / "toy-b"
    res = CliRunner().invoke(app, ["models"])
    assert res.exit_code == 0, res.output
    assert ["toy-a", "installed:", str(package / "toy-a")] in [line.split() for line in res.output.splitlines()]


def test_a_declared_model_without_its_manifest_is_refused(site):
    _install(site, "toy-bare", "toy_models_bare", {"toy-c": "toy_models_bare"}, manifest=False)
    with pytest.raises(FileNotFoundError, match=r"toy_models_bare/toy-c/manifest\.json is missing; reinstall its package$"):
        model_dir("toy-c")


def test_two_packages_declaring_one_model_are_refused(site):
    _install(site, "toy-one", "toy_models_one", {"toy-d": "toy_models_one"})
    _install(site, "toy-two", "toy_models_two", {"toy-d": "toy_models_two"})
    with pytest.raises(ValueError, match=r"^model toy-d is declared by two installed packages, "
                                         r"toy-(one|two) and toy-(one|two): uninstall one$"):
        installed()


def test_an_entry_point_must_name_a_package(site):
    _install(site, "toy-attr", "toy_models_attr", {"toy-e": "toy_models_attr:DIR"})
    with pytest.raises(ValueError, match=r"toy-attr declares model toy-e as 'toy_models_attr:DIR'"):
        installed()


def test_a_missing_model_names_the_package_that_installs_it(monkeypatch):
    monkeypatch.setattr(model_packages, "installed", lambda: {})
    for dist, names in PROVIDERS.items():
        for name in names:
            with pytest.raises(ModelNotInstalledError) as e:
                model_dir(name)
            assert str(e.value) == f"{name} is not installed: pip install {dist}"
    with pytest.raises(ModelNotInstalledError, match=r"^meaning-e5-small is not installed: no xlingua model package "
                                                     r"provides it; build it with `xlingua meaning ship`$"):
        model_dir("meaning-e5-small", "`xlingua meaning ship`")
    from xlingua.qe.load import load_qe

    with pytest.raises(ModelNotInstalledError, match=r"^qe-small is not installed: pip install xlingua-models-qe$"):
        load_qe("qe-small")
    with pytest.raises(ModelNotInstalledError, match=r"^qe-cross is not installed: pip install xlingua-models-qe$"):
        load_qe(None)


def test_the_cli_says_which_package_to_install_in_one_line_and_exits_2(tmp_path):
    (tmp_path / "in.txt").write_text("hello\n")
    args = ["embed", "-m", "xlingua-small-v2", str(tmp_path / "in.txt"), "-o", str(tmp_path / "out.npy")]
    res = run_python("import sys\nfrom xlingua.encoders import model_packages\nmodel_packages.installed = dict\n"
                     f"from xlingua.cli import app\nsys.argv = ['xlingua', *{args!r}]\napp()", timeout=600)
    assert res.returncode == 2, res.stderr
    assert res.stderr == "error: xlingua-small-v2 is not installed: pip install xlingua-models-small\n"
    assert not (tmp_path / "out.npy").exists()


def test_xlingua_models_lists_each_shipped_model_with_the_command_that_installs_it(monkeypatch):
    monkeypatch.setattr(model_packages, "installed", lambda: {})
    res = CliRunner().invoke(app, ["models"])
    assert res.exit_code == 0, res.output
    specs, versions, shipped = res.output.split("\n\n")
    lines = {line.split()[0]: line for line in specs.splitlines()}
    # its versions ship in several packages: all named, oldest version's first (as declared)
    packages = list(dict.fromkeys(v.package for v in VERSIONS))
    assert packages[:3] == ["xlingua-models-small", "xlingua-models-small-v7", "xlingua-models-small-v9"]
    assert lines["xlingua-small@VERSION"].endswith(f" [not installed: pip install {' '.join(packages)}]")
    assert lines["BASE+meaning"].endswith(" [not installed: pip install xlingua-models-small]")
    assert lines["static-small"].endswith(" [not installed: pip install xlingua-models-static]")
    assert "not installed" not in lines["PATH"] and "not installed" not in lines["e5-small"]
    rows = [line.split(None, 1) for line in shipped.splitlines()[1:]]
    # the versions in the first one's package are one row; a version in a package of its own, its own row
    small = [v for v in SMALL_VERSIONS.values() if model_packages.provider(v) == "xlingua-models-small"]
    own = {v.name for v in VERSIONS if v.package != SMALL_PACKAGE}  # listed by their own names below
    assert {"xlingua-small-v7", "xlingua-small-v9"} <= own and not own & set(small)
    assert rows == [["xlingua-small@*" if name == small[0] else name, f"not installed: pip install {dist}"]
                    for dist, names in PROVIDERS.items() for name in names if name not in small[1:]]


def test_xlingua_models_leaves_out_a_model_no_package_provides(monkeypatch):
    from xlingua.encoders import registry

    registry._load()
    monkeypatch.setattr(registry, "_SPECS", dict(registry._SPECS))
    registry.register_spec("toy-unshipped", "a model no package ships", package="toy-unshipped")(lambda **o: None)
    registry.register_spec("toy-shipped", "a model a package ships", package="toy-shipped")(lambda **o: None)
    monkeypatch.setitem(PROVIDERS, "toy-models", ("toy-shipped",))
    monkeypatch.setattr(model_packages, "installed", lambda: {})
    res = CliRunner().invoke(app, ["models"])
    assert res.exit_code == 0, res.output
    specs = [line.split(None, 1) for line in res.output.split("\n\n")[0].splitlines()]
    assert ["toy-shipped", "a model a package ships [not installed: pip install toy-models]"] in specs
    assert "toy-unshipped" not in [pattern for pattern, _ in specs] and "laser-small" not in res.output
    assert "no model package provides it" not in res.output
    monkeypatch.setattr(model_packages, "installed", lambda: {"toy-unshipped": Path("/nowhere/toy-unshipped")})
    res = CliRunner().invoke(app, ["models"])  # an installed package declaring it makes it loadable
    assert ["toy-unshipped", "a model no package ships"] in [line.split(None, 1) for line in res.output.splitlines()]


def test_every_model_in_the_source_tree_ships_in_exactly_one_package():
    tomllib = pytest.importorskip("tomllib")
    models = REPO / "src" / "xlingua" / "models"
    claimed = []
    for dist, names in PROVIDERS.items():
        project = tomllib.loads((REPO / "packages" / dist / "pyproject.toml").read_text(encoding="utf-8"))
        package = dist.replace("-", "_")
        assert project["project"]["name"] == dist
        assert project["project"]["entry-points"]["xlingua.models"] == {name: package for name in names}
        wheel = project["tool"]["hatch"]["build"]["targets"]["wheel"]
        assert wheel["force-include"] == {f"../../src/xlingua/models/{name}": f"{package}/{name}" for name in names}
        assert (REPO / "packages" / dist / package / "__init__.py").is_file()
        claimed += names
    assert sorted(claimed) == sorted(p.name for p in models.iterdir() if p.is_dir()), \
        "each directory of src/xlingua/models must be in one model package (packages/README.md)"


def test_a_ship_into_the_source_tree_says_how_the_model_comes_to_load(models_dir, tmp_path):
    assert reinstall_hint(models_dir / "qe-cross") == (
        "qe-cross loads by name from the installed xlingua-models-qe: rebuild and reinstall it to pick this up "
        "(pip install ./packages/xlingua-models-qe, or make setup)")
    assert reinstall_hint(models_dir / "xlingua-small-v14") == (
        "no model package ships xlingua-small-v14: add it to one to load it by name (packages/README.md)")
    assert reinstall_hint(tmp_path / "runs" / "qe-cross") == ""


def test_meaning_ship_has_no_default_out_outside_a_source_checkout(monkeypatch):
    from xlingua.meaning.ship import default_out

    monkeypatch.setattr(model_packages, "source_models_dir", lambda: None)
    with pytest.raises(ValueError, match="give --out: this xlingua is installed from a wheel"):
        default_out("bundled")
