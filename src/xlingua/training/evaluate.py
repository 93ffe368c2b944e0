"""Dev evaluation of `xlingua train`: bitext retrieval accuracy (training.evaluators) on l10n dev
pairs, a Tatoeba subset, the general corpus's dev slices, users' own pair files or the
low-resource corpus's dev slices, with cosine or margin scoring; and mining F1 on the general corpus's dev slices hidden among distractors. Small
and fast, so it can run every few hundred steps; the full benchmarks are `xlingua eval`'s job."""
from __future__ import annotations

import numpy as np

from xlingua.data.benchmarks import read_tatoeba
from xlingua.data.examples import l10n_path, read_pairs
from xlingua.training.config import LOWRES_ALL, MINING, STRIPPED, EvalConfig
from xlingua.training.evaluators import (Evaluator, MiningEvaluator, QEEvaluator, RetrievalEvaluator, dev_accuracy,
                                         general_dev_pairs, lowres_dev_pairs)

__all__ = ["DevEvaluator", "DevMiningEvaluator", "dev_accuracy", "dev_evaluators", "tatoeba_pairs"]


def tatoeba_pairs(lang: str, limit: int | None = None) -> list[tuple[str, str]]:
    """Tatoeba test pairs (xxx, eng) for a 3-letter LASER code, e.g. deu."""
    return list(zip(*read_tatoeba(lang)))[:limit]


def _sides(pairs) -> tuple[list[str], list[str]]:
    return [p[0] for p in pairs], [p[1] for p in pairs]


def _stripped(sets: dict[str, tuple[list[str], list[str]]]) -> dict[str, tuple[list[str], list[str]]]:
    """"NAME stripped": each Arabic-script set whose sentences lose a mark, with those read
    without their harakat (data.arabic), beside the same English or pivot side."""
    from xlingua.data.arabic import is_arabic_script, strip_harakat

    out = {}
    for name, (xs, ys) in sets.items():
        lang = name.partition("_")[2]
        stripped = [strip_harakat(x) for x in xs]
        if stripped != xs and is_arabic_script(lang, " ".join(xs[:20])):
            out[f"{name} {STRIPPED}"] = (stripped, ys)
    return out


class DevEvaluator(RetrievalEvaluator):
    """Metrics per set ("l10n_de", "tatoeba_deu", "general_de", "pairs_xx", "lowres_ee"), their
    "mean" and the mean of each kind ("l10n", "tatoeba", "general", "pairs", "lowres");
    `config.select` names the one that picks the best step. A low-resource slice is embedded
    once and scored twice: among its non-Bible pairs (its set's figure, where it has two) and
    whole ("lowres_ee all", their mean "lowres all"; EvalConfig). The model is the model in
    training or any Encoder (anything whose `encode` returns rows as an array or a CPU tensor)."""

    def __init__(self, config: EvalConfig, margin: str | None = None):
        self.config = config
        sets = {}
        for lang in config.l10n_langs:
            sets[f"l10n_{lang}"] = _sides(read_pairs(l10n_path(lang, "dev"), config.l10n_limit or config.limit))
        for lang in config.tatoeba_langs:
            sets[f"tatoeba_{lang}"] = _sides(tatoeba_pairs(lang, config.limit))
        if config.general_langs:
            dev = general_dev_pairs(config.general_langs, limit=config.limit)
            sets.update({f"general_{lang}": dev[lang] for lang in config.general_langs})
        for lang, path in config.pair_files.items():
            from xlingua.data.general import read_own_pairs

            sets[f"pairs_{lang}"] = _sides([(p.text, p.english) for p in read_own_pairs(path, lang, "dev")][: config.limit])
        if config.strip_harakat:
            sets.update(_stripped(sets))
        self.lowres = lowres_dev_pairs(config.lowres_langs) if config.lowres_langs else {}
        empty = [name for name, (a, _) in sets.items() if len(a) < 2]
        empty += [f"lowres_{lang}" for lang in config.lowres_langs if len(self.lowres.get(lang, ((),))[0]) < 2]
        if empty:  # caught before training starts, not at the first evaluation
            raise ValueError(f"dev set(s) {empty} have fewer than 2 pairs: choose other eval languages")
        super().__init__(sets, margin=margin, main_score=config.select)
        self.pivots = None  # {set name: the pivot side's vectors} when a frozen model embeds that side
        if config.pivot_model:
            from xlingua.encoders.loading import load_encoder

            fixed = load_encoder(config.pivot_model)
            pivots = {**{k: b for k, (_, b) in sets.items()}, **{f"lowres_{l}": ys for l, (_, ys, _) in self.lowres.items()}}
            self.pivots = {k: self.embed(fixed, ys) for k, ys in pivots.items()}

    def __bool__(self) -> bool:
        return bool(self.sets or self.lowres)

    def accuracies(self, model) -> dict[str, float]:
        if self.pivots is None:
            return super().accuracies(model)
        return {k: dev_accuracy(self.embed(model, a), self.pivots[k], self.margin) for k, (a, _) in self.sets.items()}

    def __call__(self, model) -> dict[str, float]:
        found = self.accuracies(model)
        whole = {}
        for lang, (xs, ys, rows) in self.lowres.items():
            x = self.embed(model, xs)
            y = self.embed(model, ys) if self.pivots is None else self.pivots[f"lowres_{lang}"]
            whole[f"lowres_{lang} all"] = dev_accuracy(x, y, self.margin)
            # the non-Bible pairs alone where Bible pairs are beside them: verses' names and numbers find
            # their translation, which flatters the whole slice's figure
            found[f"lowres_{lang}"] = (dev_accuracy(x[rows], y[rows], self.margin) if 2 <= len(rows) < len(xs)
                                       else whole[f"lowres_{lang} all"])
        sets = list(found.values())
        found["mean"] = float(np.mean(sets))
        for kind in self.config.groups():
            found[kind] = float(np.mean([v for k, v in found.items() if k.startswith(kind + "_")]))
        if whole:
            found[LOWRES_ALL] = float(np.mean(list(whole.values())))
            found.update(whole)
        return found


class DevMiningEvaluator(MiningEvaluator):
    """Mining F1 per language of `config.mining_langs` ("mining de") and their mean ("mining"):
    each language's dev pairs (the first `config.limit`) among `config.mining_distractors`
    training sentences (data.general.general_mining_set). Built once: the sets do not change."""

    def __init__(self, config: EvalConfig, root=None):
        from xlingua.data.general import general_mining_set

        sets = {lang: general_mining_set(lang, config.mining_distractors, root=root, limit=config.limit)
                for lang in config.mining_langs}
        small = [lang for lang, (_, _, gold) in sets.items() if len(gold) < 2]
        if small:  # caught before training starts, not at the first evaluation
            raise ValueError(f"dev mining set(s) {small} have fewer than 2 dev pairs: choose other mining languages")
        super().__init__(sets, name=MINING)


def dev_evaluators(config: EvalConfig) -> list[Evaluator]:
    """The evaluators an eval block asks for (retrieval, QE, mining), each built once; the trainer
    merges their metrics into one dict, named as `config.metric_names()` names them."""
    return [e for e in (DevEvaluator(config), QEEvaluator(config.qe_pairs), DevMiningEvaluator(config)) if e]
