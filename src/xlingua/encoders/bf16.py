"""bfloat16 inference on CPUs with native bf16 matrix units (Intel AMX or AVX512-BF16):
`bundled:bf16` (the bundled e5-small; the fastest path measured on the
project machine, see docs/results.md, "Embedding speed": cosine to the fp32 reference >= 0.9999)
and `bf16:PATH` (any transformers model directory, e.g. one `xlingua train` wrote).

Weights and activations are bf16, matrix products accumulate in fp32 (oneDNN); pooling,
window averaging and normalization run in fp32 on the hidden states. On a CPU without
native bf16, bf16 is emulated and slower than fp32, so `bundled` runs another engine there
(cpu.native_bf16; bundled.PREFERENCE). For inference only: `forward` (training) would run in bf16 too.
"""
from __future__ import annotations

import torch

from xlingua.encoders.e5 import BundledTorchEncoder
from xlingua.encoders.engines import register_engine
from xlingua.encoders.hf import TransformerEncoder
from xlingua.encoders.registry import register_spec


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


@register_engine("bf16", "torch in bfloat16 (cosine to fp32 >= 0.9999; fast only where the CPU has "
                 "native bf16: AMX or AVX512-BF16; any layer=)", layers=True)
def _bf16_engine(**options) -> BundledBF16Encoder:
    return BundledBF16Encoder(**options)


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
