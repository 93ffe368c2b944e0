"""WMT20 sentence-level quality estimation, direct assessment (Specia et al. 2020): Pearson
correlation between cosine(source, machine translation) and the z-normalized human score
(z_mean) on test20, per language pair. The encoder is used as an unsupervised QE metric."""
from __future__ import annotations

from scipy.stats import pearsonr

from xlingua.data.benchmarks import MLQE_PAIRS, read_mlqe
from xlingua.evaluation.base import EvalContext, Task, TaskResult, mean
from xlingua.evaluation.registry import register
from xlingua.evaluation.tasks.sts import pair_cosines


@register
class QualityEstimation(Task):
    name = "qe"
    description = "WMT20 QE (DA) test20, 6 pairs: Pearson of cosine(source, translation) vs z_mean"
    data = "mlqe/{pair}/test20.*.df.short.tsv"
    default_options = {"subset": "all"}

    def evaluate(self, ctx: EvalContext) -> TaskResult:
        opt = self.options(ctx)
        pairs = MLQE_PAIRS if opt["subset"] == "all" else tuple(str(opt["subset"]).split(","))
        res = TaskResult(self.name, config={"pairs": list(pairs), "split": "test20", "gold": "z_mean"})
        for pair in ctx.track(pairs, "qe"):
            data = read_mlqe(pair, "test20", ctx.data_dir).head(ctx.limit)
            a = ctx.embed(data.s1, data.lang1)
            b = ctx.embed(data.s2, data.lang2)
            r = float(pearsonr(pair_cosines(a, b), data.score).statistic)
            res.rows[pair] = {"pearson": r, "n": int(len(data))}
        res.summary["pearson"] = mean(r["pearson"] for r in res.rows.values())
        res.notes.append("Pearson r as a fraction (WMT20 prints it so), not x100")
        return res
