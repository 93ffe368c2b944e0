"""The one interface every xlingua encoder implements."""
from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Callable, Sequence

import numpy as np

#: embed(texts, lang) -> (n, dim) vectors; an Encoder's `encode`, or the server's batcher
Embed = Callable[[Sequence[str], "str | None"], np.ndarray]


class Encoder(ABC):
    """Maps sentences to float32 vectors of a fixed size.

    Subclasses implement `_encode_batch`; `encode` handles empty input, length-sorted
    batching (so padding is small) and restores the caller's order.
    """

    name: str = "encoder"
    dim: int = 0
    #: whether rows come out L2-normalized
    normalized: bool = True

    def encode(
        self,
        texts: Sequence[str],
        lang: str | None = None,
        batch_size: int = 64,
        show_progress: bool = False,
    ) -> np.ndarray:
        texts = list(texts)
        # Sort by length so each batch holds sentences of similar size; write back by index.
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        batches = [order[start : start + batch_size] for start in range(0, len(order), batch_size)]
        return self._encode_batches(texts, batches, lang, show_progress)

    def _encode_batches(self, texts: list[str], batches, lang: str | None,
                        show_progress: bool) -> np.ndarray:
        """Rows of `texts`, embedded batch by batch (each a list of row indices)."""
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        if not texts:
            return out
        progress = _progress(len(texts), self.name) if show_progress else None
        try:
            for idx in batches:
                out[idx] = np.asarray(self._encode_batch([texts[i] for i in idx], lang), dtype=np.float32)
                if progress:
                    progress[0].update(progress[1], advance=len(idx))
        finally:
            if progress:
                progress[0].stop()
        return out

    @abstractmethod
    def _encode_batch(self, texts: list[str], lang: str | None) -> np.ndarray:
        """Embed one batch (already length-sorted) in the given order."""

    def fingerprint(self) -> str:
        """A string that changes whenever the vectors would change (used for caching)."""
        return self.name

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r}, dim={self.dim})"


def _progress(total: int, label: str):
    from xlingua.progress import progress_bar

    return progress_bar(f"[bold]embed[/] {label}", total, rate="sent")
