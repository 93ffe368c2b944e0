"""Tatoeba similarity search (Artetxe & Schwenk 2019, LASER; the XTREME subset of 36
languages in Hu et al. 2020): each sentence's nearest neighbour among all sentences of the
other side must be its translation. Accuracy and error rate (100 - accuracy), both directions.

With `bertscore=true` it also retrieves by BERTScore F over content token embeddings, plain and
in-batch normalized over the whole language pair (`bertscore-inbatch`: OneAligner's similarity
at inference, Niu et al. 2022). That encodes every sentence a second time, for its tokens."""
from __future__ import annotations

import numpy as np

from xlingua.data.benchmarks import read_tatoeba, tatoeba_langs
from xlingua.evaluation.base import EvalContext, Task, TaskResult, mean
from xlingua.evaluation.registry import register
from xlingua.evaluation.scoring import layer_option, token_embeddings
from xlingua.similarity import cosine_matrix, retrieval_accuracy, score_matrix
from xlingua.similarity.bertscore import bertscore_full
from xlingua.similarity.inbatch import inbatch_normalize

# XTREME's 36 Tatoeba languages (Hu et al. 2020, Table 1), in LASER's ISO 639-3 file codes.
XTREME36 = ("afr", "ara", "ben", "bul", "cmn", "deu", "ell", "est", "eus", "fin", "fra", "heb",
            "hin", "hun", "ind", "ita", "jav", "jpn", "kat", "kaz", "kor", "mal", "mar", "nld",
            "pes", "por", "rus", "spa", "swh", "tam", "tel", "tgl", "tha", "tur", "urd", "vie")

METHODS = ("cosine", "margin", "inbatch")
TOKEN_METHODS = ("bertscore", "bertscore-inbatch")


def score_matrices(x: np.ndarray, y: np.ndarray, k: int = 4, alpha: float = 0.5) -> dict[str, np.ndarray]:
    """The three retrieval scorings: cosine, ratio margin over k neighbours (Artetxe & Schwenk
    2019), in-batch normalization (OneAligner, Niu et al. 2022) with weight alpha."""
    cos = cosine_matrix(x, y)
    return {"cosine": cos,
            "margin": score_matrix(x, y, "ratio", k=k),
            "inbatch": score_matrix(x, y, "inbatch", alpha=alpha)}


def token_score_matrices(x: list[np.ndarray], y: list[np.ndarray], alpha: float = 0.5) -> dict[str, np.ndarray]:
    """BERTScore F between every pair of sentences (token embedding arrays), plain and in-batch
    normalized with weight alpha."""
    full = bertscore_full(x, y)
    return {"bertscore": full, "bertscore-inbatch": inbatch_normalize(full, alpha=alpha, global_term=False)}


def subset_langs(subset: str, present: list[str]) -> tuple[list[str], list[str]]:
    """(languages to run, languages of the subset missing from the data)."""
    if subset == "all":
        return present, []
    if subset == "tatoeba36":
        return [l for l in XTREME36 if l in present], [l for l in XTREME36 if l not in present]
    wanted = [l.strip() for l in subset.split(",") if l.strip()]
    missing = [l for l in wanted if l not in present]
    if missing:
        raise ValueError(f"Tatoeba has no data for {missing}; present: {' '.join(present)}")
    return wanted, []


@register
class Tatoeba(Task):
    name = "tatoeba"
    description = ("Tatoeba bitext retrieval, xx->en and en->xx accuracy (cosine, ratio margin, in-batch norm.; "
                   "BERTScore with bertscore=true)")
    data = "tatoeba/tatoeba.xxx-eng.{xxx,eng}"
    default_options = {"subset": "tatoeba36", "k": 4, "alpha": 0.5, "bertscore": False, "layer": ""}

    def evaluate(self, ctx: EvalContext) -> TaskResult:
        opt = self.options(ctx)
        methods = METHODS + (TOKEN_METHODS if opt["bertscore"] else ())
        alpha, layer = float(opt["alpha"]), layer_option(opt["layer"])
        langs, missing = subset_langs(str(opt["subset"]), tatoeba_langs(ctx.data_dir))
        res = TaskResult(self.name, config={**opt, "languages": langs,
                                            "retrieval": "full matrix, all sentences of a language pair"})
        if missing:
            res.notes.append(f"{len(missing)} of the {len(XTREME36)} XTREME languages are absent from the "
                             f"data and not averaged: {' '.join(missing)}")
        for lang in ctx.track(langs, "tatoeba"):
            xx, en = read_tatoeba(lang, ctx.data_dir)
            xx, en = ctx.head(xx), ctx.head(en)
            x, y = ctx.embed(xx, lang), ctx.embed(en, "en")
            row = {"n": int(len(xx))}
            scores_by = score_matrices(x, y, int(opt["k"]), alpha)
            if opt["bertscore"]:
                tokens = token_embeddings(ctx, xx, layer), token_embeddings(ctx, en, layer)
                scores_by.update(token_score_matrices(*tokens, alpha=alpha))
            for method, scores in scores_by.items():
                fwd, bwd = retrieval_accuracy(scores)
                row[f"{method} xx-en"] = fwd
                row[f"{method} en-xx"] = bwd
                row[f"err {method} xx-en"] = 100 - fwd
                row[f"err {method} en-xx"] = 100 - bwd
            res.rows[lang] = row
        for method in methods:
            for d in ("xx-en", "en-xx"):
                res.summary[f"acc {method} {d}"] = mean(r[f"{method} {d}"] for r in res.rows.values())
                res.summary[f"err {method} {d}"] = 100 - res.summary[f"acc {method} {d}"]
        res.notes.append("accuracy x100 averaged over languages (macro); error = 100 - accuracy; "
                         "XTREME reports xx-en accuracy, LASER the error rate")
        return res
