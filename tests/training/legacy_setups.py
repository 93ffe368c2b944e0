"""The inputs behind the checkpoints in tests/training/legacy/, written by the training loops xlingua
had before the one training loop: a tiny encoder run killed after step 3 of 6 (checkpoint_every 3),
a LASER translation run of 3 steps and a meaning run of 2 epochs (commit ee52ce6), and a static
encoder run killed after step 5 of 8 (commit 614213f), each with the final weights of the same run
left unbroken. Everything here is deterministic, so a test can rebuild the data and the start
model and resume the checkpoint."""
from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np

WORDS = {"en": ["one", "two", "three", "red", "blue", "cat", "dog", "house"],
         "de": ["eins", "zwei", "drei", "rot", "blau", "Katze", "Hund", "Haus"],
         "fr": ["un", "deux", "trois", "rouge", "bleu", "chat", "chien", "maison"]}


def toy_pairs(lang: str, n: int, seed: int) -> list[tuple[str, str]]:
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        idx = rng.integers(0, 8, rng.integers(1, 5))
        out.append((" ".join(WORDS[lang][i] for i in idx), " ".join(WORDS["en"][i] for i in idx)))
    return out


def write_encoder_inputs(root: Path) -> None:
    """tiny_model/ (a word-level BERT, hidden 8) and pairs.tsv, relative paths as the config names them."""
    from tests.tiny_models import tiny_bert

    model, tok = tiny_bert([w for words in WORDS.values() for w in words], max_length=16, hidden=8)
    model.save_pretrained(root / "tiny_model")
    tok.save_pretrained(root / "tiny_model")
    (root / "pairs.tsv").write_text("".join(f"{x}\t{e}\n" for x, e in toy_pairs("de", 24, 0)), encoding="utf-8")


def encoder_config(output_dir: str) -> dict:
    return {"model": "tiny_model", "output_dir": output_dir, "max_steps": 6, "checkpoint_every": 3,
            "batch_size": 4, "max_seq_length": 16, "lr": 1e-3, "warmup_steps": 1, "log_every": 1, "seed": 3,
            "tasks": [{"name": "tr", "objective": "translation_ranking", "data": {"type": "tsv", "path": "pairs.tsv"}}]}


def write_laser_corpus(root: Path) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    for seed, lang in enumerate(("de", "fr")):
        with gzip.open(root / f"{lang}-en.train.tsv.gz", "wt", encoding="utf-8") as f:
            f.write("".join(f"{x}\t{e}\n" for x, e in toy_pairs(lang, 80, seed)))
    return root


LASER = dict(langs=["de", "fr"], second_target="fr", multi30k=False, vocab_size=30, embed_dim=8, hidden=8,
             dec_hidden=8, lang_dim=2, max_tokens=120, lr=5e-3, checkpoint_every=1000, log_every=1, dropout=0.2)


def meaning_data():
    from tests.meaning.test_meaning_trainer import _toy

    return _toy(n_per_lang=20, dim=8)


MEANING = dict(lr=3e-3, batch_size=8, patience=10, hidden=8)


def write_static_teacher(root: Path) -> None:
    """teacher/: the tiny BERT whose tokenizer a static run reads (its weights do not matter to
    init random), the relative path STATIC names."""
    from tests.training.conftest import make_tiny_model_dir

    make_tiny_model_dir(root / "teacher")


def static_pairs():
    """The training and dev pairs of the static run."""
    from tests.training.conftest import PAIRS
    from xlingua.data.general import Pair

    return [Pair("de", de, en, "toy") for en, de in PAIRS]


STATIC = dict(teacher="teacher", dim=8, min_count=1, init="random", batch_size=4, scale=10.0, lr=0.05, seed=5,
              dev_every=3)
