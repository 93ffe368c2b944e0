"""`xlingua models`: the current version of xlingua's own model named once, the superseded versions
apart, each with the name that pins it and the name recorded commands use."""
from __future__ import annotations

from typer.testing import CliRunner

from xlingua.cli import app
from xlingua.encoders.loading import BUNDLED, SMALL_VERSIONS, current_version
from xlingua.encoders.model_packages import provider


def _blocks() -> list[str]:
    res = CliRunner().invoke(app, ["models"])
    assert res.exit_code == 0, res.output
    return res.output.split("\n\n")


def test_the_current_default_is_named_once():
    specs, versions, shipped = _blocks()
    current = f"xlingua-small@{current_version()}"
    naming = [line for line in (specs + "\n" + versions).splitlines() if current in line or BUNDLED in line]
    assert len(naming) == 1, naming
    assert naming[0].split()[:2] == ["current", current] and "bundled, the default" in naming[0]
    # where it is installed from: its own row when it ships in a package of its own, else the
    # row of its versions' package
    rows = [line.split()[0] for line in shipped.splitlines()[1:]]
    own = provider(BUNDLED) != provider(SMALL_VERSIONS["v1"])
    assert (BUNDLED in rows) is own and "xlingua-small@*" in rows


def test_the_superseded_versions_are_listed_apart_newest_first():
    specs, versions, shipped = _blocks()
    lines = versions.splitlines()
    assert lines[0].startswith("xlingua-small, xlingua's own model")
    assert lines[1].split()[0] == "current" and lines[2].split()[0] == "superseded"
    older = [v for v in reversed(SMALL_VERSIONS) if v != current_version()]
    pinned = [line.split("xlingua-small@", 1)[1].split()[0] for line in lines[2:]]
    assert pinned == older
    for line, version in zip(lines[2:], older):
        assert f"(recorded as {SMALL_VERSIONS[version]})" in line
    # the names recorded commands use are not listed as models of their own
    assert not any(line.split()[0] in SMALL_VERSIONS.values() for line in specs.splitlines())
    assert "xlingua-small@VERSION" in [line.split()[0] for line in specs.splitlines()]
