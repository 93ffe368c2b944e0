"""A task binds an objective (xlingua.objectives) to its examples: it embeds a batch with the
model and returns the loss. Objectives with parameters (heads) are modules of the task, so
the optimizer and checkpoints include them."""
from __future__ import annotations

import copy
import json
from pathlib import Path

import torch
from torch import nn

from xlingua import objectives
from xlingua.similarity.wmd import wmd
from xlingua.training.config import TaskConfig
from xlingua.training.data import load_examples
from xlingua.training.distributed import rank


class Task(nn.Module):
    def __init__(self, config: TaskConfig, examples: list[tuple], objective: nn.Module):
        super().__init__()
        self.name = config.name
        self.config = config
        self.examples = examples
        self.objective = objective

    def loss(self, model, batch: list[tuple], indices=None) -> torch.Tensor:
        """The loss of one batch; `indices` are the examples' positions in self.examples
        (used for mined negatives and cached anchor distances)."""
        raise NotImplementedError

    def prepare(self, model, output_dir: Path) -> None:
        """One-time work before the first step (e.g. mining); results saved in output_dir."""


class TranslationRankingTask(Task):
    """Options: scale, margin, bidirectional, hard_negatives (k per example; mined with the
    start model, or with `mine_with: MODEL_DIR`)."""

    def __init__(self, config, examples, dim):
        opts = dict(config.options)
        self.k = int(opts.pop("hard_negatives", 0))
        self.mine_with = opts.pop("mine_with", None)
        super().__init__(config, examples, objectives.TranslationRankingLoss(**opts))
        self.negatives: list[list[int]] | None = None

    def prepare(self, model, output_dir):
        if not self.k:
            return
        path = Path(output_dir) / f"hard_negatives.{self.name}.json"
        if path.exists():  # a resumed run reuses the negatives of its start
            self.negatives = json.loads(path.read_text())
            return
        miner = model if self.mine_with is None else type(model).load(self.mine_with, model.max_seq_length)
        self.negatives = mine_hard_negatives(miner, [e[0] for e in self.examples], [e[1] for e in self.examples], self.k)
        if rank() == 0:  # every process mines the same negatives; one writes them
            tmp = path.with_suffix(".tmp")
            tmp.write_text(json.dumps(self.negatives))
            tmp.replace(path)

    def loss(self, model, batch, indices=None):
        a = model([e[0] for e in batch])["embedding"]
        p = model([e[1] for e in batch])["embedding"]
        neg = None
        if self.k and indices is not None:
            neg_texts = [self.examples[j][1] for i in indices for j in self.negatives[i]]
            neg = model(neg_texts)["embedding"]
        return self.objective(a, p, neg)


class NLITask(Task):
    def __init__(self, config, examples, dim):
        super().__init__(config, examples, objectives.NLIClassificationLoss(dim, **config.options))

    def loss(self, model, batch, indices=None):
        u = model([e[0] for e in batch])["embedding"]
        v = model([e[1] for e in batch])["embedding"]
        return self.objective(u, v, torch.tensor([e[2] for e in batch]))


class ResponseRankingTask(Task):
    def __init__(self, config, examples, dim):
        super().__init__(config, examples, objectives.ResponseRankingLoss(dim, **config.options))

    def loss(self, model, batch, indices=None):
        c = model([e[0] for e in batch])["embedding"]
        r = model([e[1] for e in batch])["embedding"]
        return self.objective(c, r)


class DuEAMTask(Task):
    """Options: lam (0.003), wmd_method (emd | sinkhorn), wmd_reg, layer (-1).
    The anchor is a frozen copy of the model as it is when the task is built (the start)."""

    def __init__(self, config, examples, dim):
        opts = dict(config.options)
        self.method = opts.pop("wmd_method", "emd")
        self.reg = float(opts.pop("wmd_reg", 0.05))
        self.layer = int(opts.pop("layer", -1))
        super().__init__(config, examples, objectives.DuEAMLoss(**opts))
        self._anchor = None  # a plain attribute: not trained, not checkpointed
        self._wmd: dict[int, float] = {}

    def prepare(self, model, output_dir):
        self._anchor = copy.deepcopy(model).eval()
        for p in self._anchor.parameters():
            p.requires_grad_(False)

    @torch.no_grad()
    def anchor_wmd(self, batch, indices=None) -> torch.Tensor:
        """The frozen anchor's WMD of each pair; cached by example index (the anchor never
        changes), computed afresh when no indices are given."""
        keys = [None] * len(batch) if indices is None else [int(i) for i in indices]
        todo = [k for k, key in enumerate(keys) if key is None or key not in self._wmd]
        fresh = {}
        if todo:
            s = self._anchor([batch[k][0] for k in todo], token_layer=self.layer)
            t = self._anchor([batch[k][1] for k in todo], token_layer=self.layer)
            for row, k in enumerate(todo):
                a = s["tokens"][row][s["token_mask"][row].bool()].numpy()
                b = t["tokens"][row][t["token_mask"][row].bool()].numpy()
                fresh[k] = wmd(a, b, self.method, self.reg)
                if keys[k] is not None:
                    self._wmd[keys[k]] = fresh[k]
        return torch.tensor([fresh[k] if k in fresh else self._wmd[key] for k, key in enumerate(keys)],
                            dtype=torch.float32)

    def loss(self, model, batch, indices=None):
        d = self.anchor_wmd(batch, indices)
        s = model([e[0] for e in batch])["embedding"]
        t = model([e[1] for e in batch])["embedding"]
        return self.objective(s, t, d)


class DistillationTask(Task):
    """Multilingual knowledge distillation (objectives.distillation). Examples (xx, english,
    ...). Options: teacher (encoder spec, default `bundled`), teacher_cache (directory of the
    embedding cache, default $XLINGUA_HOME/embeddings), metric, english_weight. The teacher's
    vectors of every distinct English sentence are computed once, before the first step."""

    def __init__(self, config, examples, dim):
        opts = dict(config.options)
        self.teacher = opts.pop("teacher", "bundled")
        self.teacher_cache = opts.pop("teacher_cache", None)
        super().__init__(config, examples, objectives.DistillationLoss(**opts))
        self.dim = dim
        self._row: dict[str, int] = {}
        self._vectors: torch.Tensor | None = None

    def prepare(self, model, output_dir):
        from xlingua.training.teacher import teacher_vectors

        english = sorted({e[1] for e in self.examples})
        vecs = teacher_vectors(self.teacher, english, self.teacher_cache, show_progress=rank() == 0)
        if vecs.shape[1] != self.dim:
            raise ValueError(f"task {self.name!r}: teacher {self.teacher!r} gives {vecs.shape[1]}-d vectors, "
                             f"the student {self.dim}-d; they must match")
        self._row = {t: i for i, t in enumerate(english)}
        self._vectors = torch.from_numpy(vecs)

    def loss(self, model, batch, indices=None):
        target = self._vectors[[self._row[e[1]] for e in batch]]
        xx = model([e[0] for e in batch])["embedding"]
        en = model([e[1] for e in batch])["embedding"] if self.objective.english_weight else None
        return self.objective(xx, target, en)


class CoSENTTask(Task):
    """Graded pairs (s1, s2, score), e.g. stsb_multi_mt; options: scale."""

    def __init__(self, config, examples, dim):
        super().__init__(config, examples, objectives.CoSENTLoss(**config.options))

    def loss(self, model, batch, indices=None):
        u = model([e[0] for e in batch])["embedding"]
        v = model([e[1] for e in batch])["embedding"]
        return self.objective(u, v, torch.tensor([float(e[2]) for e in batch]))


class OneAlignerTask(Task):
    """Options: alpha, temperature, layer (hidden_states index of the token embeddings, -1 = last)."""

    def __init__(self, config, examples, dim):
        opts = dict(config.options)
        self.layer = int(opts.pop("layer", -1))
        super().__init__(config, examples, objectives.OneAlignerLoss(**opts))

    def loss(self, model, batch, indices=None):
        x = model([e[0] for e in batch], token_layer=self.layer)
        y = model([e[1] for e in batch], token_layer=self.layer)
        return self.objective(x["tokens"], x["token_mask"], y["tokens"], y["token_mask"])


TASKS = {"translation_ranking": TranslationRankingTask, "nli": NLITask,
         "response_ranking": ResponseRankingTask, "dueam": DuEAMTask, "onealigner": OneAlignerTask,
         "distillation": DistillationTask, "cosent": CoSENTTask}


def build_task(config: TaskConfig, dim: int, seed: int = 0) -> Task:
    examples = load_examples(config.data, seed)
    try:
        return TASKS[config.objective](config, examples, dim)
    except TypeError as e:
        raise ValueError(f"task {config.name!r}: bad options {config.options}: {e}") from None


@torch.no_grad()
def mine_hard_negatives(model, sources: list[str], targets: list[str], k: int, batch_size: int = 64) -> list[list[int]]:
    """For each source, the k most similar targets other than its own (cosine, exact)."""
    src = torch.nn.functional.normalize(model.encode(sources, batch_size), dim=-1)
    tgt = torch.nn.functional.normalize(model.encode(targets, batch_size), dim=-1)
    out = []
    for start in range(0, len(src), 1024):
        sim = src[start : start + 1024] @ tgt.T
        rows = torch.arange(sim.shape[0])
        sim[rows, rows + start] = -float("inf")
        # identical target strings are not negatives either
        out.extend(sim.topk(min(k + 4, len(tgt) - 1), dim=1).indices.tolist())
    clean = []
    for i, cand in enumerate(out):
        clean.append([j for j in cand if targets[j] != targets[i]][:k])
        if len(clean[-1]) < k:
            raise ValueError(f"could not find {k} hard negatives for example {i}")
    return clean
