"""The matrix-multiply rate this CPU attains with torch on a model's linear layers, per dtype:
the ceiling an embedding path's FLOPs/s is set against (`xlingua bench peak`, `bench embed`).

One round runs one layer's linear layers (bench.flops) on a batch of `tokens` rows, the size
of batch `encode` cuts (encoders.batching.TOKEN_BUDGET): fp32; bf16 where the CPU multiplies
bf16 in hardware (emulated bf16 is no peak); int8 through torch's dynamically quantized linear
layer (activations quantized on the fly, as a quantized model would run) where torch has a
quantized engine for this CPU.
"""
from __future__ import annotations

import time
import warnings

import torch
from torch import nn

from xlingua.bench.flops import Shapes
from xlingua.encoders.batching import TOKEN_BUDGET

DTYPES = ("fp32", "bf16", "int8")


def available_dtypes() -> list[str]:
    """The dtypes of DTYPES this CPU can measure."""
    from xlingua.encoders.cpu import native_bf16

    return ["fp32"] + (["bf16"] if native_bf16() else []) + (["int8"] if _int8_engine() else [])


def _int8_engine() -> bool:
    try:
        from torch.ao.nn.quantized import dynamic  # noqa: F401
    except ImportError:
        return False
    return torch.backends.quantized.engine not in (None, "none")  # torch picks one per CPU


def check_dtypes(dtypes) -> list[str]:
    """`dtypes` (None: all this CPU has), each known and available, or a one-line ValueError."""
    have = available_dtypes()
    if dtypes is None:
        return have
    for d in dtypes:
        if d not in DTYPES:
            raise ValueError(f"unknown dtype {d!r}: choose from {', '.join(DTYPES)}")
        if d not in have:
            raise ValueError(f"{d} cannot be measured on this CPU (it has {', '.join(have)})")
    return list(dict.fromkeys(dtypes))


def measure_peak(shapes: Shapes, dtypes=None, seconds: float = 3.0,
                 tokens: int = TOKEN_BUDGET) -> dict[str, float]:
    """GFLOP/s per dtype: rounds of one layer's linear layers for about `seconds` each."""
    return {d: _rate(shapes, d, seconds, tokens) for d in check_dtypes(dtypes)}


def _layer(shapes: Shapes, dtype: str) -> nn.ModuleList:
    h, i = shapes.hidden, shapes.intermediate
    layer = nn.ModuleList([nn.Linear(h, h) for _ in range(4)] + [nn.Linear(h, i), nn.Linear(i, h)]).eval()
    if dtype == "bf16":
        return layer.to(torch.bfloat16)
    if dtype == "int8":
        with warnings.catch_warnings():  # torch marks its eager quantization API deprecated
            warnings.simplefilter("ignore")
            return torch.ao.quantization.quantize_dynamic(layer, {nn.Linear}, dtype=torch.qint8)
    return layer


def _rate(shapes: Shapes, dtype: str, seconds: float, tokens: int) -> float:
    torch.manual_seed(0)
    layer = _layer(shapes, dtype)
    x = torch.randn(tokens, shapes.hidden, dtype=torch.bfloat16 if dtype == "bf16" else torch.float32)

    def run():
        for lin in layer[:4]:
            lin(x)
        layer[5](layer[4](x))

    with torch.inference_mode():
        run()  # warm-up: allocations, packed weights
        rounds, start = 0, time.perf_counter()
        while rounds < 2 or time.perf_counter() - start < seconds:
            run()
            rounds += 1
        took = time.perf_counter() - start
    return rounds * 2 * shapes.linear_weights * tokens / took / 1e9
