"""The trainable sentence encoder: an xlingua TransformerEncoder (any transformers model dir,
or `bundled:torch`) seen as an nn.Module. It gives pooled sentence embeddings with gradients
and, for the token-level objectives (DuEAM's WMD, OneAligner's BERTScore), the token
embeddings of a chosen layer with a mask over the text's tokens (the prefix, e.g. e5's
"query: ", counts as text; [CLS]/[SEP] and padding do not).

Saving goes through the encoder's own `save` (xlingua.encoders.saving), so the result loads
in `xlingua embed --model DIR`, `xlingua eval` and sentence-transformers.

A student keeps some of the start model's transformer layers (`keep_layers`, the recipe's
`layers`); what it saves records them as `layers_from` (indices into the model the chain of
students started from), which `xlingua ship` reads to overlay the student on that model. A
narrower student also keeps fewer feed-forward units in each layer (`narrow_feed_forward`, the
recipe's `intermediate_size`); its config.json says so, and `xlingua ship` refuses it (an overlay
keeps the base's architecture).
"""
from __future__ import annotations

import json
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import torch
from torch import nn

from xlingua.encoders.pooling import pool
from xlingua.encoders.saving import XLINGUA_FILE
from xlingua.training.config import check_layers

#: xlingua.json's record of the start model's layers a student kept
LAYERS_FROM = "layers_from"


class SentenceModel(nn.Module):
    def __init__(self, encoder, max_seq_length: int = 128):
        super().__init__()
        self.model = encoder.model  # the trained module (shared with the encoder)
        self.__dict__["encoder"] = encoder  # plain attribute: not a submodule twice
        self.max_seq_length = max_seq_length
        self.precision = "fp32"  # "bf16": the transformer runs under bfloat16 autocast
        tok = encoder.tok
        self._head = len(getattr(tok, "head", [None]))  # e5: <s>; HF: e.g. [CLS]
        self._tail = tok.num_special - self._head
        # a student trained further keeps its record, so shipping still finds its layers
        self.layers_from = _recorded_layers(getattr(encoder, "path", None))

    @classmethod
    def load(cls, spec: str, max_seq_length: int = 128) -> "SentenceModel":
        """Any encoder spec (xlingua.encoders.loading) whose encoder is a trainable fp32
        transformer: `bundled:torch` or a model directory (transformers or sentence-transformers)."""
        from xlingua.encoders.loading import load_encoder

        encoder = load_encoder(spec)
        if not getattr(encoder, "trainable", False):
            raise ValueError(f"model {spec!r} loads as {type(encoder).__name__}, which cannot be "
                             "trained; give bundled:torch or a transformers model directory")
        return cls(encoder, max_seq_length)

    def keep_layers(self, layers: list[int], where: str = "layers") -> None:
        """Keep only the transformer layers `layers` (increasing indices), renumbered 0..k-1."""
        blocks = self._blocks()
        if blocks is None:
            raise ValueError(f"{where}: layers: a {type(self.model).__name__} has no list of layers to choose "
                             "from; only BERT-like models (model.encoder.layer) keep some of their layers")
        check_layers(layers, where, count=len(blocks))
        kept = nn.ModuleList(blocks[i] for i in layers)
        for new, block in enumerate(kept):  # attention caches are keyed by layer_idx
            for module in block.modules():
                if hasattr(module, "layer_idx"):
                    module.layer_idx = new
        self.model.encoder.layer = kept
        self.model.config.num_hidden_layers = len(kept)
        self.layers_from = [self.layers_from[i] for i in layers] if self.layers_from else list(layers)

    def _blocks(self) -> nn.ModuleList | None:
        """The transformer's list of layers (model.encoder.layer of a BERT-like model), or None."""
        blocks = getattr(getattr(self.model, "encoder", None), "layer", None)
        return blocks if isinstance(blocks, nn.ModuleList) else None

    def narrow_feed_forward(self, size: int, where: str = "intermediate_size") -> None:
        """Keep `size` of each layer's feed-forward units, those of the largest weights (the norm
        of a unit's input row times that of its output column: magnitude pruning of whole units,
        as Li et al. 2017, "Pruning Filters for Efficient ConvNets", prune filters), in their order.
        Units whose output column is zero change nothing when dropped."""
        blocks = self._blocks()
        if blocks is None or not all(
                hasattr(b, "intermediate") and hasattr(b, "output") for b in blocks):
            raise ValueError(f"{where}: intermediate_size: a {type(self.model).__name__} has no BERT-like "
                             "feed-forward layers (layer.intermediate.dense, layer.output.dense) to narrow")
        width = self.model.config.intermediate_size
        if size > width:
            raise ValueError(f"{where}: intermediate_size {size} is above the start model's {width}; "
                             "a student can only keep fewer feed-forward units")
        for block in blocks:
            up, down = block.intermediate.dense, block.output.dense
            with torch.no_grad():
                score = up.weight.norm(dim=1) * down.weight.norm(dim=0)
                keep = torch.topk(score, size).indices.sort().values
                block.intermediate.dense = _linear(up.weight[keep], up.bias[keep])
                block.output.dense = _linear(down.weight[:, keep], down.bias)
        self.model.config.intermediate_size = size

    @property
    def dim(self) -> int:
        return self.encoder.dim

    @property
    def prefix(self) -> str:
        return self.encoder.prefix

    @prefix.setter
    def prefix(self, value: str) -> None:
        self.encoder.tok.prefix = value

    def forward(self, texts: list[str], token_layer: int | None = None) -> dict:
        """{"embedding": (n, d)} pooled from the last layer (not normalized); with
        `token_layer` (hidden_states index, -1 = last) also {"tokens": (n, L, d),
        "token_mask": (n, L)} marking the text's tokens."""
        batch = self.encoder.tokenize(texts, max_length=self.max_seq_length)
        want_hidden = token_layer is not None and token_layer != -1
        # Only the transformer runs in bf16; pooling and the losses stay in fp32.
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=self.precision == "bf16"), \
                self._attention(self._eager_attention()):
            out = self.model(**batch, output_hidden_states=want_hidden)
        mask = batch["attention_mask"]
        last = out.last_hidden_state.float()
        result = {"embedding": pool(last, mask, self.encoder.pooling)}
        if token_layer is not None:
            result["tokens"] = last if token_layer == -1 else out.hidden_states[token_layer].float()
            pos = torch.arange(mask.shape[1])[None, :]
            length = mask.sum(1, keepdim=True)
            result["token_mask"] = ((pos >= self._head) & (pos < length - self._tail)).to(mask.dtype)
        return result

    def set_dropout(self, rate: float) -> None:
        """Every dropout of the backbone at `rate` while training (the saved config keeps its own)."""
        for module in self.model.modules():
            if isinstance(module, nn.Dropout):
                module.p = rate

    def _eager_attention(self) -> bool:
        # torch's fused attention is slow in a bf16 backward on CPU: without dropout, eager
        # attention made a step 1.7x faster on AMX (benchmarks/train_dropout.py). With attention
        # dropout on, eager attention draws a mask of (batch, heads, L, L) and loses that gain.
        if not (self.training and torch.is_grad_enabled() and self.precision == "bf16"):
            return False
        return all(m.p == 0 for m in self.model.modules() if isinstance(m, nn.Dropout))

    @contextmanager
    def _attention(self, eager: bool):
        config = getattr(self.model, "config", None)
        before = getattr(config, "_attn_implementation", None)
        if not eager or before in (None, "eager"):
            yield
            return
        config._attn_implementation = "eager"
        try:
            yield
        finally:
            config._attn_implementation = before

    def encode(self, texts: list[str], batch_size: int = 64, show_progress: bool = False) -> torch.Tensor:
        """Inference embeddings as the saved model will give them (eval mode, no grad), in the
        training precision: under bf16 the transformer runs as on the bf16 engines, at about twice
        fp32's speed on a CPU with native bf16, which halves the time of dev evaluations."""
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=self.precision == "bf16"):
            rows = self.encoder.encode(texts, batch_size=batch_size, show_progress=show_progress)
        return torch.from_numpy(np.asarray(rows, dtype=np.float32))

    def save(self, path: str | Path, **meta) -> Path:
        if self.layers_from:
            meta = {LAYERS_FROM: self.layers_from, **meta}
        return self.encoder.save(path, trained_by="xlingua train", **meta)


def _linear(weight: torch.Tensor, bias: torch.Tensor) -> nn.Linear:
    out = nn.Linear(weight.shape[1], weight.shape[0], dtype=weight.dtype, device=weight.device)
    out.weight.data.copy_(weight)
    out.bias.data.copy_(bias)
    return out


def _recorded_layers(path) -> list[int] | None:
    file = Path(path) / XLINGUA_FILE if path else None
    if file is None or not file.is_file():
        return None
    return json.loads(file.read_text(encoding="utf-8")).get(LAYERS_FROM)
