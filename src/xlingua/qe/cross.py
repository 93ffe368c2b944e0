"""A cross-encoder quality estimator (MonoTransQuest: Ranasinghe, Orasan & Mitkov 2020,
"TransQuest: Translation Quality Estimation with Cross-lingual Transformers"): the source and its
translation are read together as one input, `<s> source </s> translation </s>`, by a base
encoder's transformer; a linear layer on the mean of its last states regresses the pair's
z-scored human judgement (MSE), fine-tuned on WMT20 MLQE-PE train, the step kept by the mean
over pairs of dev Pearson. Unlike the heads of `qe.train`, which see two sentence vectors made
apart, every layer here attends across the pair, so an omitted or mistranslated word can count.

The run directory holds checkpoint.pt (exact resume), log.jsonl and best/: the transformer
(a model directory, loadable as an encoder), head.safetensors and cross.json (settings and the
linear map of its outputs onto the dev gold, so a score is in z-units).
"""
from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import torch
from torch import nn

from xlingua.data.benchmarks import MLQE_PAIRS
from xlingua.encoders.pooling import pool
from xlingua.qe.pairs import PairSet, read_pairs
from xlingua.training.loop import LoopSettings, TrainingLoop

HEAD = "head.safetensors"
CONFIG = "cross.json"


@dataclass
class CrossQEConfig:
    base: str = "xlingua-small:torch"
    pairs: tuple[str, ...] = MLQE_PAIRS
    max_steps: int = 2600          # two passes over the 42,000 training pairs at 32 a step
    batch_size: int = 32
    lr: float = 2e-5               # the transformer's; TransQuest fine-tunes at 2e-5
    head_lr: float = 1e-3          # the new linear layer's
    warmup_steps: int = 100
    max_len: int = 160             # tokens of the joint input, specials included
    precision: str = "bf16"        # autocast of the transformer; fp32 on CPUs without bf16 units
    freeze_embeddings: bool = True  # the 250k word vectors stay e5-small's: the model ships as an overlay
    eval_every: int = 200
    checkpoint_every: int = 50
    log_every: int = 10
    max_minutes: float = 0.0
    train_rows: int = 0            # the first N train rows of each pair, 0 for all
    dev_rows: int = 0              # the first N dev rows of each pair, 0 for all (the choice uses all)
    seed: int = 0

    def __post_init__(self):
        self.pairs = tuple(self.pairs)
        if self.precision not in ("bf16", "fp32"):
            raise ValueError(f"precision must be bf16 or fp32, got {self.precision!r}")
        if self.max_len < 8:
            raise ValueError(f"max_len must leave room for both sides, got {self.max_len}")


class CrossScorer(nn.Module):
    """A transformer encoder (TransformerEncoder: model and tokenizer) with a linear head."""

    def __init__(self, encoder, max_len: int = 160, precision: str = "fp32"):
        super().__init__()
        self.model = encoder.model
        self.__dict__["encoder"] = encoder  # plain attribute: not a submodule twice
        self.head = nn.Linear(encoder.model.config.hidden_size, 1)
        self.max_len, self.precision = max_len, precision

    def batch(self, src: list[str], tgt: list[str]) -> dict:
        """Padded joint inputs, head + source + tail + translation + tail (e5: `<s> a </s> b </s>`);
        a pair over max_len tokens loses tokens from the end of its longer side."""
        tok = self.encoder.tok
        a_ids, b_ids = tok.content_ids(list(src)), tok.content_ids(list(tgt))
        room = self.max_len - len(tok.head) - 2 * len(tok.tail)
        seqs = []
        for a, b in zip(a_ids, b_ids):
            la = min(len(a), max(room // 2, room - len(b)))
            seqs.append([*tok.head, *a[:la], *tok.tail, *b[:room - la], *tok.tail])
        return self.encoder._pad(seqs)

    def forward(self, src: list[str], tgt: list[str]) -> torch.Tensor:
        batch = self.batch(src, tgt)
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=self.precision == "bf16"):
            states = self.model(**batch).last_hidden_state
        return self.head(pool(states.float(), batch["attention_mask"], "mean"))[:, 0]

    @torch.no_grad()
    def predict(self, src: list[str], tgt: list[str], batch_size: int = 64) -> np.ndarray:
        was = self.training
        self.eval()
        try:
            return np.concatenate([self(src[i:i + batch_size], tgt[i:i + batch_size]).numpy()
                                   for i in range(0, len(src), batch_size)]) if src else np.zeros(0, np.float32)
        finally:
            self.train(was)


class CrossDev:
    """Mean dev Pearson over language pairs of a CrossScorer's raw outputs."""
    main_score = "pearson"
    greater_is_better = True

    def __init__(self, dev: PairSet):
        self.dev = dev

    def __call__(self, model: CrossScorer) -> dict[str, float]:
        from xlingua.similarity.qe_head import mean_pearson

        mean, per = mean_pearson(model.predict(self.dev.src, self.dev.tgt).astype(np.float64),
                                 self.dev.gold, self.dev.groups)
        return {"pearson": mean, **{f"pearson {p}": r for p, r in per.items()}}


class CrossQERun(TrainingLoop):
    free = ("max_steps", "max_minutes", "eval_every", "checkpoint_every", "log_every")

    def __init__(self, config: CrossQEConfig, out, model: CrossScorer, train: PairSet, dev: PairSet):
        super().__init__(out, LoopSettings(
            max_steps=config.max_steps, max_minutes=config.max_minutes, log_every=config.log_every,
            eval_every=config.eval_every, eval_at_end=True, checkpoint_every=config.checkpoint_every,
            checkpoint_at_end=True, select="pearson", label="cross QE"), [CrossDev(dev)])
        from transformers import get_linear_schedule_with_warmup

        self.config, self.model, self.data = config, model, train
        if config.freeze_embeddings:
            model.model.get_input_embeddings().weight.requires_grad_(False)
        body = [p for n, p in model.model.named_parameters() if p.requires_grad]
        self.optimizer = torch.optim.AdamW([{"params": body, "lr": config.lr},
                                            {"params": model.head.parameters(), "lr": config.head_lr}],
                                           weight_decay=0.01)
        self.scheduler = get_linear_schedule_with_warmup(self.optimizer, config.warmup_steps, config.max_steps)
        self.per_epoch = math.ceil(len(train.gold) / config.batch_size)
        self.start_info = {"train_pairs": len(train.gold), "dev_pairs": len(dev.gold)}

    def order(self, epoch: int) -> np.ndarray:
        """The training rows of an epoch, shuffled by (seed, epoch): a resumed run sees the same."""
        return np.random.default_rng([self.config.seed, epoch]).permutation(len(self.data.gold))

    def train_step(self) -> dict:
        epoch, at = divmod(self.step, self.per_epoch)
        rows = self.order(epoch)[at * self.config.batch_size:(at + 1) * self.config.batch_size]
        pred = self.model([self.data.src[i] for i in rows], [self.data.tgt[i] for i in rows])
        loss = nn.functional.mse_loss(pred, torch.as_tensor(self.data.gold[rows], dtype=torch.float32))
        self.optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(self.model.parameters(), 1.0)
        self.optimizer.step()
        self.scheduler.step()
        self.step += 1
        return {"loss": float(loss.detach()), "epoch": epoch}

    def identity(self) -> dict:
        return asdict(self.config)

    def state_dict(self) -> dict:
        trainable = {n: p for n, p in self.model.named_parameters() if p.requires_grad}
        return {"model": {n: t for n, t in self.model.state_dict().items() if n in trainable},
                "optimizer": self.optimizer.state_dict(), "scheduler": self.scheduler.state_dict()}

    def load_state_dict(self, state: dict, changes: dict) -> None:
        self.model.load_state_dict(state["model"], strict=False)
        self.optimizer.load_state_dict(state["optimizer"])
        self.scheduler.load_state_dict(state["scheduler"])

    def save_best(self) -> None:
        save_scorer(self.model, self.out / "best", {"step": self.step, "config": asdict(self.config)})


def save_scorer(model: CrossScorer, out: Path, info: dict, calibration=(1.0, 0.0)) -> Path:
    """The transformer as a model directory, plus the head and cross.json; complete or absent."""
    from safetensors.torch import save_file

    from xlingua.io import atomic_dir

    with atomic_dir(Path(out)) as tmp:
        model.encoder.save(tmp, trained_by="xlingua qe cross")
        save_file({k: v.detach().contiguous() for k, v in model.head.state_dict().items()}, str(tmp / HEAD))
        (tmp / CONFIG).write_text(json.dumps({"max_len": model.max_len, "calibration": list(calibration),
                                              **info}, indent=1) + "\n", encoding="utf-8")
    return Path(out)


def load_scorer(path, precision: str = "fp32", model_dir=None) -> tuple[CrossScorer, dict]:
    """A saved CrossScorer and its cross.json (the transformer from `model_dir` if given)."""
    from safetensors.torch import load_file

    from xlingua.encoders.hf import TransformerEncoder

    path = Path(path)
    if not (path / CONFIG).is_file() or not (path / HEAD).is_file():
        raise FileNotFoundError(f"{path} is not a cross-encoder QE model: {CONFIG} or {HEAD} is missing")
    meta = json.loads((path / CONFIG).read_text(encoding="utf-8"))
    model = CrossScorer(TransformerEncoder(model_dir or path), meta["max_len"], precision)
    model.head.load_state_dict(load_file(str(path / HEAD)))
    return model.eval(), meta


def train_cross(config: CrossQEConfig, out, resume: bool = True, show_progress: bool = True,
                data_dir=None) -> dict:
    """Fine-tune (or resume), then calibrate best/ on dev: its outputs mapped linearly onto the
    dev z-scores. Returns {"best_step", "dev": {"pearson", per pair}}."""
    from xlingua.encoders.loading import load_encoder
    from xlingua.similarity.qe_head import mean_pearson
    from xlingua.training.trainer import set_seed

    out = Path(out)
    set_seed(config.seed)
    encoder = load_encoder(config.base)
    if not getattr(encoder, "trainable", False):
        raise ValueError(f"base {config.base!r} loads as {type(encoder).__name__}, which cannot be trained; "
                         "give a :torch spec or a transformers model directory")
    model = CrossScorer(encoder, config.max_len, config.precision)
    train = read_pairs(config.pairs, "train", config.train_rows, data_dir)
    dev = read_pairs(config.pairs, "dev", config.dev_rows, data_dir)
    run = CrossQERun(config, out, model, train, dev)
    model.train()
    run.run(resume=resume, show_progress=show_progress)
    best, meta = load_scorer(out / "best", config.precision)
    raw = best.predict(dev.src, dev.tgt).astype(np.float64)
    slope, offset = (float(c) for c in np.polyfit(raw, dev.gold, 1))
    mean, per = mean_pearson(raw, dev.gold, dev.groups)
    meta.update(calibration=[slope, offset], dev={"pearson": mean, **per})
    (out / "best" / CONFIG).write_text(json.dumps(meta, indent=1) + "\n", encoding="utf-8")
    return {"best_step": run.best_step, "dev": meta["dev"]}
