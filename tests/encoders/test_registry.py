"""Encoder specs declared in their own files (`@register_spec`) and read by load_encoder."""
import re
import types
from pathlib import Path

import numpy as np
import pytest

from xlingua.encoders import loading, registry
from xlingua.encoders.base import Encoder

CONTRIBUTING = Path(__file__).resolve().parents[2] / "docs" / "guide" / "contributing.md"


class Const(Encoder):
    def __init__(self, name, dim=2):
        self.name, self.dim = name, dim

    def _encode_batch(self, texts, lang):
        return np.ones((len(texts), self.dim), np.float32) / np.sqrt(self.dim)


@pytest.fixture
def specs(monkeypatch):
    """The package's specs, then a copy to register into: a test leaves nothing behind."""
    registry._load()
    monkeypatch.setattr(registry, "_SPECS", dict(registry._SPECS))


def test_every_spec_of_the_package_is_declared_once_in_the_order_they_are_tried():
    patterns = [p for p, _ in registry.spec_table()]
    assert len(patterns) == len(set(patterns))
    versions = list(loading.SMALL_VERSIONS.values())  # pinned in test_versions.py
    assert set(patterns) == {"BASE+meaning:PATH", "BASE+meaning", "A,B", "bundled", "e5-small", *versions,
                             "xlingua-qe", "use", "bundled:PATH", "e5-small:PATH", *(f"{v}:PATH" for v in versions), "xlingua-qe:PATH",
                             "xlingua-small@VERSION", "laser:PATH", "bf16:PATH", "openvino:PATH", "ov-bf16:PATH", "ov-int8:PATH", "static-small", "static:PATH",
                             "PATH"}
    assert patterns[:3] == ["BASE+meaning:PATH", "BASE+meaning", "A,B"]  # longest separator first
    assert patterns[-1] == "PATH"  # the last resort


@pytest.mark.parametrize("spec, builder, args", [
    ("bundled", "_e5_family", ()), (" bundled:fast ", "_e5_family", ("fast",)), ("use", "_use", ()),
    ("xlingua-small@v2", "_pinned", ("v2",)), ("xlingua-small@v3:torch", "_pinned", ("v3:torch",)),
    ("laser:runs/l", "_laser", ("runs/l",)), ("bf16:d", "_bf16", ("d",)), ("ov-bf16:d", "_ov_bf16_dir", ("d",)),
    ("static-small", "_packaged", ()), ("static:runs/s/model", "_static", ("runs/s/model",)),
    ("a,b,c", "_concat", ("a", "b,c")), ("a,b+meaning:p,q", "_meaning", ("a,b", "p,q")),
    ("a,b+meaning", "_shipped_meaning", ("a,b",)), ("org/model", "_path", ("org/model",)),
    ("laser-small", "_path", ("laser-small",)),  # no BiLSTM ships: an unknown name, like any other
])
def test_a_spec_goes_where_it_went_before_the_registry(spec, builder, args):
    build, got = registry.resolve(spec.strip())
    assert getattr(build, "func", build).__name__ == builder and got == args


def test_a_spec_registered_in_another_module_loads_by_name(specs):
    registry.register_spec("toy:N", "a toy")(lambda n, **o: Const(f"toy{n}", int(n)))
    registry.register_spec("toy:big", "a toy with a name of its own")(lambda **o: Const("big", 5))
    assert ("toy:N", "a toy") in registry.spec_table()
    assert loading.load_encoder("toy:3").name == "toy3"
    assert loading.load_encoder(" toy:big ").dim == 5  # a name before a prefix
    both = loading.load_encoder("toy:3,toy:big")
    assert both.name == "toy3,big" and both.dim == 8
    three = loading.load_encoder("toy:1,toy:2,toy:3")
    assert three.dim == 6 and len(three.encoders) == 3  # flat, not nested


def test_two_encoders_for_one_spec_are_refused(specs):
    with pytest.raises(ValueError, match="two encoders for spec 'use'"):
        registry.register_spec("use", "another")(lambda **o: Const("use"))


@pytest.mark.parametrize("pattern", ["", ":PATH:", "x:PATH:y", "a:Path"])
def test_a_bad_pattern_is_refused(pattern):
    with pytest.raises(ValueError, match="bad encoder spec pattern"):
        registry.register_spec(pattern, "")


def test_xlingua_models_lists_every_spec_with_its_help(specs):
    from typer.testing import CliRunner

    from xlingua.cli import MODEL_HELP, app

    registry.register_spec("toy:N", "a toy registered elsewhere")(lambda n, **o: Const(f"toy{n}", int(n)))
    res = CliRunner().invoke(app, ["models"])
    assert res.exit_code == 0
    rows = [line.split(None, 1) for line in res.output.split("\n\n")[0].splitlines()]  # the versions follow
    versioned = {p for name in loading.SMALL_VERSIONS.values() for p in (name, f"{name}:PATH")}  # listed with them
    assert sorted(p for p, _ in rows) == sorted(p for p, _ in registry.spec_table() if p not in versioned)
    assert ["toy:N", "a toy registered elsewhere"] in rows
    assert rows[0][0] == "bundled" and rows[-1][0] == "PATH"  # names first, the last resort last
    res = CliRunner().invoke(app, ["embed", "--help"], env={"COLUMNS": "400"})
    assert res.exit_code == 0 and "xlingua models" in MODEL_HELP and "xlingua models" in res.output


def test_the_guide_encoder_example_is_a_spec(specs):
    section = CONTRIBUTING.read_text(encoding="utf-8").split("## Adding to xlingua", 1)[1].split("\n## ", 1)[0]
    code = re.search(r"```python\n(# src/xlingua/encoders/hashed.py\n.*?)```", section, re.S)[1]
    exec(compile(code, "hashed.py", "exec"), types.ModuleType("guide_hashed").__dict__)
    enc = loading.load_encoder("hashed:64")
    x = enc.encode(["the cat", "cat the", "a dog"])
    assert x.shape == (3, 64) and np.allclose(np.linalg.norm(x, axis=1), 1.0)
    assert np.allclose(x[0], x[1]) and not np.allclose(x[0], x[2])
    assert loading.load_encoder("hashed:8,hashed:16").dim == 24  # and it combines like any spec
