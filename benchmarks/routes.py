"""Which languages a routed student should embed, read from a routed run's report.json
(`xlingua extend --lowres --routed [--general-pairs]`, its fp32 reports of the start model and of
the routed student):

    .venv/bin/python benchmarks/routes.py runs/extend/lowres-routed-gp/report.json

The rule: a language routes to the student when its error (mean of both directions) is below the
start model's on each of its dev sets outside the Bible: the low-resource corpus's non-Bible
pairs where it has some, and the general corpus's dev slice (NTREX, NLLB-Seed) where the report
has one (`--general-pairs`). A language whose dev text is all Bible verses stays with the start
model: a student trained on verses did not read other text better (docs/results.md).
Prints a table per language and the `--route` list for `xlingua ship`.
"""
from __future__ import annotations

import argparse
import json
import sys


def mean2(row: dict, a: str, b: str) -> float:
    return (row[a] + row[b]) / 2


def non_bible(lang_row: dict) -> float | None:
    """Mean error on the language's non-Bible low-resource dev pairs, None without any."""
    domains = lang_row.get("domains")
    if domains is None:  # a report without the split: the whole slice is one domain
        return None
    row = domains.get("non-bible")
    return None if row is None else mean2(row, "xx->pivot", "pivot->xx")


def routes(report: dict) -> list[dict]:
    """One row per low-resource language: its non-Bible figures before and after, and whether it routes."""
    low_before, low_after = report["lowres"]["before"]["langs"], report["lowres"]["after"]["langs"]
    gen_before, gen_after = report.get("before", {}), report.get("after", {})
    rows = []
    for lang in sorted(low_after):
        sets = {}
        nb = (non_bible(low_before[lang]), non_bible(low_after[lang]))
        if nb[0] is not None:
            sets["lowres non-Bible"] = nb
        if lang in gen_after:
            sets["general"] = (mean2(gen_before[lang], "xx->en", "en->xx"), mean2(gen_after[lang], "xx->en", "en->xx"))
        routed = bool(sets) and all(after < before for before, after in sets.values())
        rows.append({"lang": lang, "sets": sets, "routed": routed})
    return rows


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("report", help="a routed run's report.json")
    args = ap.parse_args(argv)
    try:
        with open(args.report, encoding="utf-8") as f:
            report = json.load(f)
        rows = routes(report)
    except (OSError, json.JSONDecodeError, KeyError) as e:
        print(f"error: {args.report}: not a routed low-resource run's report ({e})", file=sys.stderr)
        return 2
    print("| lang | non-Bible low-resource dev, before -> after | general dev, before -> after | routed |")
    print("|---|---|---|---|")
    for r in rows:
        cell = {k: f"{b:.1f} -> {a:.1f}" for k, (b, a) in r["sets"].items()}
        print(f"| {r['lang']} | {cell.get('lowres non-Bible', '-')} | {cell.get('general', '-')} | "
              f"{'yes' if r['routed'] else 'no'} |")
    print("--route " + ",".join(r["lang"] for r in rows if r["routed"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
