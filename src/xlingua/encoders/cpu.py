"""What this CPU multiplies natively, as the class `bundled` chooses its engine by
(bundled.PREFERENCE): the engines' order was measured per class (docs/engines.md)."""
from __future__ import annotations

#: from the most capable down; a CPU belongs to the first class whose units it has
CLASSES = ("amx", "avx512-bf16", "avx512", "avx2", "other")


def _has(check: str) -> bool:
    import torch

    probe = getattr(getattr(torch, "cpu", None), check, None)
    return bool(probe()) if probe is not None else False


def native_bf16() -> bool:
    """Whether this CPU multiplies bf16 matrices in hardware (AMX tiles or AVX512-BF16)."""
    return cpu_class() in ("amx", "avx512-bf16")


def cpu_class() -> str:
    """amx (Intel AMX tiles: bf16 and int8 matrix units), avx512-bf16 (AVX-512 with bf16 dot
    products, e.g. AMD Zen 4), avx512, avx2, or other."""
    if _has("_is_amx_tile_supported"):
        return "amx"
    if _has("_is_avx512_bf16_supported"):
        return "avx512-bf16"
    if _has("_is_avx512_supported"):
        return "avx512"
    return "avx2" if _has("_is_avx2_supported") else "other"
