"""Does `prepare` help `mine` on crawled text? Mining F1 with and without it.

"Crawled" documents are built from newstest (../shared/corpora/general/newstest, WMT news in
document order; NTREX, on which the identification thresholds were measured, is not used):
`--pairs` consecutive sentence pairs of SRC-TGT are cut into documents of 3-8 sentences. Each
side keeps each sentence with probability `--keep` (independently, so only some sentences have
a translation on the other side: those pairs are the gold), joins them into paragraphs of 1-4
sentences, and mixes in what crawls hold: boilerplate lines (menus, cookie notices, share
buttons: the same few on many pages), a line in a third language (`--noise-lang`, from its
own newstest file), a repeated paragraph, and a whole repeated document. Document order is
shuffled on the target side. Files are blank-line separated documents.

Three runs of `xlingua mine` (ratio margin, k=4, mode max, no threshold) on:
- raw: the crawled lines as they are (what `mine` gets without `prepare`);
- split: `prepare` with sentence splitting only (filters, identification, dedup off);
- prepare: `prepare` with its defaults.
A mined pair is right when its two sentences are a gold pair (compared as text, spaces
collapsed). Reported: precision, recall and F1 of all mined pairs, and at the F1-best score
threshold (an oracle threshold, the same rule for every run, as BUCC's evaluation picks one).
Also reported: each `prepare` stage's items per CPU second, and `prepare`'s CPU time per
sentence against the encoder's on the split run's sentences (the share of embedding time).

  nice -n 19 xlingua bench prepare --pairs 200 --model bundled --out OUT

With TGT equal to SRC both sides come from the same text (gold: identical sentences), which
lets a test run it with a toy encoder (`--model toy`, character n-grams: no model, seconds
of CPU, for timing `prepare` itself).

The embeddings of each run are cached in --workdir, so a rerun costs only the kNN.
"""
from __future__ import annotations

import gzip
import json
import random
import time
from pathlib import Path

import numpy as np

from xlingua.data.general import general_root, read_file
from xlingua.similarity.calibrate import best_threshold, prf

BOILERPLATE = [
    "Home | News | Sport | Kultur | Wirtschaft | Kontakt",
    "Cookie-Einstellungen: Wir verwenden Cookies, um Ihnen das beste Erlebnis zu bieten.",
    "Share on Facebook Share on Twitter Share via E-Mail",
    "© 2019 All rights reserved. Impressum | Datenschutz | AGB",
    "Read more >>",
    "Anzeige",
    "Newsletter abonnieren: Jetzt anmelden und nichts mehr verpassen!",
    "Tags: Politik, Europa, Wahlen, Deutschland, Regierung",
]


def _norm(s: str) -> str:
    return " ".join(s.split())


def build_crawl(src_lang: str, tgt_lang: str, noise_lang: str, n_pairs: int, keep: float,
                seed: int, out_dir: Path, root=None) -> tuple[Path, Path, set]:
    """Write src.txt and tgt.txt (blank-line separated documents); return the gold pairs."""
    rng = random.Random(seed)
    if tgt_lang not in ("en", src_lang) or src_lang == "en":
        raise ValueError("the general corpus pairs every language with English: give a non-English "
                         "source and English (or the source language again) as the target")
    pairs = _pairs(src_lang, root)
    tgt_col = 1 if tgt_lang == "en" else 0
    start = rng.randrange(0, max(1, len(pairs) - n_pairs))
    pairs = pairs[start:start + n_pairs]
    noise = [s for s, _ in _pairs(noise_lang, root)]
    docs, i = [], 0
    while i < len(pairs):
        k = rng.randint(3, 8)
        docs.append(pairs[i:i + k])
        i += k
    gold = set()
    sides = {"src": [], "tgt": []}
    for doc in docs:
        kept = {side: [rng.random() < keep for _ in doc] for side in sides}
        for pair, ks, kt in zip(doc, kept["src"], kept["tgt"]):
            if ks and kt:
                gold.add((_norm(pair[0]), _norm(pair[tgt_col])))
        for side, col in (("src", 0), ("tgt", tgt_col)):
            sents = [p[col] for p, k in zip(doc, kept[side]) if k]
            if not sents:
                continue
            paras, j = [], 0
            while j < len(sents):
                n = rng.randint(1, 4)
                paras.append(" ".join(sents[j:j + n]))
                j += n
            lines = [rng.choice(BOILERPLATE)] + paras + [rng.choice(BOILERPLATE)]
            if rng.random() < 0.5:
                lines.insert(rng.randrange(1, len(lines)), rng.choice(noise))
            if rng.random() < 0.2 and paras:
                lines.insert(rng.randrange(1, len(lines)), rng.choice(paras))  # repeated paragraph
            sides[side].append(lines)
            if rng.random() < 0.1:
                sides[side].append(list(lines))  # the same page crawled twice
    rng.shuffle(sides["tgt"])
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = []
    for side in ("src", "tgt"):
        path = out_dir / f"{side}.txt"
        path.write_text("\n\n".join("\n".join(d) for d in sides[side]) + "\n", encoding="utf-8")
        paths.append(path)
    return paths[0], paths[1], gold


def _pairs(lang: str, root=None) -> list[tuple[str, str]]:
    return [(p.text, p.english) for p in read_file(general_root(root) / "newstest" / f"{lang}-en.tsv.gz",
                                                   lang, "newstest")]


def raw_lines(path: Path, out: Path) -> Path:
    """What mine gets without prepare: every non-blank line (mine skips blank ones anyway)."""
    lines = [l for l in path.read_text(encoding="utf-8").splitlines() if l.strip()]
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return out


def evaluate_mined(mined: Path, gold: set) -> dict:
    rows = []
    with gzip.open(mined, "rt", encoding="utf-8") as f:
        for line in f:
            cols = line.rstrip("\n").split("\t")
            rows.append((float(cols[0]), (_norm(cols[1]), _norm(cols[2])) in gold))
    rows.sort(key=lambda r: -r[0])
    scores = np.array([s for s, _ in rows], dtype=np.float64)
    correct = np.array([ok for _, ok in rows], dtype=bool)
    n_correct = int(correct.sum())
    return {"mined": len(rows), "correct": n_correct, "gold": len(gold), **prf(len(rows), n_correct, len(gold)),
            "best": best_threshold(scores, correct, len(gold))}


def run(src_lang="de", tgt_lang="en", noise_lang="fr", n_pairs=200, keep=0.8, seed=0,
        model="bundled", out=Path("prepare_mine"), workdir=None, encoder=None,
        show_progress=True) -> dict:
    from xlingua.mining import MineConfig, mine
    from xlingua.mining.filters import FilterConfig
    from xlingua.mining.prepare import PrepareConfig, prepare

    out = Path(out)
    workdir = Path(workdir) if workdir else out / "work"
    if model == "toy" and encoder is None:
        if tgt_lang != src_lang:
            raise ValueError("--model toy (character n-grams) only matches a language with itself: "
                             "give --tgt-lang equal to --src-lang")
        from xlingua.mining.toy import CharNgramEncoder

        encoder = CharNgramEncoder(dim=256)
    src, tgt, gold = build_crawl(src_lang, tgt_lang, noise_lang, n_pairs, keep, seed, out / "crawl")
    no_filters = FilterConfig(min_chars=0, max_chars=10**9, max_punct_ratio=1, max_digit_ratio=1,
                              min_space_ratio=0, max_space_ratio=1, max_emoji_ratio=1,
                              max_repeated_char=10**9, min_script_share=0)
    report = {"gold_pairs": len(gold), "settings": {"src_lang": src_lang, "tgt_lang": tgt_lang,
              "noise_lang": noise_lang, "pairs": n_pairs, "keep": keep, "seed": seed, "model": model}}
    for variant in ("raw", "split", "prepare"):
        t0, c0 = time.perf_counter(), time.process_time()
        inputs, prep = {}, {}
        for side, path, lang in (("src", src, src_lang), ("tgt", tgt, tgt_lang)):
            if variant == "raw":
                inputs[side] = raw_lines(path, out / "crawl" / f"{side}.raw.txt")
                continue
            cfg = (PrepareConfig(lang, format="blank") if variant == "prepare" else
                   PrepareConfig(lang, format="blank", filters=no_filters, lid=False, dedup=False))
            prep[side] = prepare([path], out / variant / side, cfg, workdir=workdir,
                                 show_progress=show_progress)
            inputs[side] = Path(prep[side]["output"])
        t_prep = time.process_time() - c0
        mined = out / variant / "pairs.tsv.gz"
        summary = mine(inputs["src"], inputs["tgt"], mined, MineConfig(src_lang, tgt_lang, model=model),
                       workdir=workdir, encoder=encoder, show_progress=show_progress)
        report[variant] = {
            **evaluate_mined(mined, gold),
            "sentences": {"src": summary["src"]["sentences"], "tgt": summary["tgt"]["sentences"]},
            "prepare_cpu_seconds": round(t_prep, 2),
            "embed_cpu_seconds": round(sum(t["cpu_seconds"] for k, t in summary["timings"].items()
                                           if k.startswith("embed")), 2),
            "wall_seconds": round(time.perf_counter() - t0, 1),
            "prepare": {side: {"dropped": p["dropped"], "kept": p["kept"],
                               "stage_items": p["stage_items"],
                               "stage_cpu_seconds": p["stage_cpu_seconds"],
                               "stage_items_per_s": p["stage_items_per_s"]}
                        for side, p in prep.items()},
        }
    report["throughput"] = throughput(report)
    return report


STAGES = (("read", "read (documents)"), ("split", "split (sentences out)"),
          ("filters", "filters (sentences)"), ("lid", "language identification (sentences)"),
          ("dedup_write", "dedup + write (sentences)"))


def throughput(report: dict) -> dict:
    """Items per CPU second of each `prepare` stage (both sides of the `prepare` run together),
    `prepare` as a whole in sentences per CPU second, and the encoder's sentences per CPU second
    where the `split` run embedded its sentences (the same sentences `prepare` starts from; None
    when its embeddings came from the cache)."""
    sides = report["prepare"]["prepare"].values()
    items = {k: sum(s["stage_items"].get(k, 0) for s in sides) for k, _ in STAGES}
    cpu = {k: sum(s["stage_cpu_seconds"].get(k, 0.0) for s in sides) for k, _ in STAGES}
    stages = {k: round(items[k] / cpu[k], 1) if cpu[k] > 0 and items[k] else None for k, _ in STAGES}
    sentences = items["split"]
    total = sum(cpu.values())
    prep_rate = sentences / total if total > 0 else None
    split = report["split"]
    embedded = split["sentences"]["src"] + split["sentences"]["tgt"]
    embed_rate = embedded / split["embed_cpu_seconds"] if split["embed_cpu_seconds"] > 0.05 else None
    return {"stage_items_per_s": stages, "stage_cpu_seconds": {k: round(v, 3) for k, v in cpu.items()},
            "sentences": sentences, "prepare_sentences_per_s": round(prep_rate, 1) if prep_rate else None,
            "embed_sentences_per_s": round(embed_rate, 1) if embed_rate else None,
            "prepare_share_of_embedding": round(embed_rate / prep_rate, 4) if prep_rate and embed_rate else None}


def markdown(report: dict) -> str:
    rows = ["| input to mine | sentences src / tgt | mined | P | R | F1 | best-threshold P | R | F1 |",
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for v in ("raw", "split", "prepare"):
        r = report[v]
        b = r["best"]
        rows.append(f"| {v} | {r['sentences']['src']:,} / {r['sentences']['tgt']:,} | {r['mined']:,} | "
                    f"{r['precision']:.3f} | {r['recall']:.3f} | {r['f1']:.3f} | "
                    f"{b.get('precision', 0):.3f} | {b.get('recall', 0):.3f} | {b['f1']:.3f} |")
    t = report["throughput"]
    stage_rows = ["| stage | items/s (CPU) | CPU s |", "|---|---:|---:|"]
    for key, name in STAGES:
        rate = t["stage_items_per_s"][key]
        stage_rows.append(f"| {name} | {f'{rate:,.0f}' if rate else 'n/a'} | {t['stage_cpu_seconds'][key]:.2f} |")
    prep = t["prepare_sentences_per_s"]
    stage_rows.append(f"| all stages (sentences) | {f'{prep:,.0f}' if prep else 'n/a'} | "
                      f"{sum(t['stage_cpu_seconds'].values()):.2f} |")
    if t["embed_sentences_per_s"]:
        share = (f"encoder ({report['settings']['model']}): {t['embed_sentences_per_s']:,.1f} sentences per CPU "
                 f"second on the split run's sentences; prepare costs {t['prepare_share_of_embedding']:.1%} "
                 f"of their embedding CPU time")
    else:
        share = "encoder: the split run's embeddings came from the cache (use a fresh --workdir to time it)"
    return (f"gold pairs: {report['gold_pairs']:,}\n\n" + "\n".join(rows) +
            f"\n\nprepare, both sides, {t['sentences']:,} sentences:\n\n" + "\n".join(stage_rows) +
            f"\n\n{share}")
