"""Do token-level features help the QE heads? The per-pair ridge of `xlingua qe train` (pair
features of the two sentence vectors, their cosine, the lengths) fitted on WMT20 MLQE-PE train,
with and without the pair's BERTScore F (greedy token alignment of the two sides, the same
encoder's token states, special tokens and the prefix left out), both chosen and compared on dev
by the mean over pairs of Pearson r. Test20 is not read.

    .venv/bin/python benchmarks/qe_token_features.py --encoder xlingua-qe --out runs/qe/token_features.json
"""
from __future__ import annotations

import argparse
import datetime as dt
import time

import numpy as np


def bertscore_column(encoder, src: list[str], tgt: list[str], chunk: int = 512) -> np.ndarray:
    """BERTScore F of every (src[i], tgt[i]), a chunk at a time (token states are large)."""
    from tqdm import tqdm

    from xlingua.similarity.bertscore import bertscore_paired

    out = []
    for start in tqdm(range(0, len(src), chunk), desc="bertscore", unit="chunk"):
        a = encoder.encode_tokens(src[start : start + chunk], content_only=True)
        b = encoder.encode_tokens(tgt[start : start + chunk], content_only=True)
        out.append(bertscore_paired(a, b))
    return np.concatenate(out)


def fit_per_pair(x_train, train, x_dev, dev, seed: int = 0) -> np.ndarray:
    """Dev predictions of a ridge per pair on the given columns, its strength chosen on that
    pair's dev rows as `qe train` chooses it (qe_head.GRID)."""
    from scipy.stats import pearsonr
    from sklearn.preprocessing import StandardScaler

    from xlingua.similarity.qe_head import GRID, make_regressor

    pred = np.zeros(len(dev.gold))
    gtr, gdev = np.asarray(train.groups), np.asarray(dev.groups)
    for pair in dict.fromkeys(dev.groups):
        tr, de = gtr == pair, gdev == pair
        scaler = StandardScaler().fit(x_train[tr])
        scaler.scale_ = np.where(scaler.scale_ > 0, scaler.scale_, 1.0)
        best = None
        for alpha in GRID["ridge"]:
            model = make_regressor("ridge", alpha, seed).fit(scaler.transform(x_train[tr]), train.gold[tr])
            p = model.predict(scaler.transform(x_dev[de]))
            r = pearsonr(p, dev.gold[de]).statistic
            if best is None or r > best[0]:
                best = (r, p)
        pred[de] = best[1]
    return pred


def main() -> None:
    from xlingua.bench.embed import _machine
    from xlingua.data.benchmarks import MLQE_PAIRS
    from xlingua.encoders.cache import CachedEncoder
    from xlingua.encoders.loading import load_encoder
    from xlingua.qe.pairs import load_split
    from xlingua.similarity.qe_head import Features, mean_pearson

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--encoder", default="xlingua-qe", help="the encoder of the sentence vectors and token states")
    ap.add_argument("--train-rows", type=int, default=0, help="the first N train rows of each pair (0: all)")
    ap.add_argument("--out", help="write the figures as JSON here too")
    args = ap.parse_args()

    t0 = time.time()
    inner = load_encoder(args.encoder)
    encoder = CachedEncoder(inner)
    train = load_split(encoder, MLQE_PAIRS, "train", args.train_rows)
    dev = load_split(encoder, MLQE_PAIRS, "dev", 0)
    feats = Features()
    x_train, x_dev = (feats.make(s.u, s.v, s.src, s.tgt) for s in (train, dev))
    f_train = bertscore_column(inner, train.src, train.tgt)
    f_dev = bertscore_column(inner, dev.src, dev.tgt)
    rows = {
        "BERTScore F alone (dev)": mean_pearson(f_dev, dev.gold, dev.groups),
        "per-pair ridge, sentence features": mean_pearson(fit_per_pair(x_train, train, x_dev, dev), dev.gold, dev.groups),
        "per-pair ridge, + BERTScore F": mean_pearson(
            fit_per_pair(np.hstack([x_train, f_train[:, None]]), train, np.hstack([x_dev, f_dev[:, None]]), dev),
            dev.gold, dev.groups),
    }
    result = {"date": dt.date.today().isoformat(), "machine": _machine(), "encoder": args.encoder,
              "train_pairs": len(train.gold), "dev_pairs": len(dev.gold), "minutes": (time.time() - t0) / 60,
              "rows": {name: {"mean": m, **per} for name, (m, per) in rows.items()}}
    print(f"{result['machine']}, {result['date']}; encoder {args.encoder}; {result['minutes']:.1f} min")
    print("| scorer (dev) | " + " | ".join(MLQE_PAIRS) + " | mean |")
    print("|---|" + "---:|" * (len(MLQE_PAIRS) + 1))
    for name, r in result["rows"].items():
        print(f"| {name} | " + " | ".join(f"{r[p]:.3f}" for p in MLQE_PAIRS) + f" | {r['mean']:.3f} |")
    if args.out:
        from xlingua.io import write_json

        write_json(args.out, result)


if __name__ == "__main__":
    main()
