"""PCA of original, meaning and language embeddings for one language pair (the paper's Fig. 5).

    .venv/bin/python benchmarks/meaning_pca.py --base bundled --model runs/meaning/bundled \
        --lang de --pairs 100 --png docs/img/meaning_pca_de_en.png

Pairs come from the l10n dev file (not seen in training). Each panel: the 2-D PCA of one kind
of vector, sources and English targets coloured apart, translation pairs joined by grey lines.
Printed alongside: the mean cosine of translation pairs and of random pairs in each space.
"""
from __future__ import annotations

import argparse

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import torch  # noqa: E402
from sklearn.decomposition import PCA  # noqa: E402

from xlingua.encoders.loading import load_encoder  # noqa: E402
from xlingua.meaning.data import embed_cached, read_l10n  # noqa: E402
from xlingua.encoders.meaning_mlp import MeaningModel  # noqa: E402


def _cos(a, b):
    a = a / np.linalg.norm(a, axis=1, keepdims=True)
    b = b / np.linalg.norm(b, axis=1, keepdims=True)
    return (a * b).sum(1)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--base", default="bundled")
    ap.add_argument("--model", required=True, help="meaning model directory")
    ap.add_argument("--lang", default="de")
    ap.add_argument("--pairs", type=int, default=100)
    ap.add_argument("--png", required=True)
    args = ap.parse_args(argv)
    pairs = read_l10n([args.lang], args.pairs, split="dev")
    enc = load_encoder(args.base)
    s, t = embed_cached(enc, pairs.src), embed_cached(enc, pairs.tgt)
    model = MeaningModel.load(f"{args.model}/model.pt")
    with torch.no_grad():
        (sm, sl), (tm, tl) = model(torch.from_numpy(s)), model(torch.from_numpy(t))
    spaces = {"original": (s, t), "meaning": (sm.numpy(), tm.numpy()), "language": (sl.numpy(), tl.numpy())}
    fig, axes = plt.subplots(1, 3, figsize=(12, 4))
    rng = np.random.default_rng(0)
    shuffled = rng.permutation(len(s))
    for ax, (name, (a, b)) in zip(axes, spaces.items()):
        xy = PCA(2).fit_transform(np.vstack([a, b]))
        n = len(a)
        for i in range(n):
            ax.plot([xy[i, 0], xy[n + i, 0]], [xy[i, 1], xy[n + i, 1]], color="0.85", lw=0.5, zorder=0)
        ax.scatter(xy[:n, 0], xy[:n, 1], s=8, label=args.lang)
        ax.scatter(xy[n:, 0], xy[n:, 1], s=8, label="en")
        pair, rand = _cos(a, b).mean(), _cos(a, b[shuffled]).mean()
        ax.set_title(f"{name}: cos pair {pair:.2f}, random {rand:.2f}", fontsize=9)
        ax.set_xticks([])
        ax.set_yticks([])
        print(f"{name}: mean cos translation pairs {pair:.3f}, random pairs {rand:.3f}")
    axes[0].legend(loc="best", fontsize=8)
    fig.suptitle(f"{args.base}: {args.lang}-en l10n dev, {len(s)} pairs", fontsize=10)
    fig.tight_layout()
    fig.savefig(args.png, dpi=80)
    print(f"wrote {args.png}")


if __name__ == "__main__":
    main()
