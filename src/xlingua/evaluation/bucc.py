"""BUCC 2018 bitext mining (Zweigenbaum et al. 2018) as LASER and XTREME run it: each
sentence's best candidate by margin score (ratio margin over k=4 neighbours, Artetxe & Schwenk
2019) among its nearest neighbours, then a score threshold; precision, recall and F1 x100.

The shared data holds only BUCC's 'sample' split (the gold of the official test is not public),
so the threshold is cross-validated on it: source sentences are split by the parity of their
numeric id; the threshold is chosen (F1-best) on the odd-id half and applied to the even-id half,
and the other way round. The F1 at the best threshold over all of the data is reported too,
since that is what papers print for the sample/train split."""
from __future__ import annotations

import numpy as np

from xlingua.data.benchmarks import read_bucc
from xlingua.evaluation.base import EvalContext, Task, TaskResult, mean
from xlingua.evaluation.registry import register
from xlingua.index.search import flat_index, search
from xlingua.mining.calibrate import best_threshold, prf
from xlingua.similarity import apply_margin, normalize_rows

MODES = ("forward", "backward", "intersect", "max")


def best_candidates(x: np.ndarray, y: np.ndarray, k: int = 4, n_cand: int = 16, margin: str = "ratio"):
    """For each row of x, its best row of y by margin among its `n_cand` cosine neighbours.
    Returns (scores, y indices). The margin's neighbourhood means use k neighbours both ways."""
    x, y = normalize_rows(x), normalize_rows(y)
    cos_xy, nn_xy = search(flat_index([y]), x, max(k, n_cand))
    cos_yx, _ = search(flat_index([x]), y, k)
    x_mean = cos_xy[:, :k].mean(axis=1)
    y_mean = cos_yx.mean(axis=1)
    s = apply_margin(cos_xy, x_mean[:, None], y_mean[nn_xy], margin)
    best = s.argmax(axis=1)
    rows = np.arange(len(x))
    return s[rows, best], nn_xy[rows, best]


def mine_candidates(x, y, mode: str = "forward", **kw) -> dict[tuple[int, int], float]:
    """Candidate pairs (row of x, row of y) -> score for one mining mode."""
    if mode not in MODES:
        raise ValueError(f"unknown mode {mode!r}; choose from {MODES}")
    fwd, bwd = {}, {}
    if mode != "backward":
        s, j = best_candidates(x, y, **kw)
        fwd = {(i, int(jj)): float(v) for i, (jj, v) in enumerate(zip(j, s))}
    if mode != "forward":
        s, i = best_candidates(y, x, **kw)
        bwd = {(int(ii), j): float(v) for j, (ii, v) in enumerate(zip(i, s))}
    if mode == "forward":
        return fwd
    if mode == "backward":
        return bwd
    if mode == "intersect":
        return {p: v for p, v in fwd.items() if p in bwd}
    out = dict(bwd)
    for p, v in fwd.items():
        out[p] = max(v, out.get(p, v))
    return out


def ranked(cands: dict, gold: set) -> tuple[np.ndarray, np.ndarray]:
    """Candidate scores in descending order and whether each is a gold pair."""
    items = sorted(cands.items(), key=lambda kv: -kv[1])
    return (np.array([v for _, v in items], dtype=np.float64),
            np.array([p in gold for p, _ in items], dtype=bool))


def at_threshold(cands: dict, gold: set, threshold: float) -> dict:
    chosen = [p for p, v in cands.items() if v >= threshold]
    return prf(len(chosen), sum(p in gold for p in chosen), len(gold))


def cross_validated(cands: dict, gold: set, fold_of) -> list[dict]:
    """Two folds: threshold F1-best on one, P/R/F1 measured on the other."""
    out = []
    for calib, test in ((1, 0), (0, 1)):
        c_cands = {p: v for p, v in cands.items() if fold_of(p[0]) == calib}
        c_gold = {p for p in gold if fold_of(p[0]) == calib}
        t_cands = {p: v for p, v in cands.items() if fold_of(p[0]) == test}
        t_gold = {p for p in gold if fold_of(p[0]) == test}
        th = best_threshold(*ranked(c_cands, c_gold), len(c_gold))["threshold"]
        out.append({"threshold": th, **at_threshold(t_cands, t_gold, th if th is not None else np.inf)})
    return out


@register
class Bucc(Task):
    name = "bucc"
    description = "BUCC 2018 zh-en mining (sample split): margin scores, P/R/F1, threshold cross-validated"
    data = "bucc2018/zh-en.dev.{zh,en,gold}"
    default_options = {"subset": "zh", "k": 4, "margin": "ratio", "mode": "forward", "candidates": 16}

    def evaluate(self, ctx: EvalContext) -> TaskResult:
        opt = self.options(ctx)
        res = TaskResult(self.name, config={**opt, "split": "BUCC 2018 sample (dev)",
                                            "threshold": "2-fold by source-id parity: chosen on odd ids, "
                                                         "tested on even ids, and vice versa"})
        for lang in str(opt["subset"]).split(","):
            data = read_bucc(lang, "dev", ctx.data_dir)
            src_ids = sorted(data.src)
            tgt_ids = sorted(data.tgt)
            if ctx.limit is not None:
                # A quick run keeps the first `limit` gold pairs and `limit` other sentences a side.
                gold_part = data.gold[: ctx.limit]
                src_ids = sorted({a for a, _ in gold_part} | set(src_ids[: ctx.limit]))
                tgt_ids = sorted({b for _, b in gold_part} | set(tgt_ids[: ctx.limit]))
            src_row = {sid: i for i, sid in enumerate(src_ids)}
            tgt_row = {tid: j for j, tid in enumerate(tgt_ids)}
            gold = {(src_row[a], tgt_row[b]) for a, b in data.gold if a in src_row and b in tgt_row}
            x = ctx.embed([data.src[i] for i in src_ids], lang)
            y = ctx.embed([data.tgt[i] for i in tgt_ids], "en")
            parity = np.array([int(i.rsplit("-", 1)[-1]) % 2 for i in src_ids])
            for mode in MODES:
                cands = mine_candidates(x, y, mode, k=int(opt["k"]), n_cand=int(opt["candidates"]),
                                        margin=str(opt["margin"]))
                best = best_threshold(*ranked(cands, gold), len(gold))
                folds = cross_validated(cands, gold, lambda i: parity[i])
                res.rows[f"{lang}-en {mode}"] = {
                    "f1 best": best["f1"] * 100, "p best": best["precision"] * 100,
                    "r best": best["recall"] * 100, "threshold best": best["threshold"],
                    "f1 cv": mean(f["f1"] for f in folds) * 100,
                    "p cv": mean(f["precision"] for f in folds) * 100,
                    "r cv": mean(f["recall"] for f in folds) * 100,
                    "f1 even (odd-calibrated)": folds[0]["f1"] * 100,
                    "f1 odd (even-calibrated)": folds[1]["f1"] * 100,
                    "gold": len(gold)}
            main = res.rows[f"{lang}-en {opt['mode']}"]
            res.summary[f"{lang}-en f1 best"] = main["f1 best"]
            res.summary[f"{lang}-en f1 cv"] = main["f1 cv"]
        res.notes.append(f"summary figures use mode={opt['mode']}; rows give every mode. 'best' = F1-best "
                         "threshold on all the data (optimistic, what papers print for this split); "
                         "'cv' = mean of the two held-out folds")
        return res
