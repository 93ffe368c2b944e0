"""The settings of a LASER run (`xlingua laser train`, or `xlingua train` with `recipe: laser`)."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from xlingua.encoders.laser_model import LaserConfig
from xlingua.settings import recipe_settings, split_lists

OBJECTIVES = ("translation", "distill")
# settings a checkpoint may not record, with the value such a checkpoint ran with where that is
# not today's default (truncate: it dropped long sides instead): resuming keeps its data as it was
BEFORE = {"truncate": False}


@dataclass
class LaserTrainConfig:
    objective: str = "translation"
    langs: list[str] = field(default_factory=lambda: ["de", "nl", "fr", "es", "it", "pt", "ru", "cs", "pl"])
    second_target: str = "fr"  # the paper's second target language was Spanish
    l10n_pairs: int = 15000  # per language (sampled); 0 = all
    multi30k: bool = True
    multi30k_pairs: int = 0  # 0 = all 29,000
    vocab_size: int = 8000
    max_len: int = 64  # pieces; distill truncates longer sides (`truncate`), translation drops such pairs (counted in the log)
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
    # distill only (`langs` are then the l10n languages, `l10n_pairs` the first N of each file)
    teacher: str = "e5-small"  # the own-model recipe's teacher too: one cache of English vectors
    metric: str = "mse"  # objectives.distillation: mse (2 - 2 cos) or cosine (1 - cos)
    english_weight: float = 1.0  # weight of student(en) -> teacher(en) beside student(xx) -> teacher(en)
    center_teacher: bool = False  # targets: teacher vectors minus their mean over the training English, renormalized
    batch_size: int = 128  # pairs per step (both sides: 2 x batch_size sentences)
    temperature: float = 3.3  # language sampling p ~ n^(1/T), as the own-model recipe
    general: bool = True
    general_langs: list[str] = field(default_factory=list)  # empty = all 158
    stsb_langs: list[str] = field(default_factory=list)
    exclude_langs: list[str] = field(default_factory=list)
    dev_langs: list[str] = field(default_factory=list)  # general dev slice scored at the end (empty = none)
    eval_every: int = 0  # distill: also score dev_langs every N steps, the best student kept as encoder_best.pt
    truncate: bool = True  # distill: a side over max_len pieces is cut to its first max_len, not dropped
    init: str = ""  # distill: "static:DIR" or "static-small" reads a static encoder's pieces and starts the embedding from its vectors
    freeze_embedding: bool = False  # with init: the static vectors stay as they are; only the BiLSTM learns
    mean_skip: bool = False  # distill: add a linear map of the mean input vector, fitted to the targets at the start
    ranking_weight: float = 0.0  # distill: + this x translation ranking on the batch's pairs (objectives.laser3)

    @classmethod
    def distill(cls, **overrides) -> "LaserTrainConfig":
        """Distillation defaults: the own-model recipe's l10n languages (first 1500 pairs each, so
        the teacher's cached English vectors are shared), stsb_multi_mt, the general dev languages."""
        from xlingua.data.general import DEV_LANGS
        from xlingua.laser.distill import L10N_LANGS, STSB_LANGS

        base = dict(objective="distill", langs=list(L10N_LANGS), l10n_pairs=1500, stsb_langs=list(STSB_LANGS),
                    dev_langs=list(DEV_LANGS))
        return cls(**{**base, **overrides})

    def __post_init__(self):
        if self.objective not in OBJECTIVES:
            raise ValueError(f"objective must be one of {', '.join(OBJECTIVES)}, got {self.objective!r}")
        # checked here, before minutes of data preparation, not at the first step
        if self.metric not in ("mse", "cosine"):
            raise ValueError(f"metric must be mse or cosine, got {self.metric!r}")
        from xlingua.encoders.static import PACKAGED

        if self.init and not self.init.startswith("static:") and self.init not in PACKAGED:
            raise ValueError(f"init must be empty (random), static:DIR or one of {', '.join(PACKAGED)}, "
                             f"got {self.init!r}")
        if self.init and self.objective != "distill":
            raise ValueError("init (a static encoder's pieces) is for the distill objective")
        if self.freeze_embedding and not self.init:
            raise ValueError("freeze_embedding keeps a static encoder's vectors: it needs init")
        if self.ranking_weight and self.objective != "distill":
            raise ValueError("ranking_weight adds translation ranking to distillation: it is for the distill objective")
        if self.mean_skip and self.objective != "distill":
            raise ValueError("mean_skip is fitted to a teacher's vectors: it is for the distill objective")
        if self.eval_every and (self.objective != "distill" or not self.dev_langs):
            raise ValueError("eval_every scores a distilled student on dev_langs: give objective distill and dev_langs")
        if self.temperature <= 0 or self.batch_size < 1:
            raise ValueError(f"temperature must be positive and batch_size at least 1, got {self.temperature}, "
                             f"{self.batch_size}")

    def model_config(self, vocab_size: int, proj_dim: int = 0) -> LaserConfig:
        return LaserConfig(vocab_size=vocab_size, target_langs=["en", self.second_target], embed_dim=self.embed_dim,
                           hidden=self.hidden, layers=self.layers, dec_hidden=self.dec_hidden,
                           lang_dim=self.lang_dim, dropout=self.dropout, proj_dim=proj_dim,
                           mean_skip=self.mean_skip)


def recipe_config(data: dict) -> tuple[LaserTrainConfig, Path, bool]:
    """(settings, output directory, resume) of a `recipe: laser` training config: `output_dir`,
    `resume` (default true: a rerun goes on from the checkpoint) and LaserTrainConfig's fields,
    at the distill defaults (LaserTrainConfig.distill) when `objective: distill`."""
    out, data = recipe_settings("laser", data, LaserTrainConfig, extra=("resume",))
    resume = bool(data.pop("resume", True))
    make = LaserTrainConfig.distill if data.get("objective") == "distill" else LaserTrainConfig
    return make(**split_lists(LaserTrainConfig, data)), out, resume


def parse_settings(items: list[str]) -> dict:
    """['embed_dim=128', 'exclude_langs=af,eu'] -> typed LaserTrainConfig overrides."""
    from xlingua.settings import parse_settings as parse

    return parse(LaserTrainConfig, items)
