"""A meaning run as a training config (`xlingua meaning train`, or `xlingua train` with
`recipe: meaning`): the data of train_from_corpus and the trainer's MeaningTrainConfig in one mapping."""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path

from xlingua.settings import recipe_settings, split_lists


@dataclass
class MeaningData:
    """What the MLPs train on and which dev signals are logged (train_from_corpus's arguments)."""
    base: str = "bundled"
    langs: list = field(default_factory=lambda: "de,zh,fi,hu,hi,ta,fr,es,it,pt,ru,ar".split(","))
    pairs: int = 1000
    extra: list = field(default_factory=list)
    general: list = field(default_factory=list)
    general_langs: list = field(default_factory=lambda: "de,zh,et,ne,ro,si,ru".split(","))
    general_pairs: int = 0
    dev: list = field(default_factory=lambda: ["qe-dev", "retrieval-dev", "sts-dev"])


def recipe_config(data: dict) -> tuple:
    """(MeaningData, MeaningTrainConfig, output directory) of a `recipe: meaning` training config:
    `output_dir` and the fields of both, at their defaults when not given."""
    from xlingua.meaning.trainer import MeaningTrainConfig  # torch: not at import, the command line reads defaults here

    out, data = recipe_settings("meaning", data, MeaningData, MeaningTrainConfig)
    fields = {cls: {f.name for f in dataclasses.fields(cls)} for cls in (MeaningData, MeaningTrainConfig)}
    data = split_lists(MeaningData, data)
    return (MeaningData(**{k: v for k, v in data.items() if k in fields[MeaningData]}),
            MeaningTrainConfig(**{k: v for k, v in data.items() if k in fields[MeaningTrainConfig]}), out)


def run_recipe(data: dict, show_progress: bool = True) -> dict:
    from xlingua.meaning.trainer import train_from_corpus

    d, config, out = recipe_config(data)
    return train_from_corpus(d.base, list(d.langs), d.pairs, out, config=config, extra=list(d.extra),
                             general=list(d.general), general_langs=list(d.general_langs),
                             general_pairs=d.general_pairs, dev=list(d.dev), show_progress=show_progress)


def summary(log: dict, out) -> str:
    return (f"best epoch {log['best_epoch']} of {log['epochs']} by {log['select_on']} ({log['best_score']:.4f}), "
            f"val loss {log['best_val_loss']:.4f}, {log['seconds']}s; wrote {Path(out) / 'model.pt'}")
