"""The data of a LASER run: corpora read, the vocabulary learned (or reused, or a static
encoder's pieces), sides tokenized, the teacher's vectors attached (distill)."""
from __future__ import annotations

import os
from pathlib import Path

import torch

from xlingua.data.benchmarks import read_multi30k_aligned
from xlingua.data.text import InputError
from xlingua.encoders.laser_vocab import load_vocab, train_vocab
from xlingua.io import atomic_path, disk_full, partial_name
from xlingua.laser.config import LaserTrainConfig
from xlingua.laser.data import encode_direction, read_l10n_pairs


def build_directions(cfg: LaserTrainConfig, out: Path, l10n_root: Path, data_dir=None):
    """Read the corpora, learn (or reuse) the vocabulary, and tokenize every direction."""
    raw: dict[tuple[str, str], tuple[list[str], list[str]]] = {}

    def add(s_lang, t_lang, src, tgt):
        a, b = raw.setdefault((s_lang, t_lang), ([], []))
        a.extend(src)
        b.extend(tgt)

    for lang in cfg.langs:
        xx, en = read_l10n_pairs(l10n_root, lang, cfg.l10n_pairs or None, cfg.seed)
        add(lang, "en", xx, en)
        if lang == cfg.second_target:
            add("en", lang, en, xx)
    if cfg.multi30k:
        m30 = read_multi30k_aligned([l for l in ("en", "de", "fr", "cs") if l == "en" or l in cfg.langs],
                                    "train", data_dir)
        if cfg.multi30k_pairs:
            m30 = {lang: lines[:cfg.multi30k_pairs] for lang, lines in m30.items()}
        for s_lang, lines in m30.items():
            for t_lang in ("en", cfg.second_target):
                if t_lang != s_lang and t_lang in m30:
                    add(s_lang, t_lang, lines, m30[t_lang])
    texts: dict[str, list[str]] = {}
    for (s_lang, t_lang), (src, tgt) in raw.items():
        texts.setdefault(s_lang, []).extend(src)
        texts.setdefault(t_lang, []).extend(tgt)
    sp = vocabulary(cfg, out, texts)
    directions, dropped = [], {}
    for (s_lang, t_lang), (src, tgt) in sorted(raw.items()):
        d, n_drop = encode_direction(sp, s_lang, t_lang, src, tgt, cfg.max_len)
        directions.append(d)
        dropped[f"{s_lang}-{t_lang}"] = n_drop
    return sp, directions, dropped


def vocabulary(cfg: LaserTrainConfig, out: Path, texts: dict[str, list[str]]):
    """The run's SentencePiece model, learned on the training text on the first run (reused on
    resume); or, with `init` static:DIR, that static encoder's pieces, copied into the run."""
    if cfg.init:
        from xlingua.encoders.static import StaticPieces

        source = static_init_dir(cfg.init)
        pieces = StaticPieces(source)
        pieces.save(out, source)
        return pieces
    spm_path = out / "spm.model"
    if not spm_path.exists():
        # spm.model is published last: its presence means the vocabulary is done
        with atomic_path(spm_path) as model_tmp, atomic_path(out / "spm.vocab") as vocab_tmp:
            prefix = partial_name(out / "spm")
            model = train_vocab(texts, prefix, vocab_size=cfg.vocab_size, seed=cfg.seed)
            try:  # SentencePiece does not report a failed write: check what it wrote
                load_vocab(model)
            except RuntimeError as exc:
                for ext in (".model", ".vocab"):
                    Path(f"{prefix}{ext}").unlink(missing_ok=True)
                raise disk_full(OSError(None, str(exc)), spm_path) or InputError(
                    f"{spm_path}: SentencePiece wrote no valid model ({exc})") from None
            os.replace(model, model_tmp)
            os.replace(f"{prefix}.vocab", vocab_tmp)
    return load_vocab(spm_path)


def build_distill(cfg: LaserTrainConfig, out: Path, data_dir=None, teacher_encoder=None, teacher_cache=None,
                  show_progress: bool = True):
    """Read the pairs, learn (or reuse) the vocabulary, tokenize, attach the teacher's vectors.
    Returns (vocabulary, DistillSet, pairs dropped over max_len, teacher encoder)."""
    from xlingua.laser.distill import build_set, encode_pairs, read_distill_pairs

    pairs = read_distill_pairs(cfg.general, cfg.general_langs, cfg.langs, cfg.l10n_pairs, cfg.multi30k,
                               cfg.stsb_langs, cfg.exclude_langs, data_dir)
    texts: dict[str, list[str]] = {"en": sorted({p[1] for p in pairs})}
    for x, _, lang in pairs:
        texts.setdefault(lang, []).append(x)
    sp = vocabulary(cfg, out, texts)
    kept, dropped = encode_pairs(sp, pairs, cfg.max_len, cfg.truncate)
    if teacher_encoder is None:
        from xlingua.encoders.loading import load_encoder

        teacher_encoder = load_encoder(cfg.teacher)
    data = build_set(kept, cfg.teacher, teacher_encoder, teacher_cache, show_progress)
    return sp, data, dropped, teacher_encoder


def static_init_dir(init: str) -> Path:
    """The static encoder directory `init` names: static:DIR, or a shipped static encoder (from its model package)."""
    from xlingua.encoders.static import PACKAGED

    if init in PACKAGED:
        from xlingua.encoders.model_packages import model_dir

        return model_dir(init, "`xlingua static ship`")
    return Path(init.removeprefix("static:"))


def start_embedding(embed: torch.nn.Embedding, static_dir: Path) -> None:
    """Rows 4.. of the student's embedding = the static encoder's vectors, scaled to the default
    initialisation's size (encoders.laser.static_rows). PAD, UNK, BOS, EOS keep their random rows."""
    from xlingua.encoders.laser import static_rows
    from xlingua.encoders.static import StaticEncoder

    static = StaticEncoder(static_dir)
    shape = static.vectors.shape
    if shape[1] != embed.embedding_dim or shape[0] + 4 != embed.num_embeddings:
        raise ValueError(f"{static_dir}: {tuple(shape)} vectors do not fit an embedding of "
                         f"{embed.num_embeddings} x {embed.embedding_dim}: set embed_dim={shape[1]}")
    with torch.no_grad():
        embed.weight[4:] = static_rows(static)[0]


def start_skip(encoder, data, rows: int = 20000, ridge: float = 1e-2) -> float:
    """The mean skip's map fitted by ridge least squares from the mean input vector of English
    sides to their targets (the first `rows` distinct English sentences of `data`): the student
    starts where its embedding's mean puts a sentence, carried into the teacher's space. Returns
    the fit's mean cosine to the targets."""
    from xlingua.encoders.laser_model import mean_pool, pad_batch

    first: dict[int, object] = {}
    for ids, r in zip(data.en, data.row):
        if len(first) >= rows:
            break
        first.setdefault(int(r), ids)
    keys = list(first)
    means = []
    with torch.no_grad():
        for i in range(0, len(keys), 1024):
            tokens, lengths = pad_batch([list(first[k]) for k in keys[i:i + 1024]])
            means.append(mean_pool(encoder.embed(tokens), lengths))
        x, y = torch.cat(means).double(), data.teacher[keys].double()
        w = torch.linalg.solve(x.T @ x + ridge * len(keys) * torch.eye(x.shape[1], dtype=x.dtype), x.T @ y)
        encoder.skip.weight.copy_(w.T.to(encoder.skip.weight.dtype))
        return float(torch.nn.functional.cosine_similarity(x @ w, y, dim=1).mean())
