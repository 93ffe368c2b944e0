"""BUCC 2018 bitext mining (Zweigenbaum et al. 2018) as LASER and XTREME run it: every
sentence's k nearest neighbours on the other side are its candidates, each keeps its best by
margin score (ratio margin over k=4 neighbours, Artetxe & Schwenk 2019), the selection mode
picks the pairs, then a score threshold; precision, recall and F1 x100. The pairs come from
mining.memory, which scores and selects with the code `xlingua mine` runs, so the same k,
margin and mode give the same pairs.

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
from xlingua.mining.memory import mine_rows
from xlingua.similarity.calibrate import best_threshold, gold_flags, two_fold
from xlingua.similarity.select import MODES


@register
class Bucc(Task):
    name = "bucc"
    description = "BUCC 2018 zh-en mining (sample split): margin scores, P/R/F1, threshold cross-validated"
    data = "bucc2018/zh-en.dev.{zh,en,gold}"
    default_options = {"subset": "zh", "k": 4, "margin": "ratio", "mode": "forward"}

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
            gold_per_fold = tuple(sum(1 for a, _ in gold if parity[a] == f) for f in (0, 1))
            for mode in MODES:
                s, a, b = mine_rows(x, y, int(opt["k"]), str(opt["margin"]), mode)
                correct = gold_flags(a, b, gold)
                best = best_threshold(s, correct, len(gold))
                folds = two_fold(s, correct, parity[a], gold_per_fold)
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
