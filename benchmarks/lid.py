"""Language identifiers compared on single sentences from the general corpus.

Sentences: NTREX-128 (news, 121 languages) and NLLB-Seed (Wikipedia, 39 low-resource
varieties) from ../shared/corpora/general, plus English, `--per-lang` each (fixed seed): the
same kind of data as FLORES (professional translations of English news/Wikipedia sentences).
A prediction is right when its language, after CLDR's code replacements (iw -> he, prs -> fa,
zh-Hant -> zh), is the sentence's. Each library is scored on the languages it covers, and all
of them on the languages every one covers. Speed: sentences/s of CPU time, one call per
sentence, one thread.

With --thresholds FILE, also writes per-language thresholds for the chosen library (--pick):
for each language it covers, the 5th percentile of its probability on the sentences it
identifies rightly, capped at stopes' default 0.5 (so about 95% of real sentences pass), and
null (skip identification, keep the script check) where its accuracy is under 0.5.

  pip install py3langid lingua-language-detector pycld2   # the candidates
  nice -n 19 python benchmarks/lid.py --per-lang 100 --out OUT
"""
from __future__ import annotations

import argparse
import json
import random
import time
from collections import defaultdict
from pathlib import Path

import numpy as np

from xlingua.data.general import general_root, read_file
from xlingua.data.scripts import base_language


def sample(per_lang: int, seed: int, root=None) -> dict[str, list[str]]:
    """{language: sentences}; a language in two sources takes half from each."""
    by_lang: dict[str, list[str]] = defaultdict(list)
    files = [f for s in ("ntrex", "nllb-seed") for f in sorted((general_root(root) / s).glob("*-en.tsv.gz"))]
    english = []
    for path in files:
        lang = path.name[:-len("-en.tsv.gz")]
        pairs = read_file(path, lang, path.parent.name)
        by_lang[lang].extend(p.text for p in pairs)
        if path.parent.name == "ntrex" and lang == "de":
            english = [p.english for p in pairs]
    by_lang["en"] = english
    out = {}
    for lang, texts in sorted(by_lang.items()):
        texts = sorted(set(texts))
        out[lang] = random.Random(f"{seed}:{lang}").sample(texts, min(per_lang, len(texts)))
    return out


def candidates() -> dict:
    """name -> (classify(text) -> (code, probability), covered language bases)."""
    out = {}
    try:
        from py3langid.langid import MODEL_FILE, LanguageIdentifier

        ident = LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)
        out["py3langid"] = (lambda t: ident.classify(t), {base_language(c) for c in ident.nb_classes})
    except ImportError:
        pass
    try:
        from lingua import Language, LanguageDetectorBuilder

        codes = {base_language(l.iso_code_639_1.name.lower()) for l in Language.all()}
        for name, low in (("lingua", False), ("lingua-low", True)):
            builder = LanguageDetectorBuilder.from_all_languages().with_preloaded_language_models()
            det = (builder.with_low_accuracy_mode() if low else builder).build()

            def classify(t, det=det):
                best = det.compute_language_confidence_values(t)[0]
                return best.language.iso_code_639_1.name.lower(), best.value
            out[name] = (classify, codes)
    except ImportError:
        pass
    try:
        import pycld2

        def cld2(t):
            try:
                reliable, _, details = pycld2.detect(t, bestEffort=True)
            except pycld2.error:
                return "un", 0.0
            return details[0][1], details[0][2] / 100.0 if reliable else 0.0
        out["pycld2"] = (cld2, {base_language(c) for _, c in pycld2.LANGUAGES
                                if c not in ("un", "xxx") and c.upper() not in ("XX-QAA",)}
                         & {base_language(c) for n, c in pycld2.LANGUAGES
                            if n in pycld2.DETECTED_LANGUAGES})
    except ImportError:
        pass
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--per-lang", type=int, default=100)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--only", nargs="*", help="candidates to run (default: all installed)")
    ap.add_argument("--out", help="directory for lid.json / lid.md")
    ap.add_argument("--pick", default="py3langid", help="library whose thresholds --thresholds writes")
    ap.add_argument("--thresholds", help="write per-language thresholds (JSON) for --pick")
    args = ap.parse_args()
    data = sample(args.per_lang, args.seed)
    cands = {k: v for k, v in candidates().items() if not args.only or k in args.only}
    report = {"settings": vars(args), "libraries": {}}
    probs: dict[str, dict[str, list[float]]] = {}
    for name, (classify, covered) in cands.items():
        per_lang, seconds, n = {}, 0.0, 0
        right_probs: dict[str, list[float]] = {}
        for lang, texts in data.items():
            gold = base_language(lang)
            t0 = time.process_time()
            preds = [classify(t) for t in texts]
            seconds += time.process_time() - t0
            n += len(texts)
            ok = [base_language(c) == gold for c, _ in preds]
            per_lang[lang] = {"accuracy": sum(ok) / len(ok), "covered": gold in covered,
                              "n": len(ok)}
            right_probs[lang] = [p for (c, p), o in zip(preds, ok) if o]
        probs[name] = right_probs
        cov = [l for l in data if per_lang[l]["covered"]]
        report["libraries"][name] = {
            "per_lang": per_lang, "languages_covered": len(cov),
            "accuracy_covered": float(np.mean([per_lang[l]["accuracy"] for l in cov])),
            "sentences_per_s": n / seconds}
    common = [l for l in data if all(report["libraries"][k]["per_lang"][l]["covered"] for k in cands)]
    for name in cands:
        lib = report["libraries"][name]
        lib["accuracy_common"] = float(np.mean([lib["per_lang"][l]["accuracy"] for l in common]))
    report["common_languages"] = common
    md = markdown(report, len(data))
    print(md)
    if args.out:
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        (out / "lid.json").write_text(json.dumps(report, indent=1) + "\n")
        (out / "lid.md").write_text(md + "\n")
    if args.thresholds:
        lib = report["libraries"][args.pick]
        table = {}
        for lang, r in sorted(lib["per_lang"].items()):
            if r["covered"]:
                table[lang] = (None if r["accuracy"] < 0.5 else
                               round(min(0.5, float(np.percentile(probs[args.pick][lang], 5))), 3))
        # a bare language code (sr) takes the most careful of its scripts' entries (sr-Latn)
        for base in {base_language(l) for l in table} - set(table):
            variants = [v for l, v in table.items() if base_language(l) == base]
            table[base] = None if None in variants else min(variants)
        Path(args.thresholds).write_text(json.dumps(table, indent=1, sort_keys=True) + "\n")


def markdown(report, n_langs: int) -> str:
    rows = ["| library | languages covered (of %d) | accuracy on those | accuracy on the %d common | sentences/s (CPU) |"
            % (n_langs, len(report["common_languages"])), "|---|---:|---:|---:|---:|"]
    for name, lib in report["libraries"].items():
        rows.append(f"| {name} | {lib['languages_covered']} | {lib['accuracy_covered']:.3f} | "
                    f"{lib['accuracy_common']:.3f} | {lib['sentences_per_s']:,.0f} |")
    return "\n".join(rows)


if __name__ == "__main__":
    main()
