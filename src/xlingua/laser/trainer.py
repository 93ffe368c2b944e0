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
  encoder_best.pt  with eval_every: the dev-best student (`laser:DIR/encoder_best.pt`)
  train_log.json   data summary, config, loss curve, time, size (distill: teacher, dev figures)
"""
from __future__ import annotations

import time
from dataclasses import asdict, replace
from pathlib import Path

import torch

from xlingua.encoders.laser_model import LaserModel, LaserStudent
from xlingua.encoders.laser_vocab import PAD
from xlingua.io import save_torch, write_json
from xlingua.laser.config import BEFORE, LaserTrainConfig
from xlingua.laser.data import Schedule, collate, summarize
from xlingua.laser.prepare import build_directions, build_distill, start_embedding, start_skip, static_init_dir
from xlingua.training.checkpoint import read_log, resume_changes, seed_log
from xlingua.training.evaluators import Evaluator
from xlingua.training.loop import LOG, LoopSettings, TrainingLoop


FREE = ("max_steps", "max_minutes", "checkpoint_every", "log_every", "snapshot_every", "dev_langs", "eval_every")


BEST = "encoder_best.pt"


class CurrentStudent(Evaluator):
    """A dev evaluator of `laser:DIR` encoders (laser.distill.StudentDev) on the student in
    training, written out and read back as `laser:OUT/encoder_eval.pt`, as it will be used."""

    def __init__(self, dev, out: Path):
        self.dev, self.out = dev, out
        self.main_score, self.greater_is_better = dev.main_score, dev.greater_is_better

    def __call__(self, model) -> dict[str, float]:
        from xlingua.encoders.laser import LaserEncoder

        export_encoder(model, self.out, "encoder_eval.pt")
        return self.dev(LaserEncoder(str(self.out / "encoder_eval.pt")))


def recorded_defaults() -> dict:
    """What a setting a checkpoint does not record ran at."""
    return {**asdict(LaserTrainConfig()), **BEFORE}


def export_encoder(model: LaserModel, out: Path, name: str = "encoder.pt") -> None:
    save_torch(out / name, {"config": model.config.to_dict(), "state": model.encoder.state_dict()})


class LaserRun(TrainingLoop):
    """One run; dropout is seeded per step (and the distill batch is the sampler's draw of that
    step), so resuming is exact without RNG state."""
    free = FREE

    def __init__(self, cfg: LaserTrainConfig, out: Path, model, batches, evaluators=()):
        super().__init__(out, LoopSettings(
            max_steps=cfg.max_steps, max_minutes=cfg.max_minutes, log_every=cfg.log_every,
            eval_every=cfg.eval_every, checkpoint_every=cfg.checkpoint_every, checkpoint_at_end=True,
            snapshot_every=cfg.snapshot_every, label="laser step"), evaluators)
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
        return recorded_defaults()

    def state_dict(self) -> dict:
        return {"model": self.model.state_dict(), "optimizer": self.opt.state_dict()}

    def load_state_dict(self, state: dict, changes: dict) -> None:
        self.model.load_state_dict(state["model"])
        self.opt.load_state_dict(state["optimizer"])

    def upgrade(self, state: dict) -> dict:
        return upgrade(state, self.out)

    def save_snapshot(self) -> None:
        export_encoder(self.model, self.out, f"encoder_step{self.step}.pt")

    def save_best(self) -> None:
        export_encoder(self.model, self.out, BEST)

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
        return loss_fn(xx, en, data.teacher[data.row[idx]]), {"tokens": int(lengths.sum())}
    return batch


def translation_setup(cfg: LaserTrainConfig, out: Path, l10n_root: Path, data_dir=None):
    """(encoder-decoder, its batches, pairs dropped over max_len, data log)."""
    sp, directions, dropped = build_directions(cfg, out, l10n_root, data_dir)
    torch.manual_seed(cfg.seed)
    model = LaserModel(cfg.model_config(sp.get_piece_size()))
    batches = translation_batches(directions, Schedule(directions, cfg.max_tokens, cfg.seed))
    return model, batches, dropped, {"data": summarize(directions)}


def distill_setup(cfg: LaserTrainConfig, out: Path, data_dir, teacher_encoder, teacher_cache, show_progress: bool):
    """(student, its batches, pairs dropped over max_len, data log, the teacher mean taken off
    the targets or None, teacher encoder)."""
    from xlingua.data.examples import LanguageSampler
    from xlingua.objectives.laser3 import Laser3Loss

    sp, data, dropped, teacher_encoder = build_distill(cfg, out, data_dir, teacher_encoder, teacher_cache,
                                                       show_progress)
    teacher_dim = int(data.teacher.shape[1])
    center = None
    if cfg.center_teacher:
        from xlingua.laser.distill import center_targets

        data.teacher, center = center_targets(data.teacher)
    torch.manual_seed(cfg.seed)
    # LASER3 keeps the teacher's size; a student of another width gets a linear projection to it
    model = LaserStudent(cfg.model_config(sp.get_piece_size(), 0 if 2 * cfg.hidden == teacher_dim else teacher_dim))
    if cfg.init:
        start_embedding(model.encoder.embed, static_init_dir(cfg.init))
        # frozen, the 200k-row embedding costs no gradient and no optimizer step
        model.encoder.embed.weight.requires_grad_(not cfg.freeze_embedding)
    skip_fit = start_skip(model.encoder, data) if cfg.mean_skip else None
    sampler = LanguageSampler(data.langs, [str(r) for r in data.row], cfg.temperature, cfg.seed)
    # distillation, plus translation ranking when ranking_weight > 0 (at 0 it is distillation alone)
    batches = distill_batches(data, sampler, Laser3Loss(cfg.metric, cfg.english_weight, cfg.ranking_weight),
                              cfg.batch_size)
    data_log = {"data": data.summary(), "language_shares": sampler.shares(),
                "teacher": {"spec": cfg.teacher, "dim": teacher_dim, "fingerprint": teacher_encoder.fingerprint(),
                            "centered": cfg.center_teacher}}
    if skip_fit is not None:
        data_log["mean_skip_fit_cosine"] = round(skip_fit, 4)
    return model, batches, dropped, data_log, center, teacher_encoder


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
        resume_changes(ckpt_path, state["config"], asdict(cfg), recorded_defaults(), FREE)
    t0 = time.time()
    if cfg.objective == "translation":
        model, batches, dropped, data_log = translation_setup(cfg, out, l10n_root, data_dir)
        center = None
    else:
        model, batches, dropped, data_log, center, teacher_encoder = distill_setup(
            cfg, out, data_dir, teacher_encoder, teacher_cache, show_progress)
    prep_seconds = time.time() - t0
    dev = None
    if cfg.objective == "distill" and cfg.dev_langs:
        from xlingua.laser.distill import StudentDev

        dev = StudentDev(cfg.teacher, cfg.dev_langs, teacher_encoder, teacher_cache,
                         center=None if center is None else center.numpy())
    run = LaserRun(cfg, out, model, batches, [CurrentStudent(dev, out)] if cfg.eval_every else [])
    model.train()
    run.run(resume=state is not None, show_progress=show_progress, state=state)
    log = {"train_config": asdict(cfg), **data_log, "dropped_over_max_len": dropped,
           "steps": run.step, "train_seconds": round(run.elapsed, 1), "prep_seconds": round(prep_seconds, 1),
           "encoder_params": sum(p.numel() for p in model.encoder.parameters()),
           "total_params": sum(p.numel() for p in model.parameters()),
           "encoder_bytes": (out / "encoder.pt").stat().st_size, "history": run.history()}
    if dev is not None:
        from xlingua.encoders.laser import LaserEncoder

        log["dev"] = dev.scores(LaserEncoder(str(out)))
    if cfg.eval_every:
        log["best"] = {"step": run.best_step, "accuracy": run.best, "encoder": BEST}
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
