"""A meaning run in the one training loop (training.loop): one loop step is one epoch over the
training pairs' cached base vectors, the loss objectives.meaning_embeddings, the epoch chosen on
the validation loss or a dev signal (meaning.dev)."""
from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Callable

import numpy as np
import torch

from xlingua.encoders.meaning_mlp import MeaningConfig, MeaningModel
from xlingua.io import write_json
from xlingua.objectives.meaning_embeddings import MeaningEmbeddingLoss
from xlingua.training.checkpoint import read_log, seed_log
from xlingua.training.evaluators import Evaluator
from xlingua.training.loop import LOG, LoopSettings, TrainingLoop


@dataclass
class MeaningTrainConfig:
    lr: float = 1e-4
    batch_size: int = 512
    max_epochs: int = 1000
    patience: int = 15
    val_fraction: float = 0.1
    use_meaning: bool = True
    use_language: bool = True
    hidden: int = 0
    seed: int = 0
    snapshot_every: int = 0  # also keep model_epochN.pt every N epochs (0 = only the best)
    select_on: str = "val-loss"  # or the name of a dev signal given to train_meaning ("qe-dev", ...)
    language_weight: float = 1.0  # weight of L_L in the total loss
    negative_weight: float = 1.0  # weight of L_M's hinge terms on random same-language sentences
    residual: bool = False  # meaning = e + MLP_M(e), starting from the base vectors


class _SameLanguageSampler:
    """Draws s' and t' of the paper: for each row, another source sentence of the same
    language and another English sentence, both from one pool of rows (a split)."""

    def __init__(self, lang_ids: np.ndarray, pool: np.ndarray, seed: int):
        self.seed = seed
        self.reset()
        self.lang_ids = lang_ids
        self.pool = pool
        self.groups = {int(g): pool[lang_ids[pool] == g] for g in np.unique(lang_ids[pool])}

    def reset(self) -> None:
        self.rng = np.random.default_rng(self.seed)

    def __call__(self, idx: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        s2 = np.empty_like(idx)
        for g, members in self.groups.items():
            mask = self.lang_ids[idx] == g
            if not mask.any():
                continue
            pick = self.rng.integers(0, len(members), mask.sum())
            # Avoid drawing the row itself when the group has another member.
            same = members[pick] == idx[mask]
            if len(members) > 1 and same.any():
                pick[same] = (pick[same] + 1) % len(members)
            s2[mask] = members[pick]
        t2 = self.pool[self.rng.integers(0, len(self.pool), len(idx))]
        return s2, t2


DevSignal = Callable[[MeaningModel], dict]


class Named(Evaluator):
    """A dev signal's figures as "NAME" (its mean, the main score) and "NAME subset"."""

    def __init__(self, name: str, signal: DevSignal):
        self.main_score, self.signal = name, signal
        self.greater_is_better = getattr(signal, "greater_is_better", True)

    def __call__(self, model) -> dict[str, float]:
        return {self.main_score if k == "mean" else f"{self.main_score} {k}": float(v)
                for k, v in self.signal(model).items()}


class ValLoss(Evaluator):
    """The paper's validation loss and its terms (val_loss, val_rec, ...); lower is better."""
    main_score = "val_loss"
    greater_is_better = False

    def __init__(self, run: "MeaningRun"):
        self.run = run

    def __call__(self, model) -> dict[str, float]:
        run = self.run
        run.val_neg.reset()  # the same negatives every epoch
        totals = {}
        with torch.no_grad():
            for start in range(0, len(run.val_idx), run.config.batch_size):
                idx = run.val_idx[start:start + run.config.batch_size]
                for k, v in run.batch_parts(idx, run.val_neg).items():
                    totals[k] = totals.get(k, 0.0) + float(v) * len(idx)
        found = {f"val_{k}": v / len(run.val_idx) for k, v in totals.items()}
        run.last_val = found["val_loss"]
        return found


class MeaningRun(TrainingLoop):
    free = ("max_epochs", "patience", "snapshot_every")  # stopping rules may change on resume
    legacy_files = ("state.pt",)

    def __init__(self, src, tgt, src_langs, out, config: MeaningTrainConfig, dev: dict[str, DevSignal],
                 tgt_lang: str = "en", base_name: str = "", base_fingerprint: str = ""):
        super().__init__(out, LoopSettings(
            max_steps=config.max_epochs, eval_every=1, eval_at_start=False, checkpoint_every=1,
            snapshot_every=config.snapshot_every, patience=config.patience,
            select="val_loss" if config.select_on == "val-loss" else config.select_on, label="meaning epoch"))
        self.config = config
        torch.manual_seed(config.seed)
        self.rng = np.random.default_rng(config.seed)
        self.langs = sorted(set(src_langs) | {tgt_lang})
        lid = {l: i for i, l in enumerate(self.langs)}
        self.s_lang = np.array([lid[l] for l in src_langs])
        n = len(src)
        perm = self.rng.permutation(n)
        n_val = max(1, int(round(n * config.val_fraction)))
        self.val_idx, self.train_idx = perm[:n_val], perm[n_val:]
        self.data = {"n": n, "dim": int(src.shape[1]), "langs": self.langs}
        self.model = MeaningModel(MeaningConfig(dim=src.shape[1], langs=self.langs, hidden=config.hidden,
                                                base=base_name, base_fingerprint=base_fingerprint,
                                                residual=config.residual))
        self.objective = MeaningEmbeddingLoss(self.model, config.use_meaning, config.use_language,
                                              config.language_weight, config.negative_weight)
        self.opt = torch.optim.Adam(self.model.parameters(), lr=config.lr)
        self.S, self.T = torch.from_numpy(src.astype(np.float32)), torch.from_numpy(tgt.astype(np.float32))
        self.en = np.full(n, lid[tgt_lang])
        # negatives for a split come from that split only
        self.train_neg = _SameLanguageSampler(self.s_lang, self.train_idx, config.seed)
        self.val_neg = _SameLanguageSampler(self.s_lang, self.val_idx, config.seed + 1)
        self.best_val = self.last_val = float("inf")
        self.evaluators = [ValLoss(self)] + [Named(name, signal) for name, signal in dev.items()]

    def batch_parts(self, idx, sampler) -> dict[str, torch.Tensor]:
        s2, t2 = sampler(idx)
        return self.objective(self.S[idx], self.T[idx], self.S[s2], self.T[t2],
                              torch.from_numpy(self.s_lang[idx]), torch.from_numpy(self.en[idx]))

    def train_step(self) -> dict:
        order = self.rng.permutation(self.train_idx)
        total = 0.0
        for start in range(0, len(order), self.config.batch_size):
            idx = order[start:start + self.config.batch_size]
            loss = self.batch_parts(idx, self.train_neg)["loss"]
            self.opt.zero_grad()
            loss.backward()
            self.opt.step()
            total += loss.item() * len(idx)
        self.step += 1
        return {"loss": total / len(order)}

    def evaluate(self):
        self.model.eval()
        try:
            return super().evaluate()
        finally:
            self.model.train()

    def save_best(self) -> None:
        self.best_val = self.last_val
        self.model.save(self.out / "model.pt")

    def save_snapshot(self) -> None:
        self.model.save(self.out / f"model_epoch{self.step}.pt")

    # -- what the loop checkpoints ----------------------------------------------------------
    def identity(self) -> dict:
        return {**asdict(self.config), **self.data}

    def defaults(self) -> dict:
        return asdict(MeaningTrainConfig())

    def state_dict(self) -> dict:
        return {"model": self.model.state_dict(), "optimizer": self.opt.state_dict(), "best_val": self.best_val,
                "order_rng": self.rng.bit_generator.state, "negatives_rng": self.train_neg.rng.bit_generator.state}

    def load_state_dict(self, state: dict, changes: dict) -> None:
        self.model.load_state_dict(state["model"])
        self.opt.load_state_dict(state["optimizer"])
        self.rng.bit_generator.state = state["order_rng"]
        self.train_neg.rng.bit_generator.state = state["negatives_rng"]
        self.best_val = state["best_val"]

    def upgrade(self, state: dict) -> dict:
        """state.pt of the meaning trainer before the one loop: its history goes to log.jsonl."""
        if "identity" not in state:
            return state
        records = [{"step": 0, "config": state["identity"]}]
        for h in state["history"]:
            records += [{"step": h["epoch"], "loss": h["train_loss"]},
                        {"step": h["epoch"], "eval": {k: v for k, v in h.items() if k not in ("epoch", "train_loss")}}]
        seed_log(self.out / LOG, records)
        return {"config": state["identity"], "model": state["model"], "optimizer": state["optimizer"],
                "order_rng": state["rng"], "negatives_rng": state["train_neg_rng"], "step": len(state["history"]),
                "best": state["best"], "bad_evals": state["bad"], "best_step": state["best_epoch"],
                "best_val": state["best_val"], "elapsed": state["seconds"]}

    def on_checkpoint(self) -> None:
        self.write_log(finished=False)  # a killed run still says how far it got

    def history(self) -> list[dict]:
        by_epoch: dict[int, dict] = {}
        for r in read_log(self.out / LOG):
            if r["step"] and ("loss" in r or "eval" in r):
                h = by_epoch.setdefault(r["step"], {"epoch": r["step"]})
                h.update({"train_loss": r["loss"]} if "loss" in r else r["eval"])
        return [by_epoch[e] for e in sorted(by_epoch)]

    def write_log(self, finished: bool) -> dict:
        log = {"config": asdict(self.config), "langs": self.langs, "n_train": len(self.train_idx),
               "n_val": len(self.val_idx), "select_on": self.config.select_on, "best_epoch": self.best_step,
               "best_score": self.best, "best_val_loss": self.best_val, "epochs": self.step, "finished": finished,
               "seconds": round(self.elapsed, 1), "history": self.history()}
        write_json(self.out / "train_log.json", log)
        return log
