"""The one interface every xlingua encoder implements."""
from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Callable, Sequence

import numpy as np

from xlingua.encoders.batching import CALL_COST, TOKEN_BUDGET, Plan, plan_batches

#: embed(texts, lang) -> (n, dim) vectors; an Encoder's `encode`, or the server's batcher
Embed = Callable[[Sequence[str], "str | None"], np.ndarray]


class Encoder(ABC):
    """Maps sentences to float32 vectors of a fixed size.

    Subclasses implement `_encode_batch`; `encode` handles empty input, cuts batches by the
    shared rule (encoders.batching: sorted by tokens, cut by padding cost and a token budget)
    and restores the caller's order.
    """

    name: str = "encoder"
    dim: int = 0
    #: whether rows come out L2-normalized
    normalized: bool = True
    #: True where `_sized` counts the model's own tokens: batches are then cut by the token budget
    #: alone and a caller's `batch_size` (a sentence count, often 64 from habit) is ignored
    by_tokens: bool = False
    #: False where a batch costs no padding (sparse pooling; an engine that concatenates a
    #: batch's tokens): batches are then `batch_size` texts in input order
    pads: bool = True
    token_budget: int = TOKEN_BUDGET
    call_cost: int = CALL_COST

    def encode(
        self,
        texts: Sequence[str],
        lang: str | None = None,
        batch_size: int | None = 64,
        show_progress: bool = False,
    ) -> np.ndarray:
        """One row per text, in the order given: (len(texts), dim) float32, L2-normalized where
        `normalized`. `batch_size` caps the sentences of a batch for encoders that do not count
        their own tokens (those cut batches by the token budget alone); `lang` is the texts'
        language for the encoders that use it."""
        texts = list(texts)
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        if not self.pads:
            step = batch_size or len(texts)
            batches = [list(range(s, min(s + step, len(texts)))) for s in range(0, len(texts), step)]
            return self._encode_batches(texts, batches, lang, show_progress, self._encode_batch)
        items, lengths = self._sized(texts)
        plan = self.plan(lengths, batch_size)
        return self._encode_batches(items, plan.batches, lang, show_progress, self._encode_items)

    def plan(self, lengths: Sequence[int], batch_size: int | None = None) -> Plan:
        """The batches `encode` runs for texts of `lengths` tokens."""
        return plan_batches(lengths, self.token_budget, getattr(self, "max_length", None), self.call_cost,
                            None if self.by_tokens else batch_size)

    def lengths(self, texts: Sequence[str]) -> list[int]:
        """Tokens per text as the model sees them (special tokens included)."""
        return self._sized(list(texts))[1]

    def _sized(self, texts: list[str]) -> tuple[list, list[int]]:
        """(what `_encode_items` takes, tokens per text): here the texts themselves, counted by
        the encoder's tokenizer (`tok`) where it has one, else at about 4 characters a token."""
        tok = getattr(self, "tok", None)
        if tok is None:
            return texts, [len(t) // 4 + 1 for t in texts]
        return texts, [len(ids) + tok.num_special for ids in tok.content_ids(texts)]

    def _encode_items(self, items: list, lang: str | None) -> np.ndarray:
        """Embed one batch of what `_sized` gave (an encoder that tokenizes once overrides it)."""
        return self._encode_batch(items, lang)

    def _encode_batches(self, items: list, batches, lang: str | None, show_progress: bool,
                        run: Callable) -> np.ndarray:
        """Rows of `items`, embedded by `run(batch, lang)` batch by batch (each a list of row
        indices)."""
        out = np.zeros((len(items), self.dim), dtype=np.float32)
        progress = _progress(len(items), self.name) if show_progress else None
        try:
            for idx in batches:
                out[idx] = np.asarray(run([items[i] for i in idx], lang), dtype=np.float32)
                if progress:
                    progress[0].update(progress[1], advance=len(idx))
        finally:
            if progress:
                progress[0].stop()
        return out

    @abstractmethod
    def _encode_batch(self, texts: list[str], lang: str | None) -> np.ndarray:
        """Embed one batch of texts in the given order."""

    def fingerprint(self) -> str:
        """A string that changes whenever the vectors would change (used for caching)."""
        return self.name

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r}, dim={self.dim})"


def _progress(total: int, label: str):
    from xlingua.progress import progress_bar

    return progress_bar(f"[bold]embed[/] {label}", total, rate="sent")
