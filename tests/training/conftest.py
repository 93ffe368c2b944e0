"""A tiny BERT (2 layers unless asked, hidden 32, ~100-word vocab) saved to disk, for trainer tests."""
from __future__ import annotations

import pytest

WORDS = ("the a cat dog house car red blue green small big is on in and of to runs eats sleeps "
         "der die das katze hund haus auto rot blau grün klein groß ist auf und von zu läuft "
         "le la chat chien maison voiture rouge bleu vert petit grand est sur et de").split()


def make_tiny_model_dir(path, seed: int = 0, layers: int = 2):
    import torch
    from transformers import BertConfig, BertModel, BertTokenizerFast

    path.mkdir(parents=True, exist_ok=True)
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", ".", ",", ":", "!", "?"] + list("abcdefghijklmnopqrstuvwxyzäöüß")
    vocab += ["##" + c for c in "abcdefghijklmnopqrstuvwxyzäöüß"] + WORDS
    tok = BertTokenizerFast(vocab={w: i for i, w in enumerate(dict.fromkeys(vocab))}, do_lower_case=True)
    torch.manual_seed(seed)
    cfg = BertConfig(vocab_size=len(tok), hidden_size=32, num_hidden_layers=layers, num_attention_heads=2,
                     intermediate_size=64, max_position_embeddings=64, hidden_dropout_prob=0.1)
    BertModel(cfg).save_pretrained(path)
    tok.save_pretrained(path)
    return path


@pytest.fixture(scope="session")
def tiny_model_dir(tmp_path_factory):
    return make_tiny_model_dir(tmp_path_factory.mktemp("tiny_bert"))


PAIRS = [
    ("the red cat", "die rote katze"), ("the big dog", "der große hund"), ("a small house", "ein kleines haus"),
    ("the blue car", "das blaue auto"), ("the cat runs", "die katze läuft"), ("the dog eats", "der hund isst"),
    ("a green house", "ein grünes haus"), ("the car is red", "das auto ist rot"), ("the cat sleeps", "die katze schläft"),
    ("a dog and a cat", "ein hund und eine katze"), ("the house is big", "das haus ist groß"), ("the small car", "das kleine auto"),
    ("the dog runs to the house", "der hund läuft zu dem haus"), ("red and blue", "rot und blau"),
    ("the cat is on the car", "die katze ist auf dem auto"), ("a big red dog", "ein großer roter hund"),
]


@pytest.fixture(scope="session")
def pairs_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("pairs") / "pairs.tsv"
    path.write_text("".join(f"{a}\t{b}\n" for a, b in PAIRS))
    return path


@pytest.fixture(scope="session")
def xnli_dir(tmp_path_factory):
    """A fake XNLI layout with 6 aligned items in en and de."""
    root = tmp_path_factory.mktemp("bench")
    (root / "xnli").mkdir()
    labels = ["entailment", "neutral", "contradiction"] * 2
    for lang, rows in (("en", PAIRS[:6]), ("de", [(b, a) for a, b in PAIRS[:6]])):
        (root / "xnli" / f"dev-{lang}.tsv").write_text("".join(f"{p}\t{h}\t{l}\n" for (p, h), l in zip(rows, labels)))
    return root
