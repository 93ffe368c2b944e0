"""DuEAM (Goswami et al. 2021): the anchor model's word mover's distance as weak supervision,
trained in turn with translation ranking, helps cross-lingual STS and languages outside the
training pairs."""

from ..comparison import Claim, Comparison, Eval, Measure, Ref
from ..settings import START
from .common import TATOEBA_ROWS, general, ranking, run, tatoeba_codes

DUEAM_LANGS = ["de", "fr", "es", "ar", "tr"]
DUEAM_PAIRS = [p for l in DUEAM_LANGS for p in (f"en-{l}", f"{l}-en")]


def dueam() -> Comparison:
    recipe = "train_dueam_weak.yaml"
    rank = ranking(general(DUEAM_LANGS))
    weak = {"name": "dueam", "objective": "dueam", "data": {"type": "dueam_weak", "pairs": DUEAM_PAIRS},
            "options": {"lam": 0.003, "wmd_method": "emd"}}
    runs = [
        run("ranking", recipe, [rank], note="translation ranking alone, general de/fr/es/ar/tr-en"),
        run("ranking_seed1", recipe, [rank], seed=1, note="the noise: ranking alone again, seed 1"),
        run("multitask", recipe, [rank, weak],
            note="translation ranking and the frozen anchor's WMD on XNLI dev pairs (labels unused), in turn"),
    ]
    tasks = ("tatoeba:all", "sts:sts17,sts17_extended")
    evals = [Eval("start", START, tasks)] + [Eval(r.name, r.name, tasks) for r in runs]
    sts = Measure("sts:sts17,sts17_extended", ("sts17 cross-lingual spearman",), "STS17 cross-lingual Spearman")
    outside = Measure("tatoeba:all", TATOEBA_ROWS, "Tatoeba languages outside the training pairs, cosine, both directions",
                      rows=True, exclude=tatoeba_codes(DUEAM_LANGS))
    paper = "the anchor's WMD as weak supervision, multi-task, helps cross-lingual STS and zero-shot languages"
    claims = [Claim("WMD weak supervision + ranking beats ranking alone", Ref("multitask", m), Ref("ranking", m),
                    0.0, ("ranking", "ranking_seed1"), paper=paper) for m in (sts, outside)]
    return Comparison("dueam", "DuEAM (Goswami et al. 2021)", runs, evals, claims=claims)
