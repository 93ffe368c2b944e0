"""Matrix-multiply FLOPs of a BERT-style encoder, counted from its shapes.

Per layer and per model input of t tokens: the linear layers (query, key, value and attention
output, hidden x hidden each; the feed-forward pair, hidden x intermediate each) do one
multiply and one add per weight per token, 2 x weights x t; attention's two products (scores
Q K^T, then their weighted sum of V) do 2 x t^2 x hidden each. Heads split `hidden` between
them, so their number cancels out. Biases, norms, softmax and GELU are elementwise, not matrix
work, and are left out: the count is what a matrix-multiply peak can be set against.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable


@dataclass(frozen=True)
class Shapes:
    layers: int
    hidden: int
    intermediate: int

    @classmethod
    def of(cls, config) -> "Shapes":
        """From a transformers config (BERT, XLM-R and the like)."""
        return cls(config.num_hidden_layers, config.hidden_size, config.intermediate_size)

    @property
    def linear_weights(self) -> int:
        """Weights of one layer's linear layers."""
        return 4 * self.hidden * self.hidden + 2 * self.hidden * self.intermediate

    def input_flops(self, tokens: int) -> int:
        """One model input (one window) of `tokens` tokens, special tokens included."""
        per_layer = 2 * self.linear_weights * tokens + 4 * tokens * tokens * self.hidden
        return self.layers * per_layer


def text_flops(shapes: Shapes, tokens: int, window: int | None = None) -> int:
    """A text of `tokens` tokens; above `window` it runs as windows of `window` tokens (each
    window's own special tokens are not counted again: a few tokens in hundreds)."""
    if not window or tokens <= window:
        return shapes.input_flops(tokens)
    full, rest = divmod(tokens, window)
    return full * shapes.input_flops(window) + (shapes.input_flops(rest) if rest else 0)


def total_flops(shapes: Shapes, lengths: Iterable[int], window: int | None = None) -> int:
    return sum(text_flops(shapes, n, window) for n in lengths)
