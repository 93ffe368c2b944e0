"""`bundled:bf16`: the bundled e5-small in bfloat16 on CPUs with native bf16 matrix units
(Intel AMX or AVX512-BF16), batched by token budget. The fastest path measured on the project
machine (see docs/results.md, "Embedding speed"): cosine to the fp32 reference >= 0.9999.

Weights and activations are bf16, matrix products accumulate in fp32 (oneDNN); pooling,
window averaging and normalization run in fp32 on the last hidden states. On a CPU without
native bf16, bf16 is emulated and slower than fp32, so `bundled` then resolves to fp32
(see `native_bf16`).
"""
from __future__ import annotations

import torch

from xlingua.encoders.batching import TokenBudgetMixin
from xlingua.encoders.bundled import BundledTorchEncoder


def native_bf16() -> bool:
    """Whether this CPU multiplies bf16 matrices in hardware (AMX tiles or AVX512-BF16)."""
    cpu = getattr(torch, "cpu", None)
    checks = [getattr(cpu, name, None) for name in ("_is_amx_tile_supported", "_is_avx512_bf16_supported")]
    return any(bool(check()) for check in checks if check is not None)


class BundledBF16Encoder(TokenBudgetMixin, BundledTorchEncoder):
    """For inference: `forward` (training) would run in bf16 too; train `bundled:torch`."""

    def __init__(self, prefix: str = "query", **options):
        super().__init__(prefix=prefix, **options)
        self.model = self.model.to(torch.bfloat16)
        self.name = self.name.replace("bundled:torch", "bundled:bf16")

    def _states(self, batch: dict, layer: int | None) -> torch.Tensor:
        return super()._states(batch, layer).float()
