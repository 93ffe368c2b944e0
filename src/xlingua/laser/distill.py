"""Distillation data for a LASER student (LASER3: Heffernan, Celebi & Schwenk 2022, "Bitext
Mining Using Distilled Sentence Representations for Low-Resource Languages", section 3): pairs
(xx, English, lang) from the training corpora, the teacher's vector of each English side
(computed once, in the shared embedding cache), and the dev figures of a student.

The student reads both sides and is trained to put each where the teacher puts the English
sentence (objectives.distillation), so it needs no decoder and far fewer pairs than the
translation objective. Evaluation sets never enter: the general corpus was filtered against
them and its dev slice is held out by English sentence; stsb_multi_mt pairs holding an
evaluation sentence are dropped.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from xlingua.training.evaluators import Evaluator, dev_accuracy, general_dev_pairs


# The l10n languages of the own-model distillation recipe (configs/train_own_model.yaml), so
# that both read the same English sentences and share the teacher's cached vectors.
L10N_LANGS = ("am", "ar", "bg", "cs", "de", "el", "es", "fi", "fr", "he", "hi", "hu", "id", "it", "ja", "ka",
              "ko", "nl", "pl", "pt", "ru", "sw", "ta", "te", "th", "tr", "uk", "vi", "zh")
MULTI30K_LANGS = ("de", "fr", "cs")
STSB_LANGS = ("de", "es", "fr", "it", "ja", "nl", "pl", "pt", "ru", "zh")


def stsb_parallel(langs, data_dir=None) -> list[tuple[str, str, str]]:
    """stsb_multi_mt *train*: row i of stsb-xx-train is the translation of row i of stsb-en-train,
    so each row gives (xx s1, en s1) and (xx s2, en s2). Pairs holding an evaluation sentence
    (STS 2017, STS2017-extended, QE test20) are dropped."""
    from xlingua.data.benchmarks import evaluation_sentences, read_stsb_multi_mt

    en = read_stsb_multi_mt("en", "train", data_dir)
    held = evaluation_sentences(data_dir)
    out = []
    for lang in langs:
        xx = read_stsb_multi_mt(lang, "train", data_dir)
        if len(xx) != len(en):
            raise ValueError(f"stsb_multi_mt train: {lang} has {len(xx)} rows, en {len(en)}: not aligned")
        for a, b in ((xx.s1, en.s1), (xx.s2, en.s2)):
            out.extend((x, e, lang) for x, e in zip(a, b)
                       if x.strip().lower() not in held and e.strip().lower() not in held)
    return out


def read_distill_pairs(general: bool, general_langs, l10n_langs, l10n_pairs: int, multi30k: bool,
                       stsb_langs, exclude_langs=(), data_dir=None) -> list[tuple[str, str, str]]:
    """(xx, English, lang) from the general corpus train split, l10n train (first `l10n_pairs`
    of each file), Multi30k train (de/fr/cs captions with their English) and stsb_multi_mt train;
    languages in `exclude_langs` are left out (to measure unseen languages)."""
    from xlingua.data.examples import load_examples

    specs = []
    if general:
        specs.append({"type": "general", "langs": list(general_langs) or None})
    if l10n_langs:
        specs.append({"type": "l10n", "split": "train", "langs": list(l10n_langs), "limit": l10n_pairs or None})
    pairs = load_examples(specs) if specs else []
    if multi30k:
        from xlingua.data.benchmarks import read_multi30k_aligned

        m30 = read_multi30k_aligned(["en", *MULTI30K_LANGS], "train", data_dir)
        pairs += [(x, e, lang) for lang in MULTI30K_LANGS for x, e in zip(m30[lang], m30["en"])]
    if stsb_langs:
        pairs += stsb_parallel(stsb_langs, data_dir)
    pairs = [p for p in pairs if p[2] not in set(exclude_langs)]
    if not pairs:
        raise ValueError("no distillation pairs: choose at least one corpus and language")
    return pairs


@dataclass
class DistillSet:
    """Token ids of both sides, the language of each pair, and the teacher's unit vectors
    (`teacher[row[i]]` is the target of pair i)."""
    xx: list[list[int]]
    en: list[list[int]]
    langs: list[str]
    row: np.ndarray
    teacher: torch.Tensor

    def summary(self) -> dict:
        counts: dict[str, int] = {}
        for lang in self.langs:
            counts[lang] = counts.get(lang, 0) + 1
        return {"pairs": len(self.xx), "english_sentences": int(self.teacher.shape[0]),
                "languages": len(counts), "pairs_per_language": dict(sorted(counts.items()))}


def encode_pairs(sp, pairs, max_len: int, truncate: bool = False, chunk: int = 65536) -> tuple[list[tuple], int]:
    """(xx ids, English ids, English text, lang) of each pair; a side over max_len pieces is cut
    to its first max_len with `truncate`, else the pair is dropped; pairs with an empty side are
    dropped. Returns the pairs and the number dropped. Ids are int32 arrays, each English sentence
    tokenized once and its array shared by all its pairs (NTREX's English has 128 translations):
    a million pairs then take a fraction of the memory of lists of ints."""
    def encode(texts):
        for i in range(0, len(texts), chunk):
            yield from (np.asarray(ids, dtype=np.int32) for ids in sp.encode(texts[i:i + chunk]))

    def fit(ids):  # a side within max_len, or None: the pair is dropped
        if len(ids) > max_len:
            return ids[:max_len] if truncate else None
        return ids if len(ids) else None

    english = sorted({p[1] for p in pairs})
    en_ids = {e: fit(ids) for e, ids in zip(english, encode(english))}
    keep = []
    for a, p in zip(encode([p[0] for p in pairs]), pairs):
        a, e = fit(a), en_ids[p[1]]
        if a is not None and e is not None:
            keep.append((a, e, p[1], p[2]))
    return keep, len(pairs) - len(keep)


def build_set(kept, teacher: str, teacher_encoder=None, cache_dir=None, show_progress: bool = True) -> DistillSet:
    """Attach the teacher's vectors of every distinct English side (cache hits when the same
    teacher has embedded them before, e.g. for the own-model distillation)."""
    from xlingua.encoders.teacher import teacher_vectors

    english = sorted({k[2] for k in kept})
    vecs = teacher_vectors(teacher, english, cache_dir, show_progress=show_progress, encoder=teacher_encoder)
    index = {t: i for i, t in enumerate(english)}
    return DistillSet([k[0] for k in kept], [k[1] for k in kept], [k[3] for k in kept],
                      np.array([index[k[2]] for k in kept]), torch.from_numpy(vecs))


def center_targets(teacher: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(unit rows of teacher - mean, mean). A transformer teacher's unit vectors crowd into a
    narrow cone (unrelated sentences at cosine ~0.8 for e5), so 2 - 2 cos is small as soon as the
    student finds the cone; centred targets spread the sentences apart and keep the loss on what
    tells them apart (the post-processing of Su et al. 2021, "Whitening Sentence Representations",
    without the rotation). Cosine retrieval among student vectors does not need the mean back."""
    mean = teacher.mean(0)
    return torch.nn.functional.normalize(teacher - mean, dim=1), mean


def pad_both(xx: list[list[int]], en: list[list[int]]):
    """Both sides in one padded batch (one LSTM call per step): rows [0, n) are xx, [n, 2n)
    English; an empty side becomes a lone EOS (as in pad_batch)."""
    from xlingua.encoders.laser_model import pad_batch

    return pad_batch(list(xx) + list(en))


class StudentDev(Evaluator):
    """A student on the general corpus dev slice (English sentences held out of training): per
    language, xx<->en retrieval accuracy x100 (training.evaluators' dev accuracy: cosine, mean of
    both directions) and the mean cosine of student(xx) to teacher(en) (to the centred teacher
    when the student learnt centred targets). Main score: the accuracy averaged over languages."""
    main_score = "accuracy"

    def __init__(self, teacher: str, langs, teacher_encoder=None, cache_dir=None, root=None,
                 center: np.ndarray | None = None):
        from xlingua.encoders.teacher import teacher_vectors
        from xlingua.similarity import normalize_rows

        self.sets = general_dev_pairs(list(langs), root)
        if not self.sets:
            raise ValueError(f"no general dev pairs for {list(langs)}")
        self.targets = {}
        for lang, (_, english) in self.sets.items():
            t = teacher_vectors(teacher, english, cache_dir, show_progress=False, encoder=teacher_encoder)
            self.targets[lang] = t if center is None else normalize_rows(t - center)

    def scores(self, encoder) -> dict:
        """{"languages": {lang: {"n", "accuracy", "teacher_cosine"}}, "accuracy", "teacher_cosine"}."""
        from xlingua.similarity import paired_cosine

        rows = {}
        for lang, (xs, english) in self.sets.items():
            x, y = encoder.encode(xs), encoder.encode(english)
            rows[lang] = {"n": len(xs), "accuracy": dev_accuracy(x, y),
                          "teacher_cosine": float(paired_cosine(x, self.targets[lang]).mean())}
        return {"languages": rows,
                "accuracy": float(np.mean([r["accuracy"] for r in rows.values()])),
                "teacher_cosine": float(np.mean([r["teacher_cosine"] for r in rows.values()]))}

    def __call__(self, model) -> dict[str, float]:
        found = self.scores(model)
        return {"accuracy": found["accuracy"], "teacher_cosine": found["teacher_cosine"],
                **{f"{k} {lang}": r[k] for lang, r in found["languages"].items() for k in ("accuracy", "teacher_cosine")}}


def dev_scores(encoder, teacher: str, langs, teacher_encoder=None, cache_dir=None, root=None,
               center: np.ndarray | None = None) -> dict:
    """StudentDev's report of `encoder`."""
    return StudentDev(teacher, langs, teacher_encoder, cache_dir, root, center).scores(encoder)
