"""The gate a candidate default model must pass against the current one, from two `xlingua eval`
results on the full evaluation sets (tasks bucc tatoeba tatoeba:all sts qe xnli):

    xlingua eval -m bundled bucc tatoeba tatoeba:all sts qe xnli -o runs/gate/bundled.json
    xlingua eval -m xlingua-small bucc tatoeba tatoeba:all sts qe xnli -o runs/gate/xlingua-small.json
    .venv/bin/python benchmarks/gate.py runs/gate/bundled.json runs/gate/xlingua-small.json

Prints the gate table (figure, now, candidate, gate, goal), the verdict, and Tatoeba per language
(all 84, ratio margin, mean of both directions). Exit code 0 when the candidate passes, 1 if not.

A candidate that learnt new languages (`xlingua extend`) also brings the dev rows of those
languages, from `xlingua extend-report` of both models on the same languages:

    xlingua extend-report -m bundled --lang tibetan --lang tifinagh --lang arabic-script -o runs/gate/dev-now.json
    xlingua extend-report -m CANDIDATE --lang tibetan --lang tifinagh --lang arabic-script -o runs/gate/dev-cand.json
    .venv/bin/python benchmarks/gate.py NOW.json CANDIDATE.json --dev runs/gate/dev-now.json runs/gate/dev-cand.json

Each language group's mean dev error (both directions) may not rise, and no other language in the
reports may rise by more than the per-language allowance.
"""
from __future__ import annotations

import argparse
import json
import sys


def _tatoeba(result: dict, key: str) -> dict[str, float]:
    rows = result["tasks"][key]["rows"]
    return {lang: (r["margin xx-en"] + r["margin en-xx"]) / 2 for lang, r in rows.items()}


def _mean(d: dict) -> float:
    return sum(d.values()) / len(d)


NOW = None  # a gate of "not below today's figure"
#: (figure, its value in an eval result, gate: not below (NOW = today's), goal: a number, or a
#: function of today's figure)
FIGURES = (
    ("Tatoeba-36 accuracy, ratio margin, both directions",
     lambda r: _mean(_tatoeba(r, "tatoeba")), NOW, 93.0),
    ("Tatoeba all 84 languages, ratio margin, both directions",
     lambda r: _mean(_tatoeba(r, "tatoeba:all")), NOW, lambda now: now + 4),
    ("STS2017-extended cross-lingual Spearman (7 pairs)",
     lambda r: r["tasks"]["sts"]["summary"]["sts17_extended cross-lingual spearman"], NOW, 80.0),
    ("STS2017-extended monolingual Spearman (ar, en, es)",
     lambda r: r["tasks"]["sts"]["summary"]["sts17_extended monolingual spearman"], 81.0, 83.0),
    ("BUCC zh-en F1 (best threshold)", lambda r: r["tasks"]["bucc"]["summary"]["zh-en f1 best"], NOW, 92.0),
    ("WMT20 QE test20 Pearson (cosine, 6 pairs)", lambda r: r["tasks"]["qe"]["summary"]["pearson"], 0.260, 0.32),
    ("XNLI zero-shot accuracy (15 languages)", lambda r: r["tasks"]["xnli"]["summary"]["accuracy"], 57.2, 61.0),
)


MAX_LANGUAGE_DROP = 2.0
#: goals of the dev error of the groups `xlingua extend` teaches (mean of xx->en and en->xx)
DEV_GOALS = {"tibetan": 30.0, "tifinagh": 30.0, "arabic-script": 25.0}


def _dev_error(report: dict) -> dict[str, float]:
    """{lang: mean error of both directions} of an `xlingua extend-report -o` file."""
    return {lang: (r["xx->en"] + r["en->xx"]) / 2 for lang, r in report["report"].items()}


def dev_rows(now: dict, cand: dict) -> tuple[list[tuple], dict[str, float]]:
    """([(figure, now, candidate, gate, goal, passed)] per language group in both reports,
    {language outside the groups: error rise beyond MAX_LANGUAGE_DROP})."""
    from xlingua.training.extend.langs import GROUPS

    a, b = _dev_error(now), _dev_error(cand)
    missing = sorted(set(a) ^ set(b))
    if missing:
        raise SystemExit(f"the two dev reports cover different languages ({', '.join(missing)}); "
                         "run extend-report with the same --lang for both models")
    rows, grouped = [], set()
    for group, langs in GROUPS.items():
        langs = [l for l in langs if l in a]
        if not langs:
            continue
        grouped.update(langs)
        x, y = sum(a[l] for l in langs) / len(langs), sum(b[l] for l in langs) / len(langs)
        rows.append((f"dev retrieval error, {group} ({', '.join(langs)}), lower is better", x, y, x,
                     DEV_GOALS[group], y <= x + 1e-9))
    rises = {l: b[l] - a[l] for l in a if l not in grouped and b[l] - a[l] > MAX_LANGUAGE_DROP}
    return rows, rises


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("now", help="eval result of today's default")
    ap.add_argument("candidate", help="eval result of the candidate")
    ap.add_argument("--dev", nargs=2, metavar=("NOW_DEV", "CANDIDATE_DEV"),
                    help="`xlingua extend-report -o` files of both models on the languages the candidate learnt")
    args = ap.parse_args()
    a, b = (json.load(open(p, encoding="utf-8")) for p in (args.now, args.candidate))
    passed = True
    print(f"| figure | {a['model']} (now) | {b['model']} | gate (not below) | goal |")
    print("|---|---:|---:|---:|---:|")
    for name, value, gate, goal in FIGURES:
        now, cand = value(a), value(b)
        gate = now if gate is NOW else gate
        goal = goal(now) if callable(goal) else goal
        ok = cand >= gate - 1e-9
        passed &= ok
        fmt = ".3f" if now < 1 else ".1f"
        mark = "" if ok else " (below the gate)"
        print(f"| {name} | {now:{fmt}} | **{cand:{fmt}}**{mark} | {gate:{fmt}} | {goal:{fmt}} |")
    rises = {}
    if args.dev:
        rows, rises = dev_rows(*(json.load(open(p, encoding="utf-8")) for p in args.dev))
        for name, now, cand, gate, goal, ok in rows:
            passed &= ok
            mark = "" if ok else " (above the gate)"
            print(f"| {name} | {now:.1f} | **{cand:.1f}**{mark} | {gate:.1f} (not above) | {goal:.1f} |")
    ta, tb = _tatoeba(a, "tatoeba:all"), _tatoeba(b, "tatoeba:all")
    drops = {lang: tb[lang] - ta[lang] for lang in ta if tb[lang] - ta[lang] < -MAX_LANGUAGE_DROP}
    passed &= not drops and not rises
    print(f"\nTatoeba languages more than {MAX_LANGUAGE_DROP:g} points below now: "
          + (", ".join(f"{k} {v:+.1f}" for k, v in sorted(drops.items())) or "none"))
    if args.dev:
        print(f"Other languages of the dev reports with error more than {MAX_LANGUAGE_DROP:g} points above now: "
              + (", ".join(f"{k} {v:+.1f}" for k, v in sorted(rises.items())) or "none"))
    print(f"verdict: {'passes' if passed else 'does not pass'} the gate\n")
    print(f"| Tatoeba language | {a['model']} | {b['model']} | difference |")
    print("|---|---:|---:|---:|")
    for lang in sorted(ta, key=lambda k: tb[k] - ta[k]):
        print(f"| {lang} | {ta[lang]:.1f} | {tb[lang]:.1f} | {tb[lang] - ta[lang]:+.1f} |")
    sys.exit(0 if passed else 1)


if __name__ == "__main__":
    main()
