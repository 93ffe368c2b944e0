"""Step 7: write `score<TAB>src<TAB>tgt[<TAB>src-id<TAB>tgt-id]`, gzipped, atomically.

The gzip header carries no name and no time, so the same pairs give the same bytes."""
from __future__ import annotations

import os

import numpy as np

from xlingua.mining.cache import atomic_path, open_gzip_writer

CHUNK = 100_000


def write_pairs(path, scores: np.ndarray, src_rows: np.ndarray, tgt_rows: np.ndarray,
                src_corpus, tgt_corpus) -> int:
    """Ids are written when the corpora have them (both or neither: the pipeline checks)."""
    with_ids = src_corpus.has_ids
    with atomic_path(path) as tmp:
        raw, gz = open_gzip_writer(tmp)
        try:
            for start in range(0, len(scores), CHUNK):
                sl = slice(start, start + CHUNK)
                src, src_ids = src_corpus.lookup(src_rows[sl])
                tgt, tgt_ids = tgt_corpus.lookup(tgt_rows[sl])
                if with_ids:
                    lines = [f"{s:.6f}\t{a}\t{b}\t{ia}\t{ib}\n" for s, a, b, ia, ib in
                             zip(scores[sl].tolist(), src, tgt, src_ids, tgt_ids)]
                else:
                    lines = [f"{s:.6f}\t{a}\t{b}\n" for s, a, b in
                             zip(scores[sl].tolist(), src, tgt)]
                gz.write("".join(lines).encode("utf-8"))
            gz.close()
            raw.flush()
            os.fsync(raw.fileno())
        finally:
            gz.close()
            raw.close()
    return len(scores)
