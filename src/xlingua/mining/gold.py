"""Gold pairs for `mine --calibrate`: read and checked against the corpora, then the F1-best
threshold over the ranked candidates (cheap: recomputed from the cached scores every run)."""
from __future__ import annotations

import numpy as np

from xlingua.data.text import InputError
from xlingua.mining.corpus import ShardedCorpus, Shards
from xlingua.similarity.calibrate import best_threshold


def check_gold(lines: list[tuple[int, str, str]], path, src: Shards, tgt: Shards) -> set[tuple[str, str]]:
    """The gold pairs, each checked against the corpora: without ids a side is a 1-based line
    number of its file; with ids it must be one of the file's ids (with --dedup a removed
    duplicate's id is allowed and counted as not in the corpora). Anything else names GOLD:LINE."""
    sides = {name: (shards, set(ShardedCorpus(shards).all_ids()))
             for name, shards in (("src", src), ("tgt", tgt))}
    gold = set()
    for no, *pair in lines:
        for name, value in zip(sides, pair):
            shards, known = sides[name]
            if not shards.has_ids:
                if not value.isdigit() or not 1 <= int(value) <= shards.lines:
                    raise InputError(f"{path}:{no}: {name} {value!r} is not a line number of "
                                     f"{shards.path} (1 to {shards.lines:,})")
            elif value not in known and not shards.duplicates_removed:
                raise InputError(f"{path}:{no}: {name} id {value!r} is not in {shards.path}")
        gold.add(tuple(v if sides[name][0].has_ids else str(int(v)) for name, v in zip(sides, pair)))
    return gold


def calibration(candidates: tuple, gold: set, src: ShardedCorpus, tgt: ShardedCorpus) -> dict:
    """P/R/F1 at the F1-best threshold over the candidates (score, src row, tgt row)."""
    s, a, b = candidates
    src_ids, tgt_ids = np.array(src.all_ids()), np.array(tgt.all_ids())
    pairs = zip(src_ids[a].tolist(), tgt_ids[b].tolist())
    correct = np.fromiter((p in gold for p in pairs), dtype=bool, count=len(a))
    known_src, known_tgt = set(src_ids.tolist()), set(tgt_ids.tolist())
    missing = sum(1 for x, y in gold if x not in known_src or y not in known_tgt)
    return {**best_threshold(s, correct, len(gold)), "gold_pairs_not_in_corpora": missing}
