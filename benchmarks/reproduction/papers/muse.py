"""mUSE (Chidambaram et al. 2019): multi-task training (translation ranking, NLI, next-sentence
ranking) beats translation ranking alone, and hard negatives beat in-batch negatives only; with
the figures already recorded for the default model and an earlier small run."""

import gzip
from pathlib import Path

from xlingua.io import write_text

from ..comparison import Claim, Comparison, Eval, Fixed, Measure, Ref
from ..settings import START
from .common import TATOEBA_BOTH, general, ranking, run


def write_ordered_english(path: Path, lang: str = "de", sources=("ntrex", "newstest")) -> Path:
    """English news in reading order for next-sentence (response) ranking: the English side of
    ../shared/corpora/general/SOURCE/LANG-en.tsv.gz (NTREX and the WMT news test sets keep
    their documents in order). A paragraph ends at every headline (a line not ending in . ! or ?,
    closing quotes and brackets aside) and at every sentence held out for the general dev slices; both are left out."""
    from xlingua.data.general import dev_english, general_root

    held = dev_english()
    paragraphs, current = [], []
    for source in sources:
        with gzip.open(general_root() / source / f"{lang}-en.tsv.gz", "rt", encoding="utf-8") as f:
            for line in f:
                english = line.rstrip("\n").split("\t")[1].strip()
                if english in held or not english.rstrip("\"'\u201d\u2019)").endswith((".", "!", "?")):
                    paragraphs.append(current)
                    current = []
                else:
                    current.append(english)
        paragraphs.append(current)
        current = []
    write_text(path, "\n\n".join("\n".join(p) for p in paragraphs if len(p) > 1) + "\n")
    return path


MUSE_LANGS = ["ar", "de", "es", "fr", "it", "ja", "ko", "nl", "pl", "pt", "ru", "th", "tr", "zh", "zh-Hant"]
XNLI_MUSE = ["ar", "de", "en", "es", "fr", "ru", "th", "tr", "zh"]


def muse() -> Comparison:
    recipe = "train_muse_multitask.yaml"
    data = general(MUSE_LANGS, limit=2000)
    rank = ranking(data)
    nli = {"name": "nli", "objective": "nli", "data": {"type": "xnli", "langs": XNLI_MUSE}, "options": {"hidden": 512}}
    nexts = {"name": "next_sentence", "objective": "response_ranking",
             "data": {"type": "ordered_text", "paths": ["{ordered_en}"]}, "options": {"hidden": 512, "scale": 20}}
    runs = [
        run("ranking", recipe, [rank], note="translation ranking alone, mUSE's 15 languages, at most 2,000 pairs each"),
        run("ranking_seed1", recipe, [rank], seed=1, note="the noise: ranking alone again, seed 1"),
        run("multitask", recipe, [rank, nli, nexts],
            note="ranking + NLI (XNLI dev) + next-sentence ranking (English news in order), one step each in turn"),
        run("hard_negatives", recipe, [ranking(data, hard_negatives=1)],
            note="ranking with 1 hard negative per pair, mined with the start model"),
    ]
    tasks = ("tatoeba", "sts:sts17,sts17_extended,stsb", "retrieval")
    evals = [Eval("start", START, tasks)] + [Eval(r.name, r.name, tasks) for r in runs]
    spec = "sts:sts17,sts17_extended,stsb"
    mono = Measure(spec, ("sts17 monolingual spearman",), "STS17 monolingual Spearman")
    cross = Measure(spec, ("sts17 cross-lingual spearman",), "STS17 cross-lingual Spearman")
    stsb = Measure(spec, ("stsb spearman",), "STSb test Spearman (English)")
    m30k = Measure("retrieval", ("multi30k p@1 xx-en", "multi30k p@1 en-xx"), "Multi30k P@1 among 1,000, both directions")
    tato = Measure("tatoeba", TATOEBA_BOTH, "Tatoeba-36 (27 present), cosine accuracy, both directions")
    rep = ("ranking", "ranking_seed1")
    claims = [Claim("multi-task beats translation ranking alone", Ref("multitask", m), Ref("ranking", m), 0.0, rep,
                    paper="representations are enhanced by multi-task training (abstract)")
              for m in (mono, cross, stsb, m30k, tato)]
    claims += [Claim("hard negatives beat in-batch negatives only", Ref("hard_negatives", m), Ref("ranking", m),
                     0.0, rep, paper="ranking with hard negatives (mUSE's translation task)") for m in (m30k, tato, cross)]
    ablation = "docs/xlingua-small.md, 'What each task contributes' (240 steps, dev; EPYC, 2026-11-24)"
    table1 = ("docs/history.md, '(e) mUSE Table 1' (50 translation steps each, l10n 4 languages, batch 16; "
              "EPYC, 2026-11-23)")
    claims += [
        Claim("default model's ablation: distill+rank+sts beats rank alone",
              Fixed(82.89, "stsb_multi_mt dev Spearman, distill+rank+sts", ablation),
              Fixed(72.85, "stsb_multi_mt dev Spearman, rank alone", ablation), paper="multi-task helps STS"),
        Claim("default model's ablation: distill+rank+sts beats rank alone",
              Fixed(98.88, "dev retrieval mean, distill+rank+sts", ablation),
              Fixed(99.12, "dev retrieval mean, rank alone", ablation), paper="multi-task helps retrieval"),
        Claim("earlier small run: multi-task beats ranking alone",
              Fixed(73.1, "STS17-extended cross-lingual Spearman, multi-task", table1),
              Fixed(73.6, "STS17-extended cross-lingual Spearman, ranking alone", table1), paper="multi-task helps STS"),
        Claim("earlier small run: multi-task beats ranking alone",
              Fixed(80.9, "STS17-extended monolingual Spearman, multi-task", table1),
              Fixed(81.4, "STS17-extended monolingual Spearman, ranking alone", table1), paper="multi-task helps STS"),
    ]
    return Comparison("muse", "mUSE (Chidambaram et al. 2019)", runs, evals, claims=claims,
                      data={"ordered_en": ("data/english_news_ordered.txt", write_ordered_english)})
