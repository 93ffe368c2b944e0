"""The meaning-embeddings recipe: the MLPs trained on cached base embeddings of parallel pairs
by the one training loop (training.loop), one loop step an epoch, with the loss of
objectives.meaning_embeddings.

Adam (lr 1e-4), batch 512, patience 15, as in the paper. The paper early-stops on the loss of a
10% validation split; that loss keeps falling after QE has peaked, so the epoch can instead be
chosen, and training stopped, on a dev signal (`select_on`, xlingua.meaning.dev): the WMT20 QE
dev Pearson or general-corpus dev retrieval. Every dev signal given is logged each epoch.
`use_meaning` / `use_language` drop L_M / L_L (the paper's Table 6); `language_weight` and
`negative_weight` scale L_L and L_M's negative terms, and `residual` starts the meaning vectors
at the base vectors (ablations of why STS drops).
"""
from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path
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
class TrainConfig:
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

    def __init__(self, src, tgt, src_langs, out, config: TrainConfig, dev: dict[str, DevSignal],
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
        return asdict(TrainConfig())

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


def train_meaning(src: np.ndarray, tgt: np.ndarray, src_langs: list[str], out_dir, *,
                  tgt_lang: str = "en", base_name: str = "", base_fingerprint: str = "",
                  config: TrainConfig | None = None, dev: dict[str, DevSignal] | None = None,
                  show_progress: bool = True) -> dict:
    """Train on base vectors of pairs (src[i] in src_langs[i], tgt[i] in tgt_lang); write
    out_dir/model.pt (the best epoch by `config.select_on`: lowest validation loss, or highest
    "mean" of that dev signal) and out_dir/train_log.json; return the log. `dev` maps names to
    signals (model -> {"mean": ..., subset: ...}), all computed and logged after every epoch.
    A run started again on the same out_dir with the same settings and data continues from its
    checkpoint (max_epochs, patience and snapshot_every may change)."""
    config = config or TrainConfig()
    dev = dict(dev or {})
    if src.shape != tgt.shape or len(src) != len(src_langs):
        raise ValueError(f"src {src.shape}, tgt {tgt.shape} and {len(src_langs)} languages do not line up")
    if config.select_on != "val-loss" and config.select_on not in dev:
        raise ValueError(f"select_on {config.select_on!r} names no dev signal; given: {sorted(dev) or 'none'}")
    run = MeaningRun(src, tgt, src_langs, out_dir, config, dev, tgt_lang, base_name, base_fingerprint)
    run.run(resume=run.checkpoint_path().exists(), show_progress=show_progress)
    return run.write_log(finished=True)


def train_from_corpus(base: str, langs: list[str], pairs_per_lang: int, out_dir, *,
                      config: TrainConfig | None = None, corpus: str | None = None,
                      extra: list[str] | None = None, general: list[str] | None = None,
                      general_langs: list[str] | None = None, general_pairs: int = 0,
                      general_root=None, dev: list[str] | None = None, qe_pairs=None,
                      data_dir=None, show_progress: bool = True, encoder=None) -> dict:
    """Embed a sample of l10n pairs, plus the `extra` sources of xlingua.meaning.data.read_extra
    (e.g. "xnli-dev") and the `general` corpus sources (e.g. "mlqe-pe", "newstest"; languages
    `general_langs`, at most `general_pairs` a source and language), with encoder `base` (cached),
    and train the MLPs on them. `dev` names the dev signals (xlingua.meaning.dev.SIGNALS) to
    compute each epoch; `config.select_on` picks the epoch by one of them."""
    from xlingua.data.benchmarks import MLQE_PAIRS
    from xlingua.encoders.loading import load_encoder
    from xlingua.meaning.data import Pairs, embed_cached, read_extra, read_general_pairs, read_l10n
    from xlingua.meaning.dev import SIGNALS, QEDev, RetrievalDev, StsDev

    config = config or TrainConfig()
    dev = list(dev if dev is not None else ([config.select_on] if config.select_on != "val-loss" else []))
    if config.select_on != "val-loss" and config.select_on not in dev:
        dev.append(config.select_on)
    unknown = [d for d in dev if d not in SIGNALS]
    if unknown:
        raise ValueError(f"unknown dev signal(s) {unknown}; known: {list(SIGNALS)} (and val-loss for select_on)")
    pairs = read_l10n(langs, pairs_per_lang, seed=config.seed, root=corpus) if langs and pairs_per_lang > 0 \
        else Pairs([], [], [])
    n_l10n, dropped, n_extra = len(pairs.src), 0, 0
    if extra:
        more, dropped = read_extra(extra, data_dir=data_dir)
        n_extra = len(more.src)
        pairs = Pairs(pairs.src + more.src, pairs.tgt + more.tgt, pairs.langs + more.langs)
    general_counts, general_dropped, n_general = {}, 0, 0
    if general:
        more, general_counts, general_dropped = read_general_pairs(
            general, general_langs or None, general_pairs, seed=config.seed, root=general_root, data_dir=data_dir)
        n_general = len(more.src)
        pairs = Pairs(pairs.src + more.src, pairs.tgt + more.tgt, pairs.langs + more.langs)
    if not pairs.src:
        raise ValueError("no training pairs: give l10n languages and --pairs > 0, extra data or general sources")
    encoder = encoder or load_encoder(base)
    src = embed_cached(encoder, pairs.src, show_progress=show_progress)
    tgt = embed_cached(encoder, pairs.tgt, show_progress=show_progress)
    signals = {}
    if "qe-dev" in dev:
        signals["qe-dev"] = QEDev.from_benchmarks(encoder, qe_pairs or MLQE_PAIRS, data_dir, show_progress)
    if "retrieval-dev" in dev:
        signals["retrieval-dev"] = RetrievalDev.from_general(encoder, root=general_root, show_progress=show_progress)
    if "sts-dev" in dev:
        signals["sts-dev"] = StsDev.from_benchmarks(encoder, data_dir, show_progress)
    log = train_meaning(src, tgt, pairs.langs, out_dir, base_name=encoder.name,
                        base_fingerprint=encoder.fingerprint(), config=config, dev=signals,
                        show_progress=show_progress)
    log["data"] = {"corpus": "l10n train", "langs": langs, "pairs_per_lang": pairs_per_lang, "base": base,
                   "l10n_pairs": n_l10n, "extra": list(extra or []), "extra_pairs": n_extra,
                   "extra_dropped_as_evaluation_sentences": dropped,
                   "general": list(general or []), "general_langs": list(general_langs or []),
                   "general_pairs_per_source_lang": general_pairs, "general_pairs": n_general,
                   "general_sampled": general_counts, "general_dropped_as_evaluation_sentences": general_dropped,
                   "dev": dev, "qe_dev_pairs": list(qe_pairs or MLQE_PAIRS) if "qe-dev" in dev else []}
    write_json(Path(out_dir, "train_log.json"), log)
    return log
