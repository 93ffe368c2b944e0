"""The low-resource languages' dev error outside the Bible, per language and its mean: each
language's non-Bible dev sets (the low-resource corpus's non-Bible pairs, the general corpus's
NTREX or NLLB-Seed slice) pooled by pairs, as `benchmarks/routes.py` reads them, for two models
side by side:

    .venv/bin/python benchmarks/non_bible_dev.py \
        LOWRES_A.json GENERAL_A.json LOWRES_B.json GENERAL_B.json

Each LOWRES is `xlingua extend-report --lowres -m MODEL -o`, each GENERAL `xlingua extend-report
-l bm,dik,ee,ku,om,wo,yo -m MODEL -o`. Languages whose dev text is all Bible verses have no
figure here. Prints a table and the fall of the mean from A to B.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # run as a script, only benchmarks/ is on the path
    sys.path.insert(0, str(ROOT))

from benchmarks.routes import non_bible_sets, pooled  # noqa: E402


def figures(lowres: dict, general_report: dict) -> dict[str, float]:
    """Language -> its pooled non-Bible dev error, for the languages that have non-Bible text."""
    return {lang: pooled(list(sets.values())) for lang, row in sorted(lowres["langs"].items())
            if (sets := non_bible_sets(row, general_report.get(lang)))}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("reports", nargs=4, metavar="REPORT", help="LOWRES_A GENERAL_A LOWRES_B GENERAL_B")
    args = ap.parse_args(argv)
    loaded = []
    for path in args.reports:
        try:
            with open(path, encoding="utf-8") as f:
                loaded.append(json.load(f)["report"])
        except (OSError, json.JSONDecodeError, KeyError) as e:
            print(f"error: {path}: not an extend-report JSON ({e!r})", file=sys.stderr)
            return 2
    try:
        a, b = figures(loaded[0], loaded[1]), figures(loaded[2], loaded[3])
    except (KeyError, TypeError) as e:
        print(f"error: {args.reports[0]} or {args.reports[2]}: not a low-resource report ({e!r})", file=sys.stderr)
        return 2
    if set(a) != set(b):
        print(f"error: the two models' reports cover other languages ({sorted(a)} against {sorted(b)})",
              file=sys.stderr)
        return 2
    print("| lang | A | B |\n|---|---:|---:|")
    for lang in a:
        print(f"| {lang} | {a[lang]:.2f} | {b[lang]:.2f} |")
    mean_a, mean_b = sum(a.values()) / len(a), sum(b.values()) / len(b)
    print(f"| **mean of {len(a)}** | {mean_a:.2f} | {mean_b:.2f} |")
    print(f"fall from A to B: {mean_a - mean_b:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
