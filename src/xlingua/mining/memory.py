"""Mining vectors held in memory: exact kNN both ways, margin scores, the mode's pairs. What the
server's /mine, the bucc task and document alignment's baseline run; on a corpus that fits in
memory it picks the pairs the `mine` pipeline picks (same similarity.bitext and .select)."""
from __future__ import annotations

import numpy as np

from xlingua.index.search import flat_index, search
from xlingua.similarity.bitext import batch_stat, both_directions, mean_row
from xlingua.similarity.cosine import normalize_rows
from xlingua.similarity.margin import check_score
from xlingua.similarity.select import select_pairs


def mine_rows(x: np.ndarray, y: np.ndarray, k: int = 4, margin: str = "ratio", mode: str = "max",
              alpha: float = 0.5) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(scores, rows of x, rows of y) of the pairs `mode` selects, by descending score, from
    exact k-nearest-neighbour lists both ways (no threshold)."""
    check_score(margin)
    x, y = normalize_rows(x), normalize_rows(y)
    fwd = search(flat_index([y]), x, k)
    bwd = search(flat_index([x]), y, k)
    stats = None
    if margin == "inbatch":
        stats = (batch_stat(x, mean_row([y])), batch_stat(y, mean_row([x])))
    return select_pairs(both_directions(fwd, bwd, k, margin, alpha, stats), mode)


def two_stage_rows(src: list[str], tgt: list[str], first, second, candidate_threshold: float, k: int = 4,
                   margin: str = "ratio", mode: str = "max") -> tuple:
    """mining.rescore's two stages on sentences held in memory: `first` (an encoder) finds the
    neighbour lists and the candidates over `candidate_threshold`, `second` re-embeds them and
    their neighbours and scores them by its margin. Returns (scores, rows, rows) and the plan."""
    from xlingua.mining.rescore import plan_candidates, rescore_candidates

    x, y = normalize_rows(first.encode(src)), normalize_rows(first.encode(tgt))
    fwd = search(flat_index([y]), x, k)
    bwd = search(flat_index([x]), y, k)
    plan = plan_candidates(fwd, bwd, k, margin, candidate_threshold)
    xs = normalize_rows(second.encode([src[i] for i in plan["src_rows"]])) if len(plan["src_rows"]) else x[:0]
    ys = normalize_rows(second.encode([tgt[j] for j in plan["tgt_rows"]])) if len(plan["tgt_rows"]) else y[:0]
    rows = rescore_candidates(plan, xs, ys, len(src), len(tgt), k, margin, mode)
    return rows, plan
