"""Sentence alignment of documents (`xlingua align`'s core) against plain 1-1 margin matching,
on ordered slices of real parallel news text with sentences merged at random (1-2 / 2-1).

Documents: `--docs` slices of `--doc-len` consecutive rows of the general corpus's NTREX (or
newstest) file per language, spread evenly over the file; rows repeating the previous row's
English side (a second reference) are dropped first. Nothing here is tuned on these slices:
the aligner runs with its defaults. Scores: strict (exact groups) and lax (sentence links)
precision / recall / F1, pooled over each language's documents (evaluation.alignment).

  nice -n 19 .venv/bin/python benchmarks/align_eval.py --model bundled
"""
from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

from xlingua.align import embed_spans
from xlingua.data.text import read_pairs
from xlingua.encoders.loading import load_encoder
from xlingua.evaluation.alignment import groups, links, make_document, margin_one_to_one
from xlingua.paths import corpora_dir
from xlingua.similarity.calibrate import set_prf
from xlingua.similarity.monotone import monotone_align

NO_SPACE = {"zh", "zh-Hant", "ja", "yue", "th", "km", "lo", "my"}


def slices(path: Path, docs: int, doc_len: int) -> list[list[tuple[str, str]]]:
    rows, last_en = [], None
    for xx, en in read_pairs([str(path)]):
        if en.text != last_en:
            rows.append((xx.text, en.text))
        last_en = en.text
    if len(rows) < docs * doc_len:
        raise SystemExit(f"{path}: {len(rows)} rows, fewer than --docs x --doc-len = {docs * doc_len}")
    step = len(rows) // docs
    return [rows[i * step : i * step + doc_len] for i in range(docs)]


def run(model: str, source: str, langs: list[str], docs: int, doc_len: int, merge_prob: float,
        seed: int, root: Path) -> dict:
    encoder = load_encoder(model)
    embed = lambda texts, lang: encoder.encode(texts, lang=lang)  # noqa: E731
    report = {"model": model, "source": source, "docs": docs, "doc_len": doc_len,
              "merge_prob": merge_prob, "seed": seed, "langs": {}}
    for lang in langs:
        rng = np.random.default_rng(seed)
        t0 = time.process_time()
        pred = {"vecalign": ([], []), "margin 1-1": ([], [])}
        n_groups = {"1-1": 0, "1-2": 0, "2-1": 0}
        for d, pairs in enumerate(slices(root / source / f"{lang}-en.tsv.gz", docs, doc_len)):
            doc = make_document(pairs, merge_prob, rng, join_a="" if lang in NO_SPACE else " ")
            for (a0, a1), (b0, b1) in doc.gold:
                n_groups[f"{a1 - a0}-{b1 - b0}"] += 1
            a1v, a2v = embed_spans(embed, doc.a, lang)
            b1v, b2v = embed_spans(embed, doc.b, "en")
            for name, got in (("vecalign", groups(monotone_align(a1v, a2v, b1v, b2v))),
                              ("margin 1-1", margin_one_to_one(a1v, b1v))):
                pred[name][0].extend((d, g) for g in got)
                pred[name][1].extend((d, g) for g in doc.gold)
        report["langs"][lang] = {
            "gold_groups": n_groups, "cpu_s": round(time.process_time() - t0, 1),
            **{name: _pooled(p, g) for name, (p, g) in pred.items()}}
        print(f"{lang}: {json.dumps(report['langs'][lang])}", flush=True)
    return report


def _pooled(pred, gold) -> dict:
    """P/R/F1 over all documents; groups and links are tagged with their document."""
    tagged = lambda items: {(d, x) for d, g in items for x in links([g])}  # noqa: E731
    out = {"strict": set_prf(set(pred), set(gold)), "lax": set_prf(tagged(pred), tagged(gold))}
    return {kind: {k: round(v, 4) for k, v in s.items()} for kind, s in out.items()}


def markdown(report: dict) -> str:
    lines = [f"model `{report['model']}`, {report['source']}, {report['docs']} documents x "
             f"{report['doc_len']} rows per language, merge probability {report['merge_prob']} each way",
             "", "| lang | groups 1-1 / 1-2 / 2-1 | method | strict P | R | F1 | lax P | R | F1 |",
             "|---|---|---|---:|---:|---:|---:|---:|---:|"]
    for lang, r in report["langs"].items():
        g = r["gold_groups"]
        for name in ("vecalign", "margin 1-1"):
            s, x = r[name]["strict"], r[name]["lax"]
            lines.append(f"| {lang} | {g['1-1']} / {g['1-2']} / {g['2-1']} | {name} | {s['precision']:.3f} | "
                         f"{s['recall']:.3f} | {s['f1']:.3f} | {x['precision']:.3f} | {x['recall']:.3f} | "
                         f"{x['f1']:.3f} |")
    return "\n".join(lines) + "\n"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", default="bundled")
    ap.add_argument("--source", default="ntrex", choices=["ntrex", "newstest"])
    ap.add_argument("--langs", nargs="+", default=["de", "ru", "zh", "hi"])
    ap.add_argument("--docs", type=int, default=4, help="documents per language")
    ap.add_argument("--doc-len", type=int, default=40, help="rows per document (before merging)")
    ap.add_argument("--merge-prob", type=float, default=0.1, help="chance of a 2-1 and of a 1-2 at each row")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--corpora", default=None, help="the general corpus dir (default ../shared/corpora/general)")
    ap.add_argument("--out", default="align_eval", help="directory for align_eval.json / .md")
    args = ap.parse_args(argv)
    root = Path(args.corpora) if args.corpora else corpora_dir() / "general"
    report = run(args.model, args.source, args.langs, args.docs, args.doc_len, args.merge_prob, args.seed, root)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "align_eval.json").write_text(json.dumps(report, indent=1))
    (out / "align_eval.md").write_text(markdown(report))
    print(markdown(report))
    return report


if __name__ == "__main__":
    main()
