"""Mining at scale: known German-English pairs hidden among N real lines a side, mined by
`xlingua mine`; per stage wall, CPU seconds and peak RSS, P/R/F1 at the calibrated threshold
and at the command's default, and cost against N on log-log axes with the fitted exponent.

Text: every pair of ../shared/corpora (general, l10n, lowres) and the Multi30k train split,
grouped by translation (xlingua.data.haystack: a group never crosses sides). Gold: the dev
slices of German-English, l10n's dev file and the general corpus's NTREX dev slice, one pair
per group; no training reads them, and settings are chosen on them.

  .venv/bin/python benchmarks/mine_scale.py --sizes 20000 100000 --path two-stage --path one-stage
  .venv/bin/python benchmarks/mine_scale.py --sizes 1000000 --path two-stage
  .venv/bin/python benchmarks/mine_scale.py --plot        # table + plot from the records

Each run starts from an empty work directory (runs/mine/scale/work/<run>/), so every stage is
timed from raw text; --resume continues a killed run there instead. Records:
runs/mine/scale/<path>-<N>.json (one per run); --plot writes docs/data/bench/mine_scale.json and
docs/img/mine-scale.png from them.
"""
from __future__ import annotations

import argparse
import gzip
import json
import os
import platform
import resource
import shutil
import subprocess
import sys
import time
from datetime import date
from pathlib import Path

import numpy as np

from xlingua.data.haystack import build_haystack
from xlingua.mining.rescore import THRESHOLD
from xlingua.paths import benchmarks_dir, corpora_dir
from xlingua.similarity.calibrate import at_threshold, best_pair_threshold, gold_flags

ROOT = Path(__file__).resolve().parents[1]
RUNS = ROOT / "runs" / "mine" / "scale"
RECORD = ROOT / "docs" / "data" / "bench" / "mine_scale.json"
PLOT = ROOT / "docs" / "img" / "mine-scale.png"
# what `xlingua mine` writes without --threshold: every pair the mode chose, or with --rescore
# those over mining.rescore.THRESHOLD
DEFAULT_THRESHOLD = {"one-stage": None, "two-stage": THRESHOLD}
PATHS = {
    "one-stage": ["--model", "bundled"],
    "two-stage": ["--model", "static-small", "--rescore", "bundled"],
}


def _tsv_pairs(path: Path):
    with gzip.open(path, "rt", encoding="utf-8") as f:
        for line in f:
            parts = line.rstrip("\n").split("\t")
            if len(parts) == 2 and parts[0].strip() and parts[1].strip():
                yield parts[0], parts[1]


def all_pairs():
    """Every translation pair of the shared corpora, and Multi30k's train captions."""
    corpora = corpora_dir()
    for sub in ("general", "l10n", "lowres"):
        for path in sorted((corpora / sub).rglob("*.tsv.gz")):
            yield from _tsv_pairs(path)
    m30k = benchmarks_dir() / "multi30k"
    langs = [(m30k / f"train.{l}").read_text(encoding="utf-8").splitlines() for l in ("en", "de", "fr", "cs")]
    for row in zip(*langs):
        for other in row[1:]:
            yield row[0], other


def gold_pairs():
    """German-English dev pairs: l10n's dev file, then the general corpus's dev slice."""
    from xlingua.data.general import read_general

    yield from _tsv_pairs(corpora_dir() / "l10n" / "de-en.dev.tsv.gz")
    for p in read_general(["de"], split="dev"):
        yield p.text, p.english


_PAIRS: list = []


def haystack_files(n: int, seed: int = 0) -> dict:
    """src.txt, tgt.txt, gold.tsv (1-based line numbers) for N lines a side, built once."""
    out = RUNS / "data" / f"{n}"
    files = {name: out / name for name in ("src.txt", "tgt.txt", "gold.tsv", "meta.json")}
    if files["meta.json"].exists():
        return files
    out.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    global _PAIRS
    _PAIRS = _PAIRS or list(all_pairs())  # read once for every size
    hay = build_haystack(_PAIRS, gold_pairs(), n, seed)
    if hay.short:
        raise SystemExit(f"the shared corpora hold too few lines for {n:,} a side ({hay.short:,} short)")
    for name, lines in (("src.txt", hay.src), ("tgt.txt", hay.tgt)):
        _write_atomic(files[name], "".join(l + "\n" for l in lines))
    _write_atomic(files["gold.tsv"], "".join(f"{a}\t{b}\n" for a, b in hay.gold))
    _write_atomic(files["meta.json"], json.dumps({"n": n, "gold": len(hay.gold), "groups": hay.groups,
                                                  "seconds": round(time.perf_counter() - t0, 1)}))
    return files


def _write_atomic(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def read_gold(path: Path) -> set[tuple[int, int]]:
    return {tuple(int(x) for x in line.split("\t")) for line in path.read_text().splitlines()}


def read_pairs_file(path: Path, src: list[str], tgt: list[str]) -> list[tuple[float, int, int]]:
    """(score, src line, tgt line) from the output TSV (no ids: map text back to lines)."""
    src_row = {t: i + 1 for i, t in enumerate(src)}
    tgt_row = {t: i + 1 for i, t in enumerate(tgt)}
    out = []
    with gzip.open(path, "rt", encoding="utf-8") as f:
        for line in f:
            s, a, b = line.rstrip("\n").split("\t")[:3]
            if s == "score":
                continue
            out.append((float(s), src_row[a], tgt_row[b]))
    return out


def run(path: str, n: int, extra: list[str], tag: str = "", resume: bool = False) -> dict:
    files = haystack_files(n)
    name = f"{path}{'+' + tag if tag else ''}-{n}"
    work = RUNS / "work" / name
    if not resume:
        shutil.rmtree(work, ignore_errors=True)  # every stage timed from raw text
    out = RUNS / f"{name}.tsv.gz"
    cmd = [str(ROOT / ".venv" / "bin" / "xlingua"), "mine", "--src-lang", "de", "--tgt-lang", "en",
           str(files["src.txt"]), str(files["tgt.txt"]), "-o", str(out), "--workdir", str(work),
           "--skip-lang-check", *PATHS[path], *extra]
    if not any(a.startswith("--threshold") for a in extra):
        cmd.append("--threshold=-1e9")  # every pair the mode chose: the default's cut is applied below
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run(cmd, check=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    summary = json.loads(out.with_name(out.name + ".summary.json").read_text())
    src = files["src.txt"].read_text(encoding="utf-8").splitlines()
    tgt = files["tgt.txt"].read_text(encoding="utf-8").splitlines()
    gold = read_gold(files["gold.tsv"])
    pairs = read_pairs_file(out, src, tgt)
    record = {
        "path": path + (f"+{tag}" if tag else ""), "n": n, "gold": len(gold), "command": " ".join(cmd[1:]).replace(str(ROOT) + "/", ""),
        "wall_s": round(wall, 1),
        "cpu_s": round(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime, 1),
        "peak_rss_mb": round(after.ru_maxrss / 1024, 1),
        **figures(pairs, gold, src, DEFAULT_THRESHOLD[path]),
        "stages": summary["timings"], "rescore": summary.get("rescore"), "identified": summary.get("identified"),
        "index": summary["settings"]["index"],
        "cpu": _cpu(), "date": date.today().isoformat(),
    }
    (RUNS / f"{name}.json").write_text(json.dumps(record, indent=1))
    return record


def _gold_sets(gold: set, src: list[str]) -> dict[str, set]:
    from xlingua.data.general import read_general

    news = {p.text for p in read_general(["de"], split="dev")}
    return {"news": {g for g in gold if src[g[0] - 1] in news},
            "l10n": {g for g in gold if src[g[0] - 1] not in news}}


def figures(pairs: list[tuple[float, int, int]], gold: set, src: list[str], threshold: float | None) -> dict:
    """P/R/F1 at the command's default cut (None: every pair written) and at the F1-best
    threshold (what --calibrate picks), for all gold and for each gold set alone, the other
    set's pairs left out of the count (news is nearest to a held-out FLORES-style set; l10n's
    software strings are short and hard)."""
    s = np.array([p[0] for p in pairs], dtype=np.float64)
    a = np.array([p[1] for p in pairs], dtype=np.int64)
    b = np.array([p[2] for p in pairs], dtype=np.int64)

    def shown(counts: dict, cut) -> dict:
        return {"threshold": cut, **{k: round(100 * counts[k], 2) for k in ("precision", "recall", "f1")},
                "written": counts["predicted"]}

    def calibrated(part: set) -> dict:
        keep = ~gold_flags(a, b, gold - part)
        c = best_pair_threshold(s[keep], a[keep], b[keep], part)
        return shown(c, c["threshold"])

    right = gold_flags(a, b, gold)
    cut = -np.inf if threshold is None else threshold
    default = at_threshold(s, right, len(gold), cut)
    # a wrong pair either misplaces a gold sentence or pairs two distractors; the haystack keeps
    # a distractor's exact translation off the other side, not its near-translations
    written = ~right & (s >= cut)
    gold_src, gold_tgt = {g[0] for g in gold}, {g[1] for g in gold}
    touches = np.array([x in gold_src or y in gold_tgt for x, y in zip(a.tolist(), b.tolist())], dtype=bool)
    return {"default": shown(default, threshold), "calibrated": calibrated(gold),
            "by_set": {name: calibrated(part) for name, part in _gold_sets(gold, src).items()},
            "wrong_at_default": {"with_a_gold_sentence": int((written & touches).sum()),
                                 "two_distractors": int((written & ~touches).sum())}}


def _cpu() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                flags = Path("/proc/cpuinfo").read_text()
                extra = "AMX" if "amx_bf16" in flags else ("AVX512-BF16" if "avx512_bf16" in flags else "")
                return f"{line.split(':', 1)[1].strip()} ({os.cpu_count()} cores{', ' + extra if extra else ''})"
    except OSError:
        pass
    return platform.processor()


def rescore_record(path: Path) -> dict:
    """A record's F1 figures computed again from its pairs file (the scoring code changed)."""
    rec = json.loads(path.read_text())
    files = haystack_files(rec["n"])
    src = files["src.txt"].read_text(encoding="utf-8").splitlines()
    tgt = files["tgt.txt"].read_text(encoding="utf-8").splitlines()
    gold = read_gold(files["gold.tsv"])
    pairs = read_pairs_file(path.with_name(path.name.removesuffix(".json") + ".tsv.gz"), src, tgt)
    rec.update(figures(pairs, gold, src, DEFAULT_THRESHOLD[rec["path"].split("+")[0]]))
    path.write_text(json.dumps(rec, indent=1))
    return rec


def exponent(ns, costs) -> float:
    """The slope of log(cost) against log(N): cost grows as N to this power."""
    import numpy as np

    return float(np.polyfit(np.log(ns), np.log(costs), 1)[0])


def record_and_plot(paths: list[str]) -> dict:
    """docs/data/bench/mine_scale.json (every record of `paths`, the fitted exponents) and
    docs/img/mine-scale.png (CPU seconds and wall against N, log-log)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    records = [json.loads(p.read_text()) for p in sorted(RUNS.glob("*.json")) if not p.name.endswith(".summary.json")]
    records = [r for r in records if r.get("path") in paths]  # other JSON there is no run record
    out = {"records": records, "exponents": {}}
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    for path in paths:
        rs = sorted((r for r in records if r["path"] == path), key=lambda r: r["n"])
        if not rs:
            continue
        ns = [r["n"] for r in rs]
        series = {"cpu_s": [r["cpu_s"] for r in rs], "wall_s": [r["wall_s"] for r in rs],
                  "knn cpu_s": [sum(v["cpu_seconds"] for k, v in r["stages"].items() if k.startswith("knn"))
                                for r in rs]}
        for key, ys in series.items():
            # the growth between the two largest sizes: where the N-squared search takes over
            fit = exponent(ns[-2:], ys[-2:]) if len(rs) > 1 else None
            out["exponents"][f"{path} {key}"] = None if fit is None else round(fit, 2)
            label = f"{path}, {key.replace('_s', ' s')}" + ("" if fit is None else f" (last step N^{fit:.2f})")
            ax.plot(ns, ys, {"cpu_s": "-o", "wall_s": "--x", "knn cpu_s": ":^"}[key], label=label)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("lines a side")
    ax.set_ylabel("seconds")
    ax.set_title("xlingua mine, German-English gold hidden among N lines a side")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7)
    fig.tight_layout()
    PLOT.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(PLOT, dpi=120)
    RECORD.parent.mkdir(parents=True, exist_ok=True)
    RECORD.write_text(json.dumps(out, indent=1) + "\n")
    return out


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", type=int, nargs="*", default=[])
    ap.add_argument("--path", action="append", choices=sorted(PATHS), default=None)
    ap.add_argument("--build-only", action="store_true", help="only write the haystacks")
    ap.add_argument("--resume", action="store_true", help="keep the run's work directory (after a kill): "
                    "finished stages are not timed again")
    ap.add_argument("--tag", default="", help="added to the record's name (runs with other settings)")
    ap.add_argument("--plot", nargs="*", metavar="PATH", help="write the record and the plot of these paths "
                    "(as recorded, with their tags; default: one-stage and two-stage)")
    ap.add_argument("extra", nargs=argparse.REMAINDER, help="after --: options passed to xlingua mine")
    args = ap.parse_args(argv)
    extra = args.extra[1:] if args.extra[:1] == ["--"] else args.extra
    if args.plot is not None:
        print(json.dumps(record_and_plot(args.plot or ["one-stage", "two-stage"])["exponents"], indent=1))
        return
    for n in args.sizes:
        files = haystack_files(n)
        print(json.loads(files["meta.json"].read_text()), flush=True)
        if args.build_only:
            continue
        for path in args.path or ["two-stage"]:
            rec = run(path, n, extra, args.tag, args.resume)
            print(json.dumps({k: rec[k] for k in ("path", "n", "wall_s", "cpu_s", "peak_rss_mb",
                                                  "default", "calibrated", "by_set")}), flush=True)


if __name__ == "__main__":
    sys.exit(main())
