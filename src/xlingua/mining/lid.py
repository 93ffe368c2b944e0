"""Step 1b (two-stage mining): keep only the sentences identified as their side's language.

A crawl mixes languages on each side. Identifying every line first, as stopes and CCMatrix do
before mining, leaves a side's kNN search to its own language: on the scale benchmark's German
side about 5 % of the lines, on its English side 20 %, so the first stage embeds and searches
far fewer rows, and a static model's neighbour lists are no longer crowded by sentences of
other languages that share names and numbers with the query.

Items are the input shards: each writes a mask of the lines kept (data.langid, several
processes). The summary re-packs the kept lines into shards of the input's size, with their
original ids (line numbers without ids), so every later step and the output read them as
any corpus, and gold line numbers keep pointing at the input file."""
from __future__ import annotations

import dataclasses
import multiprocessing
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np

from xlingua.mining.cache import save_npy
from xlingua.mining.corpus import ShardedCorpus, Shards, write_shard
from xlingua.mining.step import Step, unkeyed, upstream


@dataclasses.dataclass(frozen=True)
class LidConfig:
    shards: Shards = upstream()
    workers: int = unkeyed(0)  # processes identifying a shard; 0: the CPU cores torch uses


def identify(texts: list[str], lang: str, pool: ProcessPoolExecutor | None = None, workers: int = 1) -> np.ndarray:
    """Whether each text is identified as `lang` (data.langid), split among the pool's
    processes: py3langid runs in Python, one core each."""
    from xlingua.data.langid import identified_chunk

    if pool is None or workers <= 1 or len(texts) < 2 * workers:
        return np.asarray(identified_chunk((texts, lang)), dtype=bool)
    step = -(-len(texts) // workers)
    parts = [(texts[i:i + step], lang) for i in range(0, len(texts), step)]
    return np.concatenate([np.asarray(m, dtype=bool) for m in pool.map(identified_chunk, parts)])


class LidStep(Step):
    name = "lid"
    output_type = Shards
    spread = True

    def items(self):
        return range(len(self.config.shards.sizes))

    def item_done(self, i: int) -> bool:
        return self._mask_path(i).exists()

    def item_rows(self, i: int) -> int:
        return self.config.shards.sizes[i]

    def _mask_path(self, i: int) -> Path:
        return self.dir / f"mask_{i:05d}.npy"

    def _workers(self) -> int:
        if self.config.workers:
            return self.config.workers
        import torch

        return torch.get_num_threads()

    def _pool(self) -> ProcessPoolExecutor | None:
        """One pool for all the items this process runs (a process starts in about a second)."""
        workers = self._workers()
        if workers > 1 and getattr(self, "_executor", None) is None:
            # spawn: a forked copy of a process holding torch's thread pools can hang
            self._executor = ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn"))
        return getattr(self, "_executor", None)

    def __getstate__(self):  # a Ray task gets the step without this process's pool
        return {k: v for k, v in self.__dict__.items() if k != "_executor"}

    def run(self, i: int, progress: bool) -> None:
        texts = ShardedCorpus(self.config.shards).shard_texts(i)
        save_npy(self._mask_path(i), identify(texts, self.config.shards.lang, self._pool(), self._workers()))

    def summarize(self) -> Shards:
        if getattr(self, "_executor", None) is not None:
            self._executor.shutdown()
            self._executor = None
        src = self.config.shards
        corpus = ShardedCorpus(src)
        size = max(src.sizes)
        texts: list[str] = []
        ids: list[str] = []
        shards: list[int] = []
        longest = 0
        for i in range(len(src.sizes)):
            keep = np.load(self._mask_path(i))
            for text, sid, ok in zip(corpus.shard_texts(i), corpus.shard_ids(i), keep.tolist()):
                if ok:
                    texts.append(text)
                    ids.append(sid)
                    longest = max(longest, len(text))
            while len(texts) >= size:
                shards.append(write_shard(self.dir, len(shards), texts[:size], ids[:size]))
                texts, ids = texts[size:], ids[size:]
        if texts:
            shards.append(write_shard(self.dir, len(shards), texts, ids))
        if not shards:
            raise ValueError(f"{src.path}: none of its {src.sentences:,} sentences is identified as "
                             f"{src.lang!r}; check --src-lang/--tgt-lang, or mine without --lid")
        return self.output({"path": src.path, "lang": src.lang, "lines": src.lines, "blank": src.blank,
                            "duplicates_removed": src.duplicates_removed, "sentences": sum(shards),
                            "shards": shards, "has_ids": src.has_ids, "longest_chars": longest})
