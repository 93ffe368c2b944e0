"""Training configuration: dataclasses read from a YAML recipe (`xlingua train CONFIG.yaml`).

Unknown keys are errors (naming the file and the key), so a typo never silently falls back to
a default. Paths in the file may be relative to the file.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from xlingua.data.text import read_whole

PRECISIONS = ("fp32", "bf16")
#: `precision: auto` is read as bf16 on a CPU with native bf16, else fp32 (what runs faster there)
AUTO = "auto"
SCHEDULES = ("constant", "linear", "cosine")
SAMPLINGS = ("cycle", "proportional", "weighted")
#: the name of the dev mining metric (mean F1 over `mining_langs`)
MINING = "mining"
#: the mean of the low-resource dev slices scored whole (Bible pairs included)
LOWRES_ALL = "lowres all"
#: the suffix of a set scored without its harakat (EvalConfig.strip_harakat)
STRIPPED = "stripped"


@dataclass
class TaskConfig:
    """One task: an objective on one dataset. `data` holds the reader spec (see data.examples)
    and `options` the objective's settings (e.g. scale, margin, hard_negatives). With
    `temperature` > 0 batches are drawn by temperature sampling over the examples' languages
    (data.examples.LanguageSampler), each batch from one language with `one_language`, else in
    seeded epochs."""

    name: str
    objective: str
    data: dict | list
    weight: float = 1.0
    options: dict = field(default_factory=dict)
    temperature: float = 0.0
    one_language: bool = False


@dataclass
class EvalConfig:
    """Dev evaluation: retrieval accuracy on l10n dev pairs, a Tatoeba subset, the general
    corpus's dev slices, users' own pair files (data.general.read_own_pairs) and/or the
    low-resource corpus's dev slices (data.lowres); QE Pearson; mining F1 among distractors.
    `select` names the metric that picks the best checkpoint, one of `metric_names()`: "mean" =
    mean of the retrieval sets, "l10n" / "tatoeba" / "general" / "pairs" / "lowres" = mean of
    that kind's sets, "qe" = mean QE Pearson, "mining" = mean mining F1, or one set's figure
    ("general_de", "qe_en-de", "mining de").

    A low-resource set `lowres_xx` is scored on the slice's non-Bible pairs alone where it has
    at least two (verses share names and numbers that find the translation, news does not), on
    the whole slice otherwise; `lowres_xx all` and their mean `lowres all` are the whole slices,
    logged beside them."""

    l10n_langs: list = field(default_factory=list)
    tatoeba_langs: list = field(default_factory=list)
    general_langs: list = field(default_factory=list)  # languages of the general corpus's dev slice
    pair_files: dict = field(default_factory=dict)     # {lang: FILE}: the dev slice of a user's own pairs
    # languages of the low-resource corpus's dev slice, each read whole (at most 500 pairs by its rule)
    lowres_langs: list = field(default_factory=list)
    qe_pairs: list = field(default_factory=list)       # WMT20 QE pairs whose dev split is scored (Pearson of cosine)
    # general-corpus dev languages whose dev pairs are mined among distractors from the train split
    # (data.general.general_mining_set): harder than retrieval, which saturates
    mining_langs: list = field(default_factory=list)
    mining_distractors: int = 4000                    # sentences of the language; 1.5x as many English ones
    limit: int = 500                                   # dev pairs per set (mining sets: before the distractors)
    # dev pairs per l10n set, None = limit; 1000 (all of them) gives `xlingua eval retrieval:l10n`'s
    # figure: top-1 among the other 999, which ranks students as Tatoeba does (docs/xlingua-mini.md)
    l10n_limit: int | None = None
    select: str = "mean"
    # a frozen model (an encoder spec) that embeds the English or pivot side of every retrieval set,
    # once, instead of the model in training: for a student routed beside its teacher by language
    # (`xlingua extend --routed`), which only ever embeds the new languages' side
    pivot_model: str | None = None
    # also score each Arabic-script set with its sentences' harakat stripped ("general_knc-Arab
    # stripped"), counted in the means: a run that trains on stripped copies chooses its step on both readings
    strip_harakat: bool = False

    def _kinds(self) -> dict[str, list]:
        """{kind of retrieval set: its languages}, in the order the evaluator builds them."""
        return {"l10n": self.l10n_langs, "tatoeba": self.tatoeba_langs, "general": self.general_langs,
                "pairs": list(self.pair_files), "lowres": self.lowres_langs}

    def groups(self) -> list[str]:
        """The kinds of retrieval set this block has, each giving the mean of its sets."""
        return [kind for kind, langs in self._kinds().items() if langs]

    def metric_names(self) -> list[str]:
        """The dev metrics this block gives, as the evaluators name them (training.evaluate)."""
        sets = [f"{kind}_{l}" for kind, langs in self._kinds().items() for l in langs]
        if self.strip_harakat:
            from xlingua.data.scripts import lang_script

            sets += [f"{kind}_{l} {STRIPPED}" for kind, langs in self._kinds().items() if kind != "lowres"
                     for l in langs if lang_script(l) == "Arab"]
        names = sets + (["mean", *self.groups()] if sets else [])
        if self.lowres_langs:
            names += [LOWRES_ALL] + [f"lowres_{l} all" for l in self.lowres_langs]
        if self.qe_pairs:
            names += ["qe"] + [f"qe_{p}" for p in self.qe_pairs]
        if self.mining_langs:
            names += [MINING] + [f"{MINING} {l}" for l in self.mining_langs]
        return names

    def check(self, where: str = "config") -> "EvalConfig":
        """`select` must name one of the metrics this block gives (when it gives any)."""
        names = self.metric_names()
        if names and self.select not in names:
            raise ValueError(f"{where}: eval: select {self.select!r} is not a dev metric of this eval block; "
                             f"choose one of {names}")
        if self.l10n_limit is not None and (type(self.l10n_limit) is not int or self.l10n_limit < 2):
            raise ValueError(f"{where}: eval: l10n_limit must be a whole number of pairs from 2, or left out "
                             f"for limit (got {self.l10n_limit!r})")
        if self.mining_distractors < 0:
            raise ValueError(f"{where}: eval: mining_distractors cannot be negative (got {self.mining_distractors})")
        return self


@dataclass
class TrainConfig:
    model: str
    output_dir: str
    tasks: list
    seed: int = 0
    max_steps: int = 1000
    batch_size: int = 16           # per process; the global batch is batch_size * world size
    grad_accum: int = 1
    max_seq_length: int = 64       # longer inputs are truncated (a training setting, logged)
    lr: float = 2e-5
    weight_decay: float = 0.01
    warmup_steps: int = 100
    schedule: str = "linear"
    max_grad_norm: float = 1.0
    freeze: list = field(default_factory=list)  # parameter-name substrings, e.g. word_embeddings
    # {parameter-name substring: N}: the first N rows stay as they are, e.g. the word embeddings
    # of a tokenizer's original pieces while pieces added after them train
    freeze_rows: dict = field(default_factory=dict)
    # peak learning rate of the rows freeze_rows leaves to train (0 = lr): rows that start as
    # averages of other pieces have further to move than pretrained weights
    rows_lr: float = 0.0
    # the backbone's dropout rate while training (None: the model's own, 0.1 for e5); 0 also lets
    # bf16 training take the faster attention (training.model)
    dropout: float | None = None
    precision: str = "fp32"        # bf16: forward and backward under bfloat16 autocast; auto: see AUTO
    # indices of the start model's transformer layers to keep (a student of fewer layers):
    # they become layers 0..k-1 in this order; None keeps every layer
    layers: list | None = None
    # feed-forward units each layer keeps (a narrower student: SentenceModel.narrow_feed_forward);
    # None keeps them all
    intermediate_size: int | None = None
    sampling: str = "cycle"        # cycle | proportional (weight x size) | weighted (weight alone)
    max_minutes: float = 0.0       # training time summed over resumes (0 = none)
    log_every: int = 10
    eval_every: int = 0
    checkpoint_every: int = 0
    early_stopping_patience: int = 0  # evaluations without improvement; 0 = never stop early
    eval: EvalConfig = field(default_factory=EvalConfig)

    def validate(self, where: str = "config") -> "TrainConfig":
        if not self.tasks:
            raise ValueError(f"{where}: at least one task is needed under `tasks`")
        from xlingua.objectives import objective_names

        for t in self.tasks:
            if t.objective not in objective_names():
                raise ValueError(f"{where}: task {t.name!r} has unknown objective {t.objective!r}; "
                                 f"choose one of {objective_names()}")
        names = [t.name for t in self.tasks]
        if len(set(names)) != len(names):
            raise ValueError(f"{where}: task names must be unique, got {names}")
        if self.schedule not in SCHEDULES:
            raise ValueError(f"{where}: schedule must be one of {SCHEDULES}, got {self.schedule!r}")
        if self.precision not in PRECISIONS:
            raise ValueError(f"{where}: precision must be one of {(*PRECISIONS, AUTO)}, got {self.precision!r}")
        if self.sampling not in SAMPLINGS:
            raise ValueError(f"{where}: sampling must be one of {SAMPLINGS}, got {self.sampling!r}")
        if self.dropout is not None and not 0.0 <= self.dropout < 1.0:
            raise ValueError(f"{where}: dropout is a rate in [0, 1), got {self.dropout!r}")
        if self.rows_lr < 0 or (self.rows_lr and not self.freeze_rows):
            raise ValueError(f"{where}: rows_lr is the rate of the rows freeze_rows leaves to train: "
                             f"it needs freeze_rows and cannot be negative (got {self.rows_lr})")
        for key in ("max_steps", "batch_size", "grad_accum", "max_seq_length"):
            if getattr(self, key) < 1:
                raise ValueError(f"{where}: {key} must be at least 1")
        if self.layers is not None:
            check_layers(self.layers, where)
        size = self.intermediate_size
        if size is not None and (type(size) is not int or size < 1):
            raise ValueError(f"{where}: intermediate_size must be a whole number of feed-forward units "
                             f"from 1, got {size!r}")
        if self.eval_every:  # select picks a step only where there are evaluations
            self.eval.check(where)
        return self

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)


def check_layers(layers, where: str = "config", count: int | None = None) -> list[int]:
    """`layers` as a list of layer indices, or ValueError on one line naming the key: a list of
    distinct indices in increasing order, each below `count` (the start model's layers) when given."""
    if not isinstance(layers, list) or not layers:
        raise ValueError(f"{where}: layers must be a non-empty list of layer indices of the start model, "
                         f"e.g. [0, 4, 8, 11]; got {layers!r}")
    if any(type(i) is not int or i < 0 for i in layers):
        raise ValueError(f"{where}: layers must hold layer indices (whole numbers from 0), got {layers}")
    repeated = sorted({i for i in layers if layers.count(i) > 1})
    if repeated:
        raise ValueError(f"{where}: layers lists layer {repeated[0]} more than once ({layers}); "
                         "each kept layer appears once")
    if layers != sorted(layers):
        raise ValueError(f"{where}: layers must be in increasing order, got {layers} "
                         f"(the kept layers run in the start model's order: {sorted(layers)})")
    if count is not None and layers[-1] >= count:
        raise ValueError(f"{where}: layers: index {layers[-1]} is out of range; the start model has "
                         f"{count} layers (0..{count - 1})")
    return layers


def _build(cls, data: dict, where: str):
    if not isinstance(data, dict):
        raise ValueError(f"{where}: expected a mapping, got {type(data).__name__}")
    known = {f.name for f in dataclasses.fields(cls)}
    unknown = sorted(set(data) - known)
    if unknown:
        raise ValueError(f"{where}: unknown key(s) {unknown}; known keys: {sorted(known)}")
    try:
        return cls(**data)
    except TypeError as e:
        raise ValueError(f"{where}: {e}") from None


def config_from_dict(data: dict, where: str = "config") -> TrainConfig:
    data = dict(data)
    tasks = data.get("tasks") or []
    data["tasks"] = [_build(TaskConfig, t, f"{where}: tasks[{i}]") for i, t in enumerate(tasks)]
    if "eval" in data:
        data["eval"] = _build(EvalConfig, data["eval"] or {}, f"{where}: eval")
    for key in ("lr", "weight_decay", "max_grad_norm"):
        if isinstance(data.get(key), str):
            data[key] = float(data[key])  # YAML reads 2e-5 as a string
    if data.get("precision") == AUTO:  # recorded as chosen, so a resume elsewhere says it differs
        from xlingua.encoders.cpu import native_bf16

        data["precision"] = "bf16" if native_bf16() else "fp32"
    return _build(TrainConfig, data, where).validate(where)


def read_yaml(path: str | Path) -> dict:
    """The mapping of a training config file (any recipe)."""
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"training config not found: {path}")
    try:
        data = yaml.safe_load(read_whole(path))
    except yaml.YAMLError as e:
        raise ValueError(f"{path}: not valid YAML: {e}") from None
    if data is not None and not isinstance(data, dict):
        raise ValueError(f"{path}: expected a mapping, got {type(data).__name__}")
    return data or {}


def set_values(items: list[str]) -> dict:
    """['lr=1e-4', 'langs=[de, fr]'] -> {name: value}, each value read as YAML."""
    out = {}
    for item in items:
        name, eq, value = item.partition("=")
        if not eq or not name.strip():
            raise ValueError(f"--set {item!r} is not KEY=VALUE")
        out[name.strip()] = yaml.safe_load(value)
    return out


def load_config(path: str | Path, overrides: dict | None = None) -> TrainConfig:
    data = {k: v for k, v in read_yaml(path).items() if k != "recipe"}
    return config_from_dict({**data, **(overrides or {})}, where=str(path))

