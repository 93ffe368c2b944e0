"""OneAligner (Niu et al. 2022): one rich language pair reaches within 2 points of all pairs at
the same data budget; its training similarity (in-batch normalised BERTScore), its N^2-N
negatives and its loss as a whole each beat the alternative."""

from ..comparison import Claim, Comparison, Eval, Measure, Ref
from ..settings import START
from .common import TATOEBA_BERTSCORE, TATOEBA_BOTH, aligner, general, ranking, run


def onealigner() -> Comparison:
    recipe = "train_onealigner_de_en.yaml"
    runs = [
        run("de", recipe, [aligner(general(["de"]))], note="one rich pair, de-en"),
        run("de_seed1", recipe, [aligner(general(["de"]))], seed=1, note="the noise: de-en again, seed 1"),
        run("zh", recipe, [aligner(general(["zh"]))], note="one pair of another family, zh-en"),
        run("all", recipe, [{**aligner(general()), "temperature": 3.3}],
            note="all 158 pairs, languages drawn with p ~ n^0.3 (as the default model's recipe)"),
        run("cosine", recipe, [aligner(general(["de"]), similarity="cosine")],
            note="(b) cosine of mean-pooled tokens as the training similarity (similarity=cosine)"),
        run("row", recipe, [aligner(general(["de"]), negatives="row")],
            note="(c) N-1 negatives per row (negatives=row)"),
        run("ranking_de", recipe, [ranking(general(["de"]), margin=0.0)],
            note="(b)+(c) together: cosine with N-1 negatives per row and direction (translation ranking)"),
    ]
    tasks = ("tatoeba:all", "sts:sts17,sts17_extended")
    # Tatoeba is also read the paper's way: retrieval by in-batch normalised BERTScore.
    opts = ("tatoeba.bertscore=true",)
    evals = [Eval("start", START, tasks, opts)] + [Eval(r.name, r.name, tasks, opts) for r in runs]
    tato = Measure("tatoeba:all", TATOEBA_BOTH, "Tatoeba, all 84 languages, cosine accuracy, both directions")
    tato_bs = Measure("tatoeba:all", TATOEBA_BERTSCORE,
                      "Tatoeba, all 84 languages, in-batch normalised BERTScore accuracy, both directions")
    sts = Measure("sts:sts17,sts17_extended", ("sts17 cross-lingual spearman",), "STS17 cross-lingual Spearman")
    repeat = ("de", "de_seed1")  # the noise: de-en twice, seeds 0 and 1
    paper_a = "one rich pair reaches within 2.0 points of all pairs at the same data budget (abstract)"
    claims = []
    for pair in ("de", "zh"):
        for m in (tato_bs, tato, sts):
            claims.append(Claim(f"(a) {pair}-en within 2 points of all pairs", Ref(pair, m), Ref("all", m), -2.0,
                                repeat, paper=paper_a))
    for name, other, what in (("(b) in-batch normalised BERTScore beats cosine", "cosine", "training similarity"),
                              ("(c) N^2-N negatives beat N-1", "row", "negatives"),
                              ("(b)+(c) OneAligner's loss beats cosine ranking", "ranking_de", "loss")):
        for m in (tato_bs, tato, sts):
            claims.append(Claim(name, Ref("de", m), Ref(other, m), 0.0, repeat, paper=f"OneAligner's {what}"))
        if other != "row":  # each run read with the similarity it trained: BERTScore against cosine
            claims.append(Claim(name, Ref("de", tato_bs), Ref(other, tato), 0.0, repeat, paper=f"OneAligner's {what}"))
    return Comparison("onealigner", "OneAligner (Niu et al. 2022)", runs, evals, claims=claims)
