"""What `xlingua score --qe` costs with each QE model, side by side in one run: the same WMT20
MLQE-PE pairs (the first N of the dev split of each pair, en-de first) scored through
`score_texts` with the default model's vectors, by plain cosine, by the heads of a `qe train`
model and by a cross-encoder QE model. The models take turns over `--rounds` slices, so load
from other processes falls on all alike. Reports pairs/s (wall) and CPU seconds.

    .venv/bin/python benchmarks/qe_speed.py --model qe-small --model runs/qe/C1/best --n 600
"""
from __future__ import annotations

import argparse
import datetime as dt
import json
import time

import numpy as np


def main() -> None:
    from xlingua.bench.embed import _machine
    from xlingua.data.benchmarks import MLQE_PAIRS
    from xlingua.encoders.loading import load_encoder
    from xlingua.qe.pairs import read_pairs
    from xlingua.qe.load import load_qe
    from xlingua.score import score_texts

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", action="append", default=[], help="QE model: a shipped name or a directory")
    ap.add_argument("--encoder", default="bundled")
    ap.add_argument("--n", type=int, default=600, help="pairs in all, taken evenly from the six pairs")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--out", help="write the figures as JSON here too")
    args = ap.parse_args()

    encoder = load_encoder(args.encoder)
    data = read_pairs(MLQE_PAIRS, "dev", max(1, args.n // len(MLQE_PAIRS)))
    models = {"cosine": None}
    for spec in args.model:
        models[spec] = load_qe(spec, encoder)  # a shipped name or a directory

    def embed(texts, lang=None):
        return encoder.encode(texts, lang=lang, batch_size=args.batch)

    wall = {name: 0.0 for name in models}
    cpu = dict(wall)
    groups = np.asarray(data.groups)
    slices = np.array_split(np.arange(len(data.gold)), args.rounds)
    for model in models.values():  # warm up (loads what a model loads on first use, e.g. its heads' encoder)
        score_texts(embed, data.src[:8], data.tgt[:8], src_lang="en", tgt_lang="de", qe=model)
    for r, rows in enumerate(slices):
        order = list(models)[r % len(models):] + list(models)[:r % len(models)]
        for name in order:
            for pair in dict.fromkeys(groups[rows]):
                at = rows[groups[rows] == pair]
                src, tgt = pair.split("-")
                t0, c0 = time.perf_counter(), time.process_time()
                score_texts(embed, [data.src[i] for i in at], [data.tgt[i] for i in at],
                            src_lang=src, tgt_lang=tgt, qe=models[name])
                wall[name] += time.perf_counter() - t0
                cpu[name] += time.process_time() - c0
    n = len(data.gold)
    result = {"date": dt.date.today().isoformat(), "machine": _machine(), "encoder": args.encoder, "pairs": n,
              "rows": {name: {"pairs_per_s": n / wall[name], "wall_s": wall[name], "cpu_s": cpu[name]}
                       for name in models}}
    print(f"{result['machine']}, {result['date']}; {n} MLQE-PE dev pairs, encoder {args.encoder}")
    print("| scorer | pairs/s | wall s | CPU s | vs cosine |")
    print("|---|---:|---:|---:|---:|")
    for name, row in result["rows"].items():
        print(f"| {name} | {row['pairs_per_s']:.1f} | {row['wall_s']:.1f} | {row['cpu_s']:.1f} | "
              f"{row['wall_s'] / wall['cosine']:.2f}x |")
    if args.out:
        from xlingua.io import write_json

        write_json(args.out, result)


if __name__ == "__main__":
    main()
