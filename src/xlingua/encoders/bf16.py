"""bfloat16 inference on CPUs with native bf16 matrix units (Intel AMX or AVX512-BF16):
`bundled:bf16` (the bundled e5-small; the fastest path measured on the
project machine, see docs/results.md, "Embedding speed": cosine to the fp32 reference >= 0.9999)
and `bf16:PATH` (any transformers model directory, e.g. one `xlingua train` wrote).

Weights and activations are bf16, matrix products accumulate in fp32 (oneDNN); pooling,
window averaging and normalization run in fp32 on the hidden states. On a CPU without
native bf16, bf16 is emulated and slower than fp32, so `bundled` then resolves to fp32
(see `native_bf16`). For inference only: `forward` (training) would run in bf16 too.
"""
from __future__ import annotations

import torch

from xlingua.encoders.bundled import BundledTorchEncoder
from xlingua.encoders.hf import TransformerEncoder
from xlingua.encoders.registry import register_spec


def native_bf16() -> bool:
    """Whether this CPU multiplies bf16 matrices in hardware (AMX tiles or AVX512-BF16)."""
    cpu = getattr(torch, "cpu", None)
    checks = [getattr(cpu, name, None) for name in ("_is_amx_tile_supported", "_is_avx512_bf16_supported")]
    return any(bool(check()) for check in checks if check is not None)


class _BF16States:
    """The model in bf16, its hidden states handed on in fp32."""

    trainable = False

    def _to_bf16(self) -> None:
        self.model = self.model.to(torch.bfloat16)

    def _states(self, batch: dict, layer: int | None) -> torch.Tensor:
        return super()._states(batch, layer).float()


class BundledBF16Encoder(_BF16States, BundledTorchEncoder):
    """NAME:bf16 for e5-small and the models shipped on it (`model`, `alias` as BundledTorchEncoder)."""

    def __init__(self, prefix: str = "query", **options):
        super().__init__(prefix=prefix, **options)
        self._to_bf16()
        self.name = self.name.replace(":torch", ":bf16", 1)


class TransformerBF16Encoder(_BF16States, TransformerEncoder):
    """`bf16:PATH`: a model directory (or hub name) in bf16; its fingerprint differs from the
    fp32 one by the name, so the two never share cached vectors."""

    def __init__(self, model, **options):
        super().__init__(model, **options)
        self._to_bf16()
        self.name = f"bf16:{self.name}"


@register_spec("bf16:PATH", "a model directory (e.g. one `xlingua train` wrote) in bfloat16 "
               "(for CPUs with native bf16, like bundled:bf16)")
def _bf16(path: str, **options) -> TransformerBF16Encoder:
    return TransformerBF16Encoder(path, **options)
