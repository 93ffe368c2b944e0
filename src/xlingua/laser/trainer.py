"""LASER training: checkpoints, resume, progress, a step and/or time budget.

Output directory:
  spm.model        the joint SentencePiece vocabulary
  checkpoint.pt    model + optimizer + step (written every `checkpoint_every` steps and at the end)
  encoder.pt       the encoder alone (config + weights): what `laser:DIR` loads
  train_log.json   data summary, config, loss curve, time, size
"""
from __future__ import annotations

import json
import os
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import torch
import torch.nn.functional as F

from xlingua.data.benchmarks import read_multi30k_aligned
from xlingua.io import atomic_path, partial_name, save_torch, write_json
from xlingua.laser.data import Direction, Schedule, collate, encode_direction, read_l10n_pairs, summarize
from xlingua.laser.model import LaserConfig, LaserModel
from xlingua.laser.vocab import PAD, load_vocab, train_vocab


@dataclass
class LaserTrainConfig:
    langs: list[str] = field(default_factory=lambda: ["de", "nl", "fr", "es", "it", "pt", "ru", "cs", "pl"])
    second_target: str = "fr"  # the paper's second target language was Spanish
    l10n_pairs: int = 15000  # per language (sampled); 0 = all
    multi30k: bool = True
    multi30k_pairs: int = 0  # 0 = all 29,000
    vocab_size: int = 8000
    max_len: int = 64  # pieces; longer pairs are dropped from training and counted in the log
    embed_dim: int = 256
    hidden: int = 256
    layers: int = 1
    dec_hidden: int = 512
    lang_dim: int = 32
    dropout: float = 0.1
    max_tokens: int = 2500
    lr: float = 1e-3
    max_steps: int = 100000
    max_minutes: float = 0.0  # 0 = no time budget
    checkpoint_every: int = 200
    log_every: int = 50
    snapshot_every: int = 0  # also keep encoder_step{N}.pt every N steps (0 = never), to compare runs at equal steps
    seed: int = 0

    def model_config(self, vocab_size: int) -> LaserConfig:
        return LaserConfig(vocab_size=vocab_size, target_langs=["en", self.second_target], embed_dim=self.embed_dim,
                           hidden=self.hidden, layers=self.layers, dec_hidden=self.dec_hidden,
                           lang_dim=self.lang_dim, dropout=self.dropout)


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
    spm_path = out / "spm.model"
    if not spm_path.exists():
        texts: dict[str, list[str]] = {}
        for (s_lang, t_lang), (src, tgt) in raw.items():
            texts.setdefault(s_lang, []).extend(src)
            texts.setdefault(t_lang, []).extend(tgt)
        # spm.model is published last: its presence means the vocabulary is done
        with atomic_path(spm_path) as model_tmp, atomic_path(out / "spm.vocab") as vocab_tmp:
            prefix = partial_name(out / "spm")
            os.replace(train_vocab(texts, prefix, vocab_size=cfg.vocab_size, seed=cfg.seed), model_tmp)
            os.replace(f"{prefix}.vocab", vocab_tmp)
    sp = load_vocab(spm_path)
    directions, dropped = [], {}
    for (s_lang, t_lang), (src, tgt) in sorted(raw.items()):
        d, n_drop = encode_direction(sp, s_lang, t_lang, src, tgt, cfg.max_len)
        directions.append(d)
        dropped[f"{s_lang}-{t_lang}"] = n_drop
    return sp, directions, dropped


def _data_model_config(d: dict) -> dict:
    """The part of a config a resumed run must share (the budget may change)."""
    return {k: v for k, v in d.items() if k not in ("max_steps", "max_minutes", "checkpoint_every", "log_every", "snapshot_every")}


def _save(obj, path: Path) -> None:
    save_torch(path, obj)


def train_steps(model: LaserModel, opt, directions: list[Direction], schedule: Schedule, start: int, end: int,
                seed: int, on_step=None, deadline: float | None = None) -> int:
    """Run steps [start, end); dropout randomness is seeded per step so resuming is exact.
    Returns the next step (earlier than `end` if the deadline passed)."""
    model.train()
    step = start
    while step < end:
        if deadline is not None and time.time() >= deadline:
            break
        di, idx = schedule(step)
        d = directions[di]
        src, lengths, tin, tout, lang = collate(d, idx, model.config.target_langs.index(d.tgt_lang))
        torch.manual_seed(seed * 1_000_003 + step)
        logits = model(src, lengths, tin, lang)
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), tout.reshape(-1), ignore_index=PAD)
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 5.0)
        opt.step()
        step += 1
        if on_step:
            on_step(step, loss.item(), int((tout != PAD).sum()), d)
    return step


def export_encoder(model: LaserModel, out: Path, name: str = "encoder.pt") -> None:
    _save({"config": model.config.to_dict(), "state": model.encoder.state_dict()}, out / name)


def train_laser(cfg: LaserTrainConfig, out_dir, *, l10n_root=None, data_dir=None, resume: bool = True,
                show_progress: bool = True) -> dict:
    from xlingua.paths import corpora_dir

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    l10n_root = Path(l10n_root) if l10n_root else corpora_dir() / "l10n"
    ckpt_path = out / "checkpoint.pt"
    if ckpt_path.exists() and resume:
        saved = torch.load(ckpt_path, map_location="cpu", weights_only=False)
        if _data_model_config(saved["train_config"]) != _data_model_config(asdict(cfg)):
            raise ValueError(f"{ckpt_path} was written with a different config; use a new --out or --no-resume")
    t0 = time.time()
    sp, directions, dropped = build_directions(cfg, out, l10n_root, data_dir)
    prep_seconds = time.time() - t0
    torch.manual_seed(cfg.seed)
    model = LaserModel(cfg.model_config(sp.get_piece_size()))
    opt = torch.optim.Adam(model.parameters(), lr=cfg.lr)
    step, elapsed, history = 0, 0.0, []
    if ckpt_path.exists() and resume:
        model.load_state_dict(saved["model"])
        opt.load_state_dict(saved["optimizer"])
        step, elapsed, history = saved["step"], saved["elapsed"], saved["history"]
    schedule = Schedule(directions, cfg.max_tokens, cfg.seed)

    def checkpoint(step_now, elapsed_now):
        _save({"model": model.state_dict(), "optimizer": opt.state_dict(), "step": step_now,
               "elapsed": elapsed_now, "history": history, "train_config": asdict(cfg)}, ckpt_path)
        export_encoder(model, out)

    run_start = time.time()
    budget_end = run_start + cfg.max_minutes * 60 - elapsed if cfg.max_minutes else None
    window = {"loss": 0.0, "n": 0, "tokens": 0}
    progress = _progress(cfg.max_steps, step) if show_progress else None

    def on_step(s, loss, tokens, d):
        window["loss"] += loss
        window["n"] += 1
        window["tokens"] += tokens
        if s % cfg.log_every == 0:
            history.append({"step": s, "loss": window["loss"] / window["n"], "tokens": window["tokens"],
                            "seconds": round(elapsed + time.time() - run_start, 1)})
            window.update(loss=0.0, n=0, tokens=0)
            if not sys.stdout.isatty():  # the bar only draws on a terminal; keep logs readable
                print(json.dumps(history[-1]), flush=True)
        if progress:
            progress[0].update(progress[1], completed=s, description=f"loss {loss:.3f} ({d.src_lang}->{d.tgt_lang})")
        if s % cfg.checkpoint_every == 0:
            checkpoint(s, elapsed + time.time() - run_start)
        if cfg.snapshot_every and s % cfg.snapshot_every == 0:
            export_encoder(model, out, f"encoder_step{s}.pt")

    try:
        step = train_steps(model, opt, directions, schedule, step, cfg.max_steps, cfg.seed, on_step, budget_end)
    finally:
        if progress:
            progress[0].stop()
    elapsed += time.time() - run_start
    checkpoint(step, elapsed)
    log = {"train_config": asdict(cfg), "data": summarize(directions), "dropped_over_max_len": dropped,
           "steps": step, "train_seconds": round(elapsed, 1), "prep_seconds": round(prep_seconds, 1),
           "encoder_params": sum(p.numel() for p in model.encoder.parameters()),
           "total_params": sum(p.numel() for p in model.parameters()),
           "encoder_bytes": (out / "encoder.pt").stat().st_size, "history": history}
    write_json(out / "train_log.json", log)
    return log


def _progress(total: int, done: int):
    from xlingua.progress import progress_bar

    return progress_bar("[bold]laser[/] step", total, completed=done, extra="{task.description}")
