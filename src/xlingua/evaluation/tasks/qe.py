"""WMT20 sentence-level quality estimation, direct assessment (Specia et al. 2020): Pearson
correlation between a score of (source, machine translation) and the z-normalized human score
(z_mean), per language pair, on test20 (or dev, where settings are chosen).

Scorers: the unsupervised pair scores of xlingua.evaluation.scoring (cosine, OneAligner's
in-batch normalization, BERTScore F over token embeddings, in-batch BERTScore), and
`regressor`, a supervised baseline: a small scikit-learn regressor on (u, v, |u-v|, u*v) of the
sentence vectors, fitted on the pair's **train** split z-scores, its setting chosen on **dev**
(xlingua.similarity.pair_regressor).
"""
from __future__ import annotations

from scipy.stats import pearsonr

from xlingua.data.benchmarks import MLQE_PAIRS, read_mlqe
from xlingua.evaluation.base import EvalContext, Task, TaskResult, mean
from xlingua.evaluation.registry import register
from xlingua.evaluation.scoring import SCORERS, layer_option, pair_scores

QE_SCORERS = (*SCORERS, "regressor")


@register
class QualityEstimation(Task):
    name = "qe"
    description = "WMT20 QE (DA) test20, 6 pairs: Pearson of a (source, translation) score vs z_mean"
    data = "mlqe/{pair}/{train,dev,test20}.*.df.short.tsv"
    default_options = {"subset": "all", "split": "test20", "scorer": "cosine", "alpha": 0.5, "layer": "",
                       "regressor": "ridge"}

    def evaluate(self, ctx: EvalContext) -> TaskResult:
        opt = self.options(ctx)
        pairs = self.subset(opt, MLQE_PAIRS)
        split, scorer = str(opt["split"]), str(opt["scorer"])
        if split not in ("test20", "dev"):
            raise ValueError(f"qe split must be test20 or dev (train is for the regressor), got {split!r}")
        if scorer not in QE_SCORERS:
            raise ValueError(f"unknown qe scorer {scorer!r}; choose from {QE_SCORERS}")
        config = {"pairs": list(pairs), "split": split, "gold": "z_mean", "scorer": scorer}
        if scorer in ("inbatch", "bertscore-inbatch"):
            config["alpha"] = float(opt["alpha"])
        if scorer.startswith("bertscore"):
            config["layer"] = layer_option(opt["layer"])
        if scorer == "regressor":
            config["regressor"] = str(opt["regressor"])
        res = TaskResult(self.name, config=config)
        for pair in ctx.track(pairs, "qe"):
            data = read_mlqe(pair, split, ctx.data_dir).head(ctx.limit)
            row = {"n": int(len(data))}
            if scorer == "regressor":
                model = self._fit(ctx, pair, str(opt["regressor"]))
                pred = model.predict(ctx.embed(data.s1, data.lang1), ctx.embed(data.s2, data.lang2))
                row.update(setting=model.setting, dev_pearson=model.dev_pearson[model.setting])
            else:
                pred = pair_scores(ctx, data.s1, data.s2, data.lang1, data.lang2, scorer,
                                   alpha=float(opt["alpha"]), layer=layer_option(opt["layer"]))
            res.rows[pair] = {"pearson": float(pearsonr(pred, data.score).statistic), **row}
        res.summary["pearson"] = mean(r["pearson"] for r in res.rows.values())
        res.notes.append("Pearson r as a fraction (WMT20 prints it so), not x100")
        if scorer == "regressor":
            res.notes.append("supervised: fitted on each pair's train split, setting chosen on its dev split")
        return res

    @staticmethod
    def _fit(ctx: EvalContext, pair: str, kind: str):
        from xlingua.similarity.pair_regressor import fit_pair_regressor

        def vectors(split):
            d = read_mlqe(pair, split, ctx.data_dir).head(ctx.limit)
            return ctx.embed(d.s1, d.lang1), ctx.embed(d.s2, d.lang2), d.score

        return fit_pair_regressor(vectors("train"), vectors("dev"), kind)
