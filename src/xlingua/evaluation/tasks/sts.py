"""Semantic textual similarity: Spearman and Pearson correlation (x100) between the cosine of
the two sentences' embeddings (or another scorer of xlingua.evaluation.scoring) and the gold score, on STS 2017 (Cer et al. 2017, all tracks),
STS2017-extended (Reimers & Gurevych 2020), the STS Benchmark test set and stsb_multi_mt dev."""
from __future__ import annotations

import numpy as np
from scipy.stats import pearsonr, spearmanr

from xlingua.data import benchmarks as B
from xlingua.evaluation.base import EvalContext, Task, TaskResult, mean
from xlingua.evaluation.registry import register
from xlingua.evaluation.scoring import layer_option, pair_scores
from xlingua.similarity import normalize_rows

GROUPS = B.STS_GROUPS


def pair_cosines(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Cosine of each aligned row pair."""
    return np.sum(normalize_rows(a) * normalize_rows(b), axis=1)


def correlations(pred, gold) -> dict[str, float]:
    """Spearman and Pearson x100."""
    if len(gold) < 3:
        raise ValueError(f"a correlation needs at least 3 pairs, got {len(gold)}")
    return {"spearman": float(spearmanr(pred, gold).statistic) * 100,
            "pearson": float(pearsonr(pred, gold).statistic) * 100}


def score_pairs(ctx: EvalContext, pairs: B.ScoredPairs, scorer: str = "cosine", alpha: float = 0.5,
                layer: int | None = None) -> dict[str, float]:
    pairs = pairs.head(ctx.limit)
    pred = pair_scores(ctx, pairs.s1, pairs.s2, pairs.lang1, pairs.lang2, scorer, alpha=alpha, layer=layer)
    return {**correlations(pred, pairs.score), "n": int(len(pairs))}


@register
class STS(Task):
    name = "sts"
    description = "STS17, STS17-extended, STSb test, stsb_multi_mt dev: Spearman/Pearson of cosine x100"
    data = "sts17/, sts17_extended/, stsb/stsbenchmark/sts-test.csv, stsb_multi_mt/*-dev.csv"
    default_options = {"subset": "all", "scorer": "cosine", "alpha": 0.5, "layer": ""}

    def evaluate(self, ctx: EvalContext) -> TaskResult:
        opt = self.options(ctx)
        groups = self.subset(opt, GROUPS)
        scorer, alpha, layer = str(opt["scorer"]), float(opt["alpha"]), layer_option(opt["layer"])
        config = {"sets": list(groups), "similarity": scorer}
        if "inbatch" in scorer:
            config["alpha"] = alpha
        if scorer.startswith("bertscore"):
            config["layer"] = layer
        res = TaskResult(self.name, config=config)
        for group in groups:
            for pairs in ctx.track(B.read_sts_group(group, ctx.data_dir), f"sts {group}"):
                res.rows[pairs.name] = score_pairs(ctx, pairs, scorer, alpha, layer)
                if pairs.note:
                    res.notes.append(f"{pairs.name}: {pairs.note}")
            names = [n for n in res.rows if n.startswith(group + ".")]
            for metric in ("spearman", "pearson"):
                res.summary[f"{group} {metric}"] = mean(res.rows[n][metric] for n in names)
                if group in ("sts17", "sts17_extended"):
                    cross = [n for n in names if _is_cross(n)]
                    mono = [n for n in names if not _is_cross(n)]
                    res.summary[f"{group} cross-lingual {metric}"] = mean(res.rows[n][metric] for n in cross)
                    res.summary[f"{group} monolingual {metric}"] = mean(res.rows[n][metric] for n in mono)
        res.notes.append("sts17_extended cross-lingual = en-ar, en-de, en-tr, es-en, fr-en, it-en, nl-en "
                         "(the 7 cross-lingual columns of Reimers & Gurevych 2020, Table 2)")
        return res


def _is_cross(name: str) -> bool:
    l1, l2 = name.rsplit(".", 1)[-1].split("-")
    return l1 != l2
