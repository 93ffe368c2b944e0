"""The gate a candidate default model must pass against the current one, from two `xlingua eval`
results on the full evaluation sets (tasks bucc tatoeba tatoeba:all sts qe xnli):

    xlingua eval -m bundled bucc tatoeba tatoeba:all sts qe xnli -o runs/gate/bundled.json
    xlingua eval -m xlingua-small bucc tatoeba tatoeba:all sts qe xnli -o runs/gate/xlingua-small.json
    .venv/bin/python benchmarks/gate.py runs/gate/bundled.json runs/gate/xlingua-small.json

Prints the gate table (figure, now, candidate, gate, goal), the verdict, and Tatoeba per language
(all 84, ratio margin, mean of both directions). Exit code 0 when the candidate passes, 1 if not.
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


def figures(result: dict) -> dict[str, float]:
    t = result["tasks"]
    sts = t["sts"]["summary"]
    return {
        "Tatoeba-36 accuracy, ratio margin, both directions": _mean(_tatoeba(result, "tatoeba")),
        "Tatoeba all 84 languages, ratio margin, both directions": _mean(_tatoeba(result, "tatoeba:all")),
        "STS2017-extended cross-lingual Spearman (7 pairs)": sts["sts17_extended cross-lingual spearman"],
        "STS2017-extended monolingual Spearman (ar, en, es)": sts["sts17_extended monolingual spearman"],
        "BUCC zh-en F1 (best threshold)": t["bucc"]["summary"]["zh-en f1 best"],
        "WMT20 QE test20 Pearson (cosine, 6 pairs)": t["qe"]["summary"]["pearson"],
        "XNLI zero-shot accuracy (15 languages)": t["xnli"]["summary"]["accuracy"],
    }


def gate_and_goal(now: dict[str, float]) -> dict[str, tuple[float, float]]:
    """(not below, goal) per figure: the bar the default model has to clear, relative to today's."""
    names = list(now)
    return {
        names[0]: (now[names[0]], 93.0),
        names[1]: (now[names[1]], now[names[1]] + 4),
        names[2]: (now[names[2]], 80.0),
        names[3]: (81.0, 83.0),
        names[4]: (now[names[4]], 92.0),
        names[5]: (0.260, 0.32),
        names[6]: (57.2, 61.0),
    }


MAX_LANGUAGE_DROP = 2.0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("now", help="eval result of today's default")
    ap.add_argument("candidate", help="eval result of the candidate")
    args = ap.parse_args()
    a, b = (json.load(open(p, encoding="utf-8")) for p in (args.now, args.candidate))
    fa, fb = figures(a), figures(b)
    bars = gate_and_goal(fa)
    passed = True
    print(f"| figure | {a['model']} (now) | {b['model']} | gate (not below) | goal |")
    print("|---|---:|---:|---:|---:|")
    for name, (gate, goal) in bars.items():
        ok = fb[name] >= gate - 1e-9
        passed &= ok
        fmt = ".3f" if fa[name] < 1 else ".1f"
        mark = "" if ok else " (below the gate)"
        print(f"| {name} | {fa[name]:{fmt}} | **{fb[name]:{fmt}}**{mark} | {gate:{fmt}} | {goal:{fmt}} |")
    ta, tb = _tatoeba(a, "tatoeba:all"), _tatoeba(b, "tatoeba:all")
    drops = {lang: tb[lang] - ta[lang] for lang in ta if tb[lang] - ta[lang] < -MAX_LANGUAGE_DROP}
    passed &= not drops
    print(f"\nTatoeba languages more than {MAX_LANGUAGE_DROP:g} points below now: "
          + (", ".join(f"{k} {v:+.1f}" for k, v in sorted(drops.items())) or "none"))
    print(f"verdict: {'passes' if passed else 'does not pass'} the gate\n")
    print(f"| Tatoeba language | {a['model']} | {b['model']} | difference |")
    print("|---|---:|---:|---:|")
    for lang in sorted(ta, key=lambda k: tb[k] - ta[k]):
        print(f"| {lang} | {ta[lang]:.1f} | {tb[lang]:.1f} | {tb[lang] - ta[lang]:+.1f} |")
    sys.exit(0 if passed else 1)


if __name__ == "__main__":
    main()
