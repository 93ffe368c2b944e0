"""The LASER recipe, run by the one training loop (training.loop), for two objectives:

  translation  the paper's: the encoder feeds a decoder that translates into English or the
               second target language (objectives.laser_translation; Artetxe & Schwenk 2019)
  distill      LASER3's: the encoder alone learns to put a sentence and its English side where a
               frozen teacher puts the English sentence (objectives.distillation; Heffernan et
               al. 2022; data in xlingua.laser.distill)

Output directory:
  spm.model        the joint SentencePiece vocabulary
  checkpoint.pt    model + optimizer + step (written every `checkpoint_every` steps and at the end)
  log.jsonl        the loop's log: loss per step, time
  encoder.pt       the encoder alone (config + weights): what `laser:DIR` loads
  train_log.json   data summary, config, loss curve, time, size (distill: teacher, dev figures)
"""
from __future__ import annotations

import os
import time
from dataclasses import asdict, replace
from pathlib import Path

import torch

from xlingua.data.benchmarks import read_multi30k_aligned
from xlingua.data.text import InputError
from xlingua.encoders.laser_model import LaserModel, LaserStudent
from xlingua.encoders.laser_vocab import PAD, load_vocab, train_vocab
from xlingua.io import atomic_path, disk_full, partial_name, save_torch, write_json
from xlingua.laser.config import BEFORE, LaserTrainConfig
from xlingua.laser.data import Schedule, collate, encode_direction, read_l10n_pairs, summarize
from xlingua.training.checkpoint import read_log, resume_changes, seed_log
from xlingua.training.loop import LOG, LoopSettings, TrainingLoop


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

        source = Path(cfg.init.removeprefix("static:"))
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


def start_embedding(embed: torch.nn.Embedding, static_dir: Path) -> None:
    """Rows 4.. of the student's embedding = the static encoder's vectors, scaled so that their
    mean coordinate size is the default initialisation's (N(0, 1)): the LSTM sees inputs of the
    size it starts with either way. PAD, UNK, BOS, EOS keep their random rows."""
    from xlingua.encoders.static import StaticEncoder

    vectors = torch.from_numpy(StaticEncoder(static_dir).vectors)
    if vectors.shape[1] != embed.embedding_dim or vectors.shape[0] + 4 != embed.num_embeddings:
        raise ValueError(f"{static_dir}: {tuple(vectors.shape)} vectors do not fit an embedding of "
                         f"{embed.num_embeddings} x {embed.embedding_dim}: set embed_dim={vectors.shape[1]}")
    scale = (vectors.shape[1] ** 0.5) / vectors.norm(dim=1).mean()
    with torch.no_grad():
        embed.weight[4:] = vectors * scale


FREE = ("max_steps", "max_minutes", "checkpoint_every", "log_every", "snapshot_every", "dev_langs")


def export_encoder(model: LaserModel, out: Path, name: str = "encoder.pt") -> None:
    save_torch(out / name, {"config": model.config.to_dict(), "state": model.encoder.state_dict()})


class LaserRun(TrainingLoop):
    """One run; dropout is seeded per step (and the distill batch is the sampler's draw of that
    step), so resuming is exact without RNG state."""
    free = FREE

    def __init__(self, cfg: LaserTrainConfig, out: Path, model, batches):
        super().__init__(out, LoopSettings(
            max_steps=cfg.max_steps, max_minutes=cfg.max_minutes, log_every=cfg.log_every,
            checkpoint_every=cfg.checkpoint_every, checkpoint_at_end=True, snapshot_every=cfg.snapshot_every,
            label="laser step"))
        self.cfg, self.model, self.batches = cfg, model, batches
        self.opt = torch.optim.Adam(model.parameters(), lr=cfg.lr)

    def train_step(self) -> dict:
        torch.manual_seed(self.cfg.seed * 1_000_003 + self.step)
        loss, fields = self.batches(self.model, self.step)
        self.opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(self.model.parameters(), 5.0)
        self.opt.step()
        self.step += 1
        return {"loss": loss.item(), **fields}

    def identity(self) -> dict:
        return asdict(self.cfg)

    def defaults(self) -> dict:
        return {**asdict(LaserTrainConfig()), **BEFORE}

    def state_dict(self) -> dict:
        return {"model": self.model.state_dict(), "optimizer": self.opt.state_dict()}

    def load_state_dict(self, state: dict, changes: dict) -> None:
        self.model.load_state_dict(state["model"])
        self.opt.load_state_dict(state["optimizer"])

    def upgrade(self, state: dict) -> dict:
        return upgrade(state, self.out)

    def save_snapshot(self) -> None:
        export_encoder(self.model, self.out, f"encoder_step{self.step}.pt")

    def on_checkpoint(self) -> None:
        export_encoder(self.model, self.out)

    def history(self) -> list[dict]:
        return [{k: r[k] for k in ("step", "loss", "tokens", "seconds")} for r in read_log(self.out / LOG) if "loss" in r]


def upgrade(state: dict, out: Path) -> dict:
    """A checkpoint of the LASER trainer before the one loop: its loss curve goes to log.jsonl."""
    if "train_config" not in state:
        return state
    seed_log(out / LOG, [{"step": 0, "config": state["train_config"]}] + state["history"])
    return {"config": state["train_config"], "model": state["model"], "optimizer": state["optimizer"],
            "step": state["step"], "elapsed": state["elapsed"]}


def translation_batches(directions, schedule: Schedule):
    """(model, step) -> (loss, log fields) of the step's batch (the schedule's direction)."""
    from xlingua.objectives.laser_translation import LaserTranslationLoss

    loss_fn = LaserTranslationLoss()

    def batch(model, step):
        di, idx = schedule(step)
        d = directions[di]
        src, lengths, tin, tout, lang = collate(d, idx, model.config.target_langs.index(d.tgt_lang))
        loss = loss_fn(model(src, lengths, tin, lang), tout)
        return loss, {"tokens": int((tout != PAD).sum()), "direction": f"{d.src_lang}->{d.tgt_lang}"}
    return batch


def distill_batches(data, sampler, loss_fn, batch_size: int):
    """(model, step) -> (loss, log fields): batch t is the sampler's t-th draw."""
    from xlingua.laser.distill import pad_both

    def batch(model, step):
        sampler.load_state_dict({"calls": step})
        idx = sampler.next(batch_size)
        tokens, lengths = pad_both([data.xx[i] for i in idx], [data.en[i] for i in idx])
        xx, en = model(tokens, lengths).chunk(2)
        return loss_fn(xx, data.teacher[data.row[idx]], en), {"tokens": int(lengths.sum())}
    return batch


def train_laser(cfg: LaserTrainConfig, out_dir, *, l10n_root=None, data_dir=None, resume: bool = True,
                show_progress: bool = True, teacher_encoder=None, teacher_cache=None) -> dict:
    """Train (or resume) a run in `out_dir`. For distill, `teacher_encoder` replaces loading
    `cfg.teacher` (its fingerprint keys the cache) and `teacher_cache` is the cache directory."""
    from xlingua.paths import corpora_dir

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    l10n_root = Path(l10n_root) if l10n_root else corpora_dir() / "l10n"
    ckpt_path = out / "checkpoint.pt"
    state = None
    if ckpt_path.exists() and resume:
        state = upgrade(torch.load(ckpt_path, map_location="cpu", weights_only=False), out)
        # a setting the checkpoint does not record ran at its default, or at its BEFORE value:
        # the resumed run keeps that value, so its data stays the same
        cfg = replace(cfg, **{k: v for k, v in BEFORE.items() if k not in state["config"]})
        # checked here, before minutes of data preparation
        resume_changes(ckpt_path, state["config"], asdict(cfg), {**asdict(LaserTrainConfig()), **BEFORE}, FREE)
    t0 = time.time()
    center = None
    if cfg.objective == "translation":
        sp, directions, dropped = build_directions(cfg, out, l10n_root, data_dir)
        torch.manual_seed(cfg.seed)
        model = LaserModel(cfg.model_config(sp.get_piece_size()))
        batches = translation_batches(directions, Schedule(directions, cfg.max_tokens, cfg.seed))
        data_log = {"data": summarize(directions)}
    else:
        from xlingua.data.examples import LanguageSampler
        from xlingua.objectives.distillation import DistillationLoss

        sp, data, dropped, teacher_encoder = build_distill(cfg, out, data_dir, teacher_encoder, teacher_cache,
                                                           show_progress)
        teacher_dim = int(data.teacher.shape[1])
        if cfg.center_teacher:
            from xlingua.laser.distill import center_targets

            data.teacher, center = center_targets(data.teacher)
        torch.manual_seed(cfg.seed)
        # LASER3 keeps the teacher's size; a student of another width gets a linear projection to it
        model = LaserStudent(cfg.model_config(sp.get_piece_size(), 0 if 2 * cfg.hidden == teacher_dim else teacher_dim))
        if cfg.init:
            start_embedding(model.encoder.embed, Path(cfg.init.removeprefix("static:")))
        sampler = LanguageSampler(data.langs, [str(r) for r in data.row], cfg.temperature, cfg.seed)
        batches = distill_batches(data, sampler, DistillationLoss(cfg.metric, cfg.english_weight), cfg.batch_size)
        data_log = {"data": data.summary(), "language_shares": sampler.shares(),
                    "teacher": {"spec": cfg.teacher, "dim": teacher_dim, "fingerprint": teacher_encoder.fingerprint(),
                                "centered": cfg.center_teacher}}
    prep_seconds = time.time() - t0
    run = LaserRun(cfg, out, model, batches)
    model.train()
    run.run(resume=state is not None, show_progress=show_progress, state=state)
    log = {"train_config": asdict(cfg), **data_log, "dropped_over_max_len": dropped,
           "steps": run.step, "train_seconds": round(run.elapsed, 1), "prep_seconds": round(prep_seconds, 1),
           "encoder_params": sum(p.numel() for p in model.encoder.parameters()),
           "total_params": sum(p.numel() for p in model.parameters()),
           "encoder_bytes": (out / "encoder.pt").stat().st_size, "history": run.history()}
    if cfg.objective == "distill" and cfg.dev_langs:
        from xlingua.encoders.laser import LaserEncoder
        from xlingua.laser.distill import dev_scores

        log["dev"] = dev_scores(LaserEncoder(str(out)), cfg.teacher, cfg.dev_langs, teacher_encoder, teacher_cache,
                                center=None if center is None else center.numpy())
    write_json(out / "train_log.json", log)
    return log


def run_recipe(data: dict, show_progress: bool = True) -> dict:
    """A `recipe: laser` training config (laser.config.recipe_config), trained or resumed."""
    from xlingua.laser.config import recipe_config

    cfg, out, resume = recipe_config(data)
    return train_laser(cfg, out, resume=resume, show_progress=show_progress)


def summary(log: dict, out) -> str:
    dev = f"; dev accuracy {log['dev']['accuracy']:.1f}, cosine to teacher {log['dev']['teacher_cosine']:.3f}" \
        if "dev" in log else ""
    return (f"{log['steps']} steps in {log['train_seconds']:.0f}s; encoder {log['encoder_params']:,} params, "
            f"{log['encoder_bytes'] / 1e6:.1f} MB; wrote {Path(out) / 'encoder.pt'}{dev}")
