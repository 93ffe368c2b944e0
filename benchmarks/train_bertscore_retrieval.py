"""Tatoeba retrieval by BERTScore F over token embeddings (OneAligner's similarity at
inference) next to cosine of the pooled embeddings, for one or more models, same sentences.

    .venv/bin/python benchmarks/train_bertscore_retrieval.py --models bundled:torch DIR \
        --langs deu,kor,hun --limit 200 --layer -1

Token embeddings come from TransformerEncoder.encode_tokens (specials dropped: first and
last token); accuracy = mean of xx->en and en->xx top-1, x100. BERTScore is also shown
in-batch normalized (alpha 0.5) over the whole language pair, as OneAligner retrieves.
"""
from __future__ import annotations

import argparse
import time

import numpy as np

from xlingua.similarity.bertscore import bertscore_retrieve
from xlingua.training.evaluate import dev_accuracy, tatoeba_pairs
from xlingua.training.model import SentenceModel


def accuracy_from_top1(fwd: np.ndarray, bwd: np.ndarray) -> float:
    gold = np.arange(len(fwd))
    return 100 * float(((fwd == gold).mean() + (bwd == gold).mean()) / 2)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--models", nargs="+", required=True)
    ap.add_argument("--langs", default="deu,kor,hun")
    ap.add_argument("--limit", type=int, default=200)
    ap.add_argument("--layer", type=int, default=-1)
    args = ap.parse_args()
    rows = []
    for spec in args.models:
        enc = SentenceModel.load(spec).encoder
        for lang in args.langs.split(","):
            t0 = time.perf_counter()
            pairs = tatoeba_pairs(lang, args.limit)
            xs, ys = [p[0] for p in pairs], [p[1] for p in pairs]
            cos = dev_accuracy(enc.encode(xs), enc.encode(ys))
            tx = [t[1:-1] for t in enc.encode_tokens(xs, layer=args.layer)]
            ty = [t[1:-1] for t in enc.encode_tokens(ys, layer=args.layer)]
            bs = accuracy_from_top1(bertscore_retrieve(tx, ty)[1][:, 0], bertscore_retrieve(ty, tx)[1][:, 0])
            bn = accuracy_from_top1(bertscore_retrieve(tx, ty, inbatch_alpha=0.5)[1][:, 0],
                                    bertscore_retrieve(ty, tx, inbatch_alpha=0.5)[1][:, 0])
            rows.append((spec, lang, cos, bs, bn, time.perf_counter() - t0))
            print(f"{spec} {lang}: cosine {cos:.2f} bertscore {bs:.2f} bertscore+inbatch {bn:.2f} ({rows[-1][-1]:.0f} s)", flush=True)
    print(f"\n| model | lang | cosine | BERTScore F | BERTScore F + in-batch norm |\n|---|---|---|---|---|")
    for spec, lang, cos, bs, bn, _ in rows:
        print(f"| {spec} | {lang} | {cos:.2f} | {bs:.2f} | {bn:.2f} |")


if __name__ == "__main__":
    main()
