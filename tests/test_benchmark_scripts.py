"""Every script under benchmarks/ imports (its module-level imports still point at the package's
modules after a move), without running its main."""
import pytest

from tests.benchmark_script import BENCHMARKS, load_benchmark

SCRIPTS = sorted(p.stem for p in BENCHMARKS.glob("*.py"))


@pytest.mark.parametrize("name", SCRIPTS)
def test_benchmark_script_imports(name):
    assert callable(getattr(load_benchmark(name), "main", None)), f"{name}.py has no main()"
