"""Training of the meaning MLPs on cached base embeddings of parallel pairs.

Adam (lr 1e-4), batch 512, patience 15, as in the paper. The paper early-stops on the loss of a
10% validation split; that loss keeps falling after QE has peaked, so the epoch can instead be
chosen, and training stopped, on a dev signal (`select_on`, xlingua.meaning.dev): the WMT20 QE
dev Pearson or general-corpus dev retrieval. Every dev signal given is logged each epoch.
`use_meaning` / `use_language` drop L_M / L_L (the paper's Table 6); `language_weight` and
`negative_weight` scale L_L and L_M's negative terms, and `residual` starts the meaning vectors
at the base vectors (ablations of why STS drops).
"""
from __future__ import annotations

import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Callable

import numpy as np
import torch

from xlingua.io import save_torch, write_json
from xlingua.meaning.losses import LanguageLoss, MeaningLoss, ReconstructionLoss
from xlingua.encoders.meaning_mlp import MeaningConfig, MeaningModel


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


class MeaningObjective(torch.nn.Module):
    """L = L_R(s) + L_R(t) + L_M + L_L, with L_M / L_L optional."""

    def __init__(self, model: MeaningModel, use_meaning: bool = True, use_language: bool = True,
                 language_weight: float = 1.0, negative_weight: float = 1.0):
        super().__init__()
        self.model = model
        self.use_meaning = use_meaning
        self.use_language = use_language
        self.language_weight = language_weight
        self.rec, self.mean, self.lang = ReconstructionLoss(), MeaningLoss(negative_weight), LanguageLoss()

    def forward(self, s, t, s2, t2, s_lang, t_lang) -> dict[str, torch.Tensor]:
        (sm, sl), (tm, tl) = self.model(s), self.model(t)
        parts = {"rec": self.rec(s, sm, sl) + self.rec(t, tm, tl)}
        if self.use_meaning or self.use_language:
            (s2m, s2l), (t2m, t2l) = self.model(s2), self.model(t2)
        if self.use_meaning:
            parts["meaning"] = self.mean(sm, tm, s2m, t2m)
        if self.use_language:
            parts["language"] = self.lang(sl, tl, s2l, t2l, self.model.mlp_i(sl), self.model.mlp_i(tl),
                                          s_lang, t_lang)
        weights = {"language": self.language_weight}
        parts["loss"] = sum(weights.get(k, 1.0) * v for k, v in parts.items())
        return parts


DevSignal = Callable[[MeaningModel], dict]


def train_meaning(src: np.ndarray, tgt: np.ndarray, src_langs: list[str], out_dir, *,
                  tgt_lang: str = "en", base_name: str = "", base_fingerprint: str = "",
                  config: TrainConfig | None = None, dev: dict[str, DevSignal] | None = None,
                  show_progress: bool = True) -> dict:
    """Train on base vectors of pairs (src[i] in src_langs[i], tgt[i] in tgt_lang); write
    out_dir/model.pt (the best epoch by `config.select_on`: lowest validation loss, or highest
    "mean" of that dev signal) and out_dir/train_log.json; return the log. `dev` maps names to
    signals (model -> {"mean": ..., subset: ...}), all computed and logged after every epoch.
    After every epoch out_dir/state.pt is written; a run started again on the same out_dir with
    the same settings and data continues from it (max_epochs and patience may change)."""
    config = config or TrainConfig()
    dev = dict(dev or {})
    if src.shape != tgt.shape or len(src) != len(src_langs):
        raise ValueError(f"src {src.shape}, tgt {tgt.shape} and {len(src_langs)} languages do not line up")
    if config.select_on != "val-loss" and config.select_on not in dev:
        raise ValueError(f"select_on {config.select_on!r} names no dev signal; given: {sorted(dev) or 'none'}")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(config.seed)
    rng = np.random.default_rng(config.seed)

    langs = sorted(set(src_langs) | {tgt_lang})
    lid = {l: i for i, l in enumerate(langs)}
    s_lang = np.array([lid[l] for l in src_langs])
    n = len(src)
    perm = rng.permutation(n)
    n_val = max(1, int(round(n * config.val_fraction)))
    val_idx, train_idx = perm[:n_val], perm[n_val:]

    model = MeaningModel(MeaningConfig(dim=src.shape[1], langs=langs, hidden=config.hidden,
                                       base=base_name, base_fingerprint=base_fingerprint,
                                       residual=config.residual))
    objective = MeaningObjective(model, config.use_meaning, config.use_language,
                                 config.language_weight, config.negative_weight)
    opt = torch.optim.Adam(model.parameters(), lr=config.lr)
    S, T = torch.from_numpy(src.astype(np.float32)), torch.from_numpy(tgt.astype(np.float32))
    en = np.full(n, lid[tgt_lang])
    # Negatives for a split come from that split only; validation uses the same ones each epoch.
    train_neg = _SameLanguageSampler(s_lang, train_idx, config.seed)
    val_neg = _SameLanguageSampler(s_lang, val_idx, config.seed + 1)

    def batch_parts(idx, sampler):
        s2, t2 = sampler(idx)
        return objective(S[idx], T[idx], S[s2], T[t2],
                         torch.from_numpy(s_lang[idx]), torch.from_numpy(en[idx]))

    def val_loss() -> dict[str, float]:
        model.eval()
        val_neg.reset()
        totals = {}
        with torch.no_grad():
            for start in range(0, len(val_idx), config.batch_size):
                idx = val_idx[start:start + config.batch_size]
                for k, v in batch_parts(idx, val_neg).items():
                    totals[k] = totals.get(k, 0.0) + float(v) * len(idx)
        model.train()
        return {k: v / len(val_idx) for k, v in totals.items()}

    def dev_figures() -> dict[str, float]:
        model.eval()
        out = {}
        for name, signal in dev.items():
            for k, v in signal(model).items():
                out[name if k == "mean" else f"{name} {k}"] = float(v)
        model.train()
        return out

    history, best, bad, best_epoch, best_val = [], -float("inf"), 0, 0, float("inf")
    start_time = time.time()
    # Resume after a kill: state.pt holds everything the next epoch depends on.
    state_path = out / "state.pt"
    identity = {**asdict(config), "n": n, "dim": int(src.shape[1]), "langs": langs}
    for k in ("max_epochs", "patience", "snapshot_every"):  # stopping rules may change on resume
        identity.pop(k)
    if state_path.exists():
        state = torch.load(state_path, map_location="cpu", weights_only=True)
        # A setting state.pt does not record ran at its default.
        old = {**{k: v for k, v in asdict(TrainConfig()).items() if k in identity}, **state["identity"]}
        if old != identity:
            raise ValueError(f"{out} holds a run with other settings or data (state.pt); "
                             f"give another --out or delete {state_path}")
        model.load_state_dict(state["model"])
        opt.load_state_dict(state["optimizer"])
        rng.bit_generator.state = state["rng"]
        train_neg.rng.bit_generator.state = state["train_neg_rng"]
        history, best, bad, best_epoch, best_val = (state[k] for k in ("history", "best", "bad", "best_epoch", "best_val"))
        start_time -= state["seconds"]

    def save_state() -> None:
        save_torch(state_path, {"identity": identity, "model": model.state_dict(), "optimizer": opt.state_dict(),
                                "rng": rng.bit_generator.state, "train_neg_rng": train_neg.rng.bit_generator.state,
                                "history": history, "best": best, "bad": bad, "best_epoch": best_epoch,
                                "best_val": best_val, "seconds": time.time() - start_time})

    def write_log(finished: bool) -> dict:
        log = {"config": asdict(config), "langs": langs, "n_train": len(train_idx), "n_val": len(val_idx),
               "select_on": config.select_on, "best_epoch": best_epoch, "best_score": best,
               "best_val_loss": best_val, "epochs": len(history), "finished": finished,
               "seconds": round(time.time() - start_time, 1), "history": history}
        write_json(out / "train_log.json", log)
        return log

    progress = _progress(config.max_epochs) if show_progress else None
    if progress:
        progress[0].update(progress[1], completed=len(history))
    try:
        for epoch in range(len(history) + 1, config.max_epochs + 1):
            if bad >= config.patience:
                break  # a resumed run that had already stopped
            order = rng.permutation(train_idx)
            train_total = 0.0
            for start in range(0, len(order), config.batch_size):
                idx = order[start:start + config.batch_size]
                loss = batch_parts(idx, train_neg)["loss"]
                opt.zero_grad()
                loss.backward()
                opt.step()
                train_total += loss.item() * len(idx)
            val = val_loss()
            figures = dev_figures()
            history.append({"epoch": epoch, "train_loss": train_total / len(order),
                            **{f"val_{k}": v for k, v in val.items()}, **figures})
            # Higher is better for every selection score; ties keep the earlier epoch.
            score = -val["loss"] if config.select_on == "val-loss" else figures[config.select_on]
            if score > best + 1e-6:
                best, bad, best_epoch, best_val = score, 0, epoch, val["loss"]
                model.save(out / "model.pt")
            else:
                bad += 1
            if config.snapshot_every and epoch % config.snapshot_every == 0:
                model.save(out / f"model_epoch{epoch}.pt")
            save_state()
            write_log(finished=False)  # a killed run still says how far it got
            if progress:
                progress[0].update(progress[1], advance=1,
                                   description=f"{config.select_on} {score:.4f} best {best:.4f}@{best_epoch}")
    finally:
        if progress:
            progress[0].stop()
    return write_log(finished=True)


def _progress(total: int):
    from xlingua.progress import progress_bar

    return progress_bar("[bold]meaning[/] epoch", total, extra="{task.description}")


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
