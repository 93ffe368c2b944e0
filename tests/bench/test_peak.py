"""The matrix-multiply peak's bookkeeping: one figure per dtype this CPU has, and a clear refusal
of a dtype it cannot measure (the figures themselves are timings and are not checked)."""
import pytest
from typer.testing import CliRunner

from xlingua.bench import peak
from xlingua.bench.flops import Shapes
from xlingua.cli import app

TINY = Shapes(layers=1, hidden=8, intermediate=16)


@pytest.mark.parametrize("bf16", [True, False])
@pytest.mark.parametrize("int8", [True, False])
def test_one_figure_per_dtype_the_cpu_has(bf16, int8, monkeypatch):
    if int8 and not peak._int8_engine():
        pytest.skip("torch has no quantized engine here")
    monkeypatch.setattr("xlingua.encoders.cpu.native_bf16", lambda: bf16)
    monkeypatch.setattr(peak, "_int8_engine", lambda: int8)
    have = peak.available_dtypes()
    assert have == ["fp32"] + ["bf16"] * bf16 + ["int8"] * int8
    got = peak.measure_peak(TINY, seconds=0.01, tokens=16)
    assert list(got) == have and all(v > 0 for v in got.values())
    assert list(peak.measure_peak(TINY, ["fp32", "fp32"], seconds=0.01, tokens=16)) == ["fp32"]


def test_unknown_or_unavailable_dtype_is_refused(monkeypatch):
    with pytest.raises(ValueError, match=r"^unknown dtype 'fp16': choose from fp32, bf16, int8$"):
        peak.measure_peak(TINY, ["fp32", "fp16"], seconds=0.01, tokens=16)
    monkeypatch.setattr("xlingua.encoders.cpu.native_bf16", lambda: False)
    with pytest.raises(ValueError, match=r"^bf16 cannot be measured on this CPU \(it has fp32"):
        peak.measure_peak(TINY, ["bf16"], seconds=0.01, tokens=16)


def test_bench_peak_refuses_an_unknown_dtype_in_one_line():
    result = CliRunner().invoke(app, ["bench", "peak", "--dtype", "fp16"])
    assert result.exit_code == 2
    assert result.output == "error: unknown dtype 'fp16': choose from fp32, bf16, int8\n"


def test_bench_peak_prints_one_row_per_dtype(tmp_path):
    from tests.training.conftest import make_tiny_model_dir

    model = make_tiny_model_dir(tmp_path / "tiny")
    result = CliRunner().invoke(app, ["bench", "peak", "--model", str(model), "--seconds", "0.01", "--tokens", "16"])
    assert result.exit_code == 0, result.output
    assert "(hidden 32, intermediate 64) on 16 tokens" in result.output
    rows = [line.split("|")[1].strip() for line in result.output.splitlines() if line.startswith("| ")][1:]
    assert rows == peak.available_dtypes()
