"""Seconds per training step of each xlingua objective, and the translation-ranking step
against sentence-transformers' MultipleNegativesRankingLoss on the same model, batch and
length, measured in the same run (rounds alternate the two so load changes hit both).

    .venv/bin/python benchmarks/train_speed.py --model bundled:torch --batch 16 --length 32

Each step = forward of both sides + loss + backward + AdamW step, word embeddings frozen
(--no-freeze trains them too). Data: the first l10n de-en train pairs (and XNLI dev en for
the NLI task). Prints a table; --json FILE writes the figures.
"""
from __future__ import annotations

import argparse
import statistics
import time

import torch

from xlingua.io import write_json
from xlingua.training.config import TaskConfig
from xlingua.training.model import SentenceModel
from xlingua.training.tasks import build_task


def time_steps(step, n: int) -> list[float]:
    out = []
    for _ in range(n):
        t0 = time.perf_counter()
        step()
        out.append(time.perf_counter() - t0)
    return out


L10N = {"type": "l10n", "langs": ["de"], "limit": 4096}
SPECS = {
    "translation_ranking (bidirectional)": ("translation_ranking", L10N, {}),
    "translation_ranking (one direction)": ("translation_ranking", L10N, {"bidirectional": False}),
    "translation_ranking + 1 hard negative": ("translation_ranking", {**L10N, "limit": 512}, {"hard_negatives": 1}),
    "nli (XNLI dev en)": ("nli", {"type": "xnli", "langs": ["en"]}, {}),
    "response_ranking": ("response_ranking", L10N, {}),
    "dueam (exact EMD)": ("dueam", {"type": "dueam_weak", "pairs": ["en-de"]}, {}),
    "onealigner (last layer)": ("onealigner", L10N, {}),
}


def parse_args() -> argparse.Namespace:
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default="bundled:torch")
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--length", type=int, default=32)
    ap.add_argument("--steps", type=int, default=8, help="timed steps per round")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--no-freeze", action="store_true")
    ap.add_argument("--only-ranking", action="store_true",
                    help="time only translation ranking and MNRL (more rounds for the same budget)")
    ap.add_argument("--json")
    return ap.parse_args()


def objective_steps(model: SentenceModel, specs: dict, b: int) -> dict:
    """name -> one training step of that objective on `model` (each already run once)."""
    batches = {}
    for name, (objective, data, opts) in specs.items():
        task = build_task(TaskConfig(name=name, objective=objective, data=data, options=opts), model.dim)
        task.prepare(model, "/tmp")
        params = [p for p in list(model.parameters()) + list(task.parameters()) if p.requires_grad]
        opt = torch.optim.AdamW(params, lr=1e-5)
        counter = iter(range(10**9))

        def step(task=task, opt=opt, counter=counter):
            start = (next(counter) * b) % (len(task.examples) - b)
            idx = list(range(start, start + b))
            loss = task.loss(model, [task.examples[i] for i in idx], idx)
            loss.backward()
            opt.step()
            opt.zero_grad(set_to_none=True)
        step()  # warm-up (and DuEAM's first WMD computations are inside the timed steps)
        batches[name] = step
    return batches


def mnrl_step(model: SentenceModel, args: argparse.Namespace):
    """sentence-transformers MNRL on the same weights, tokens and batch: one step (run once)."""
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.losses import MultipleNegativesRankingLoss

    b = args.batch
    st = SentenceTransformer(str(model.encoder.path), device="cpu")
    st.max_seq_length = args.length
    st[0].auto_model.embeddings.word_embeddings.weight.requires_grad_(args.no_freeze)
    st.train()
    mnrl = MultipleNegativesRankingLoss(st)
    st_opt = torch.optim.AdamW([p for p in st.parameters() if p.requires_grad], lr=1e-5)
    pairs = build_task(TaskConfig(name="x", objective="translation_ranking", data=L10N), model.dim).examples
    st_counter = iter(range(10**9))
    prefix = model.prefix

    def st_step():
        start = (next(st_counter) * b) % (len(pairs) - b)
        batch = pairs[start : start + b]
        feats = [st.tokenize([prefix + p[0] for p in batch]), st.tokenize([prefix + p[1] for p in batch])]
        loss = mnrl(feats, None)
        loss.backward()
        st_opt.step()
        st_opt.zero_grad(set_to_none=True)
    st_step()
    return st_step


def report(args: argparse.Namespace, times: dict) -> None:
    """Print the table (and write --json)."""
    results = {}
    print(f"\nmodel {args.model}, batch {args.batch} pairs, max length {args.length}, "
          f"{'all weights' if args.no_freeze else 'word embeddings frozen'}, "
          f"{args.rounds} rounds x {args.steps} steps, torch threads {torch.get_num_threads()}")
    print(f"{'objective':45s} {'median s/step':>13s} {'steps/s':>8s}")
    for name, ts in times.items():
        med = statistics.median(ts)
        results[name] = {"median_s": med, "mean_s": statistics.mean(ts), "n": len(ts)}
        print(f"{name:45s} {med:13.3f} {1 / med:8.2f}")
    ours = results["translation_ranking (one direction)"]["median_s"]
    theirs = results["sentence-transformers MNRL (one direction)"]["median_s"]
    print(f"\ntranslation ranking (one direction) / MNRL time ratio: {ours / theirs:.3f}")
    if args.json:
        write_json(args.json, {"args": vars(args), "results": results, "ratio_vs_mnrl": ours / theirs}, indent=2)


def main() -> None:
    args = parse_args()
    torch.manual_seed(0)
    model = SentenceModel.load(args.model, args.length)
    if not args.no_freeze:
        model.model.embeddings.word_embeddings.weight.requires_grad_(False)
    model.train()
    specs = SPECS
    if args.only_ranking:
        specs = {k: v for k, v in specs.items() if k.startswith("translation_ranking (")}
    batches = objective_steps(model, specs, args.batch)
    batches["sentence-transformers MNRL (one direction)"] = mnrl_step(model, args)
    times = {name: [] for name in batches}
    for _ in range(args.rounds):
        for name, step in batches.items():
            times[name].extend(time_steps(step, args.steps))
    report(args, times)


if __name__ == "__main__":
    main()
