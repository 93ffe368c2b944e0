"""xlingua's own routes take the languages of a pair as src_lang and tgt_lang, as the commands
do; /align still reads its old names, lang_a and lang_b."""
from __future__ import annotations

from tests.serve.conftest import GateEncoder, request
from xlingua.serve import ServeConfig, create_app


class LangEncoder(GateEncoder):
    """Records the language each call is made with."""

    def __init__(self):
        super().__init__()
        self.langs: list[str | None] = []

    def encode(self, texts, lang=None, batch_size=None, show_progress=False):
        self.langs.append(lang)
        return super().encode(texts, lang)


A = "The red cat sleeps. The big dog barks!\nThe house is old."
B = ["Die rote Katze schläft.", "Der große Hund bellt! Das Haus ist alt."]


def _align(fields: dict):
    encoder = LangEncoder()
    r = request(create_app(encoder, ServeConfig("toy")), "POST", "/align", json={"a": A, "b": B, **fields})
    return r, sorted(set(encoder.langs), key=str)


def test_align_old_field_names_give_what_src_lang_and_tgt_lang_give():
    agreed, langs = _align({"src_lang": "en", "tgt_lang": "de"})
    old, old_langs = _align({"lang_a": "en", "lang_b": "de"})
    assert agreed.status_code == 200, agreed.text
    assert langs == old_langs == ["de", "en"]  # read, not ignored as unknown fields
    assert agreed.json() == old.json()
    none, none_langs = _align({})
    assert none.status_code == 200 and none_langs == [None]

