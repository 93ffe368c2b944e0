"""Joint SentencePiece vocabulary over the training text of all languages (no language id:
the encoder must not know the input language)."""
from __future__ import annotations

import os
import random
import tempfile
from pathlib import Path

import sentencepiece as spm

PAD, UNK, BOS, EOS = 0, 1, 2, 3


def train_vocab(texts_by_lang: dict[str, list[str]], out_prefix: str | os.PathLike, vocab_size: int = 8000,
                per_lang: int = 5000, seed: int = 0) -> Path:
    """Train on up to `per_lang` sentences of each language (equal shares, so that small
    languages keep their pieces); return the .model path."""
    rng = random.Random(seed)
    out_prefix = Path(out_prefix)
    out_prefix.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False, encoding="utf-8") as f:
        for lang in sorted(texts_by_lang):
            texts = texts_by_lang[lang]
            for t in rng.sample(texts, min(per_lang, len(texts))):
                f.write(t.replace("\n", " ") + "\n")
        sample = f.name
    try:
        spm.SentencePieceTrainer.train(
            input=sample, model_prefix=str(out_prefix), vocab_size=vocab_size, model_type="unigram",
            character_coverage=0.9995, pad_id=PAD, unk_id=UNK, bos_id=BOS, eos_id=EOS,
            input_sentence_size=2_000_000, shuffle_input_sentence=True, minloglevel=2, num_threads=2)
    finally:
        os.unlink(sample)
    return Path(f"{out_prefix}.model")


def load_vocab(path: str | os.PathLike) -> spm.SentencePieceProcessor:
    return spm.SentencePieceProcessor(model_file=str(path))
