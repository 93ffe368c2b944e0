"""Which languages a routed student should embed, read from a routed run's report.json
(`xlingua extend --lowres --routed [--general-pairs]`, its fp32 reports of the start model and of
the routed student):

    .venv/bin/python benchmarks/routes.py runs/extend/RUN/report.json \
        [--against DEFAULT_LOWRES.json --against-general DEFAULT_GENERAL.json]

The rule: a language routes to the student when its error on its dev sets outside the Bible,
pooled, is below the comparison's: the low-resource corpus's non-Bible pairs where it has some,
and the general corpus's dev slice (NTREX, NLLB-Seed) where the report has one
(`--general-pairs`). Each set counts by its mean of both directions, weighted by its pairs: one
sentence moves a set of 146 to 500 pairs by 0.1 to 0.35 points, so no single set decides. The
comparison is the start model (the report's own "before"), or, with `--against`, the default
as shipped (`xlingua extend-report --lowres -o` and `xlingua extend-report -l ... -o` of it), for
a student shipped on top of the default. A language whose dev text is all Bible verses stays,
unless `--bible-only-fall N` is given: then it routes when its whole dev slice's error falls by at
least N points (a model taught a language it did not know from verses alone reads it a little
better outside them; docs/results.md).
Prints a table per language and the `--route` list for `xlingua ship`.
"""
from __future__ import annotations

import argparse
import json
import sys


def mean2(row: dict, a: str, b: str) -> float:
    return (row[a] + row[b]) / 2


def non_bible(lang_row: dict) -> tuple[int, float] | None:
    """(pairs, mean error) of the language's non-Bible low-resource dev pairs, None without any."""
    row = (lang_row.get("domains") or {}).get("non-bible")
    return None if row is None else (row["pairs"], mean2(row, "xx->pivot", "pivot->xx"))


def general(row: dict) -> tuple[int, float]:
    return row["pairs"], mean2(row, "xx->en", "en->xx")


def pooled(sets: list[tuple[int, float]]) -> float:
    return sum(n * e for n, e in sets) / sum(n for n, _ in sets)


def non_bible_sets(lowres_row: dict, general_row: dict | None = None) -> dict[str, tuple[int, float]]:
    """A language's dev sets outside the Bible, each as (pairs, mean error): its low-resource
    non-Bible pairs where it has some, its general-corpus slice where one is given."""
    sets = {}
    if (nb := non_bible(lowres_row)) is not None:
        sets["lowres non-Bible"] = nb
    if general_row is not None:
        sets["general"] = general(general_row)
    return sets


def routes(report: dict, against: dict | None = None, against_general: dict | None = None,
           bible_only_fall: float | None = None) -> list[dict]:
    """One row per low-resource language: its non-Bible sets before and after, both pooled, and
    whether it routes. `against`/`against_general` replace the report's own "before" figures. With
    `bible_only_fall`, a language without non-Bible sets routes when its whole slice falls by that
    much (its row's "bible": before and after)."""
    low_before = (against or report["lowres"]["before"])["langs"]
    low_after = report["lowres"]["after"]["langs"]
    gen_before = against_general if against_general is not None else report.get("before", {})
    gen_after = report.get("after", {})
    rows = []
    for lang in sorted(low_after):
        after_sets = non_bible_sets(low_after[lang], gen_after.get(lang))
        before_sets = non_bible_sets(low_before[lang], gen_before[lang] if lang in gen_after else None)
        sets = {k: (before_sets[k], after) for k, after in after_sets.items()}
        before = pooled([b for b, _ in sets.values()]) if sets else None
        after = pooled([a for _, a in sets.values()]) if sets else None
        row = {"lang": lang, "sets": {k: (b[1], a[1]) for k, (b, a) in sets.items()},
               "pooled": (before, after), "routed": bool(sets) and after < before}
        if not sets and bible_only_fall is not None:
            row["bible"] = (mean2(low_before[lang], "xx->pivot", "pivot->xx"),
                            mean2(low_after[lang], "xx->pivot", "pivot->xx"))
            row["routed"] = row["bible"][0] - row["bible"][1] >= bible_only_fall
        rows.append(row)
    return rows


def _load(path: str, key: str | None = None) -> dict:
    with open(path, encoding="utf-8") as f:
        data = json.load(f)
    return data if key is None else data[key]


def _covers(figures: dict, langs: dict) -> None:
    missing = sorted(set(langs) - set(figures))
    if missing:
        raise KeyError(f"no figures for {', '.join(missing)}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("report", help="a routed run's report.json")
    ap.add_argument("--against", help="the default's `extend-report --lowres -o` JSON, compared instead of the start model")
    ap.add_argument("--against-general", help="the default's `extend-report -l ... -o` JSON of the general slices")
    ap.add_argument("--bible-only-fall", type=float, default=None, metavar="N",
                    help="also route a language whose dev text is all Bible verses when its error falls by N points or more")
    args = ap.parse_args(argv)
    current = args.report
    try:
        report, against, against_general = _load(current), None, None
        if args.against:
            current = args.against
            against = _load(current, "report")
            _covers(against["langs"], report["lowres"]["after"]["langs"])
        if args.against_general:
            current = args.against_general
            against_general = _load(current, "report")
            _covers(against_general, report.get("after", {}))
        current = args.report
        rows = routes(report, against, against_general, args.bible_only_fall)
    except (OSError, json.JSONDecodeError, KeyError, TypeError) as e:
        print(f"error: {current}: not a routed low-resource run's report, or lacks what it needs ({e!r})",
              file=sys.stderr)
        return 2
    print("| lang | non-Bible low-resource dev, before -> after | general dev, before -> after | pooled | routed |")
    print("|---|---|---|---|---|")
    for r in rows:
        cell = {k: f"{b:.1f} -> {a:.1f}" for k, (b, a) in r["sets"].items()}
        b, a = r["pooled"]
        pool = "-" if b is None else f"{b:.2f} -> {a:.2f}"
        verdict = "yes" if r["routed"] else "no"
        if "bible" in r:
            verdict += " (Bible only: {:.2f} -> {:.2f})".format(*r["bible"])
        print(f"| {r['lang']} | {cell.get('lowres non-Bible', '-')} | {cell.get('general', '-')} | {pool} | {verdict} |")
    print("--route " + ",".join(r["lang"] for r in rows if r["routed"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
