"""What the pairs `benchmarks/mine_scale.py` wrote that are not gold are: for each written pair
of two distractors (neither line gold), how close its English is to the source line's own
translations in the corpora, which the haystack put on the same side as the source line.

    .venv/bin/python benchmarks/mine_scale_wrong.py runs/mine/scale/two-stage-100000.tsv.gz --n 100000

A pair whose English equals one of those translations once punctuation and spaces are dropped is
a near-copy the haystack could have linked; otherwise it counts by the best character-trigram
Jaccard similarity to them (a rewording scores high, a sentence on the same topic low). Prints
the counts and `--sample` pairs with the source line's own translation beside them.
"""
from __future__ import annotations

import argparse
import json
import random
import sys
from collections import Counter
from pathlib import Path

import regex

from xlingua.data.haystack import normalized

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # run as a script, only benchmarks/ is on the path
    sys.path.insert(0, str(ROOT))

from benchmarks.mine_scale import RUNS, THRESHOLD, all_pairs, read_gold, read_pairs_file  # noqa: E402

_DROP = regex.compile(r"[\p{P}\p{S}\s]+")
BINS = (0.9, 0.7, 0.5)


def bare(text: str) -> str:
    return _DROP.sub("", normalized(text))


def trigrams(text: str) -> set[str]:
    t = " ".join(regex.findall(r"\w+", normalized(text)))
    return {t[i:i + 3] for i in range(max(1, len(t) - 2))}


def jaccard(a: str, b: str) -> float:
    x, y = trigrams(a), trigrams(b)
    return len(x & y) / max(1, len(x | y))


def kind(english: str, own: set[str]) -> str:
    """The bin of a written English line against the source line's own translations."""
    if any(bare(o) == bare(english) for o in own):
        return "equal without punctuation"
    best = max((jaccard(o, english) for o in own), default=0.0)
    return next((f"trigram Jaccard >= {b}" for b in BINS if best >= b), f"trigram Jaccard < {BINS[-1]}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("pairs", type=Path, help="a run's output (.tsv.gz)")
    ap.add_argument("--n", type=int, required=True, help="the haystack's size (runs/mine/scale/data/N)")
    ap.add_argument("--threshold", type=float, default=THRESHOLD, help="pairs at or over this score")
    ap.add_argument("--sample", type=int, default=10)
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    data = RUNS / "data" / str(args.n)
    src = (data / "src.txt").read_text(encoding="utf-8").splitlines()
    tgt = (data / "tgt.txt").read_text(encoding="utf-8").splitlines()
    gold = read_gold(data / "gold.tsv")
    written = [(s, i, j) for s, i, j in read_pairs_file(args.pairs, src, tgt) if s >= args.threshold]
    gold_src, gold_tgt = {i for i, _ in gold}, {j for _, j in gold}
    wrong = [p for p in written if (p[1], p[2]) not in gold]
    both = [p for p in wrong if p[1] not in gold_src and p[2] not in gold_tgt]
    keys = {normalized(src[i - 1]) for _, i, _ in both}
    own: dict[str, set[str]] = {}
    for a, b in all_pairs():
        ka, kb = normalized(a), normalized(b)
        if ka in keys:
            own.setdefault(ka, set()).add(b)
        if kb in keys:
            own.setdefault(kb, set()).add(a)
    kinds = Counter(kind(tgt[j - 1], own.get(normalized(src[i - 1]), set())) for _, i, j in both)
    result = {"pairs": str(args.pairs), "threshold": args.threshold, "written": len(written), "wrong": len(wrong),
              "two_distractors": len(both), "kinds": dict(sorted(kinds.items()))}
    print(json.dumps(result, indent=1))
    for s, i, j in random.Random(0).sample(both, min(args.sample, len(both))):
        mine = sorted(own.get(normalized(src[i - 1]), set()))[:1]
        print(f"\n{s:.3f}  {src[i - 1][:160]}\n   -> {tgt[j - 1][:160]}\n  own: {' | '.join(m[:160] for m in mine)}")
    if args.json:
        args.json.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
