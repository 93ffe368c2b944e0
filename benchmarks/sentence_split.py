"""Sentence splitters compared on paragraphs rebuilt from the general corpus.

NTREX-128 keeps the document order of WMT19 newstest, one sentence a line, in 121 languages
here (plus English). Paragraphs are rebuilt by joining 2-5 consecutive lines (with a space, or
nothing for Chinese/Japanese/Cantonese); the joins are the gold boundaries, as in Wicks & Post
(2021, "A unified approach to sentence segmentation of punctuated text in many languages"),
who built their test sets from WMT data the same way. Only lines that end in punctuation are
joined (a headline without a full stop has no boundary any splitter could see). A predicted
boundary is compared by its position in the paragraph counted in non-space characters, so a
splitter that trims or collapses spaces is not penalised.

Each candidate runs in its language-specific mode where it has one, else its default (English
or language-independent) rules; `native` in the table says which. Reports boundary precision /
recall / F1 per language and macro-averaged per script family, and sentences/s.

  pip install sentence-splitter pysbd blingfire sentencex   # the candidates
  nice -n 19 python benchmarks/sentence_split.py --per-lang 40 --out docs/bench/sentence_split
"""
from __future__ import annotations

import argparse
import json
import random
import time
import unicodedata
from collections import defaultdict
from pathlib import Path

from xlingua.data.general import general_root, read_file
from xlingua.data.scripts import lang_script, script_family
from xlingua.similarity.calibrate import prf

NO_SPACE = {"zh", "zh-Hant", "ja", "yue"}


def paragraphs(lang: str, n: int, seed: int, root=None) -> list[list[str]]:
    """n paragraphs of 2-5 consecutive NTREX lines (English: the English side of de-en)."""
    src = "de" if lang == "en" else lang
    pairs = read_file(general_root(root) / "ntrex" / f"{src}-en.tsv.gz", src, "ntrex")
    lines = [p.english if lang == "en" else p.text for p in pairs]
    rng = random.Random(f"{seed}:{lang}")
    ends = [bool(s) and unicodedata.category(s.rstrip()[-1]).startswith("P") for s in lines]
    out, tries = [], 0
    while len(out) < n and tries < 50 * n:
        tries += 1
        k = rng.randint(2, 5)
        i = rng.randrange(0, len(lines) - k)
        if all(ends[i:i + k - 1]):
            out.append([s.strip() for s in lines[i:i + k]])
    return out


def _nonspace_len(s: str) -> int:
    return sum(1 for c in s if not c.isspace())


def boundaries(sentences: list[str]) -> set[int]:
    pos, out = 0, set()
    for s in sentences[:-1]:
        pos += _nonspace_len(s)
        out.add(pos)
    return out


def candidates():
    """name -> (make(lang) -> split(text) -> list[str], native(lang) -> bool)."""
    out = {}
    try:
        from sentence_splitter import SentenceSplitter
        import sentence_splitter as ss

        ss_langs = {p.stem for p in (Path(ss.__file__).parent / "non_breaking_prefixes").glob("*.txt")}

        def make_ss(lang):
            return SentenceSplitter(language=lang if lang in ss_langs else "en").split
        out["sentence-splitter"] = (make_ss, lambda lang: lang in ss_langs)
    except ImportError:
        pass
    try:
        import pysbd
        from pysbd.languages import LANGUAGE_CODES

        def make_pysbd(lang):
            seg = pysbd.Segmenter(language=lang if lang in LANGUAGE_CODES else "en", clean=False)
            return seg.segment
        out["pysbd"] = (make_pysbd, lambda lang: lang in LANGUAGE_CODES)
    except ImportError:
        pass
    try:
        import blingfire

        out["blingfire"] = (lambda lang: lambda t: blingfire.text_to_sentences(t).split("\n"),
                            lambda lang: True)
    except ImportError:
        pass
    try:
        import sentencex

        out["sentencex"] = (lambda lang: lambda t: list(sentencex.segment(lang.split("-")[0], t)),
                            lambda lang: True)
    except ImportError:
        pass
    try:
        from xlingua.data.sentences import split_sentences

        out["xlingua"] = (lambda lang: lambda t: split_sentences(t, lang), lambda lang: True)
    except ImportError:
        pass
    return out


def score(pred: list[set[int]], gold: list[set[int]]) -> dict:
    tp = sum(len(p & g) for p, g in zip(pred, gold))
    return prf(sum(map(len, pred)), tp, sum(map(len, gold)))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--per-lang", type=int, default=40, help="paragraphs per language")
    ap.add_argument("--langs", nargs="*", help="default: every NTREX language and en")
    ap.add_argument("--only", nargs="*", help="candidates to run (default: all installed)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default=None, help="directory for sentence_split.json / .md")
    args = ap.parse_args()
    langs = args.langs or ["en"] + sorted(p.name[:-len("-en.tsv.gz")]
                                          for p in (general_root() / "ntrex").glob("*-en.tsv.gz"))
    cands = {k: v for k, v in candidates().items() if not args.only or k in args.only}
    results = defaultdict(dict)
    seconds, n_sent = defaultdict(float), defaultdict(int)
    for lang in langs:
        paras = paragraphs(lang, args.per_lang, args.seed)
        joiner = "" if lang in NO_SPACE else " "
        texts = [joiner.join(p) for p in paras]
        gold = [boundaries(p) for p in paras]
        for name, (make, native) in cands.items():
            split = make(lang)
            t0 = time.process_time()
            pred = [boundaries([s for s in split(t) if s.strip()]) for t in texts]
            seconds[name] += time.process_time() - t0
            n_sent[name] += sum(map(len, paras))
            results[name][lang] = {**score(pred, gold), "native": native(lang),
                                   "paragraphs": len(paras)}
    families = sorted({script_family(lang_script(l)) for l in langs})
    report = {"per_lang": results, "families": {}, "speed": {}, "settings": vars(args)}
    for name in cands:
        for fam in families:
            fl = [l for l in langs if script_family(lang_script(l)) == fam]
            report["families"].setdefault(name, {})[fam] = {
                "langs": len(fl), "f1": sum(results[name][l]["f1"] for l in fl) / len(fl),
                "precision": sum(results[name][l]["precision"] for l in fl) / len(fl),
                "recall": sum(results[name][l]["recall"] for l in fl) / len(fl)}
        report["families"][name]["all"] = {"langs": len(langs),
                                           "f1": sum(r["f1"] for r in results[name].values()) / len(langs)}
        report["speed"][name] = n_sent[name] / seconds[name] if seconds[name] else None
    md = markdown(report, families)
    print(md)
    if args.out:
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        (out / "sentence_split.json").write_text(json.dumps(report, indent=1) + "\n")
        (out / "sentence_split.md").write_text(md + "\n")


def markdown(report, families) -> str:
    names = list(report["families"])
    rows = ["| family (languages) | " + " | ".join(names) + " |",
            "|---|" + "---:|" * len(names)]
    for fam in families + ["all"]:
        n = report["families"][names[0]][fam]["langs"]
        rows.append(f"| {fam} ({n}) | " + " | ".join(f"{report['families'][k][fam]['f1']:.3f}" for k in names) + " |")
    rows.append("| sentences/s (CPU) | " + " | ".join(f"{report['speed'][k]:,.0f}" for k in names) + " |")
    return "boundary F1, macro-average over the family's languages\n\n" + "\n".join(rows)


if __name__ == "__main__":
    main()
