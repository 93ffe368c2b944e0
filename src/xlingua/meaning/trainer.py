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

from pathlib import Path

import numpy as np

from xlingua.io import write_json
from xlingua.meaning.run import DevSignal, MeaningRun, MeaningTrainConfig

__all__ = ["DevSignal", "MeaningRun", "MeaningTrainConfig", "train_from_corpus", "train_meaning"]


def train_meaning(src: np.ndarray, tgt: np.ndarray, src_langs: list[str], out_dir, *,
                  tgt_lang: str = "en", base_name: str = "", base_fingerprint: str = "",
                  config: MeaningTrainConfig | None = None, dev: dict[str, DevSignal] | None = None,
                  show_progress: bool = True) -> dict:
    """Train on base vectors of pairs (src[i] in src_langs[i], tgt[i] in tgt_lang); write
    out_dir/model.pt (the best epoch by `config.select_on`: lowest validation loss, or highest
    "mean" of that dev signal) and out_dir/train_log.json; return the log. `dev` maps names to
    signals (model -> {"mean": ..., subset: ...}), all computed and logged after every epoch.
    A run started again on the same out_dir with the same settings and data continues from its
    checkpoint (max_epochs, patience and snapshot_every may change)."""
    config = config or MeaningTrainConfig()
    dev = dict(dev or {})
    if src.shape != tgt.shape or len(src) != len(src_langs):
        raise ValueError(f"src {src.shape}, tgt {tgt.shape} and {len(src_langs)} languages do not line up")
    if config.select_on != "val-loss" and config.select_on not in dev:
        raise ValueError(f"select_on {config.select_on!r} names no dev signal; given: {sorted(dev) or 'none'}")
    run = MeaningRun(src, tgt, src_langs, out_dir, config, dev, tgt_lang, base_name, base_fingerprint)
    run.run(resume=run.checkpoint_path().exists(), show_progress=show_progress)
    return run.write_log(finished=True)


def train_from_corpus(base: str, langs: list[str], pairs_per_lang: int, out_dir, *,
                      config: MeaningTrainConfig | None = None, corpus: str | None = None,
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

    config = config or MeaningTrainConfig()
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
