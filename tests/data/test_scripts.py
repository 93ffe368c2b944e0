"""Script of a language (CLDR through langcodes) and share of a text in it."""
from __future__ import annotations

import pytest

from xlingua.data.scripts import lang_script, script_family, script_share

# The 100 languages of XLM-R's CC-100 (Conneau et al., 2020), which the bundled
# multilingual-e5 model was trained from, plus the scripts NTREX adds as tags.
XLMR = """af am ar as az be bg bn br bs ca cs cy da de el en eo es et eu fa fi fr fy ga gd gl gu
ha he hi hr hu hy id is it ja jv ka kk km kn ko ku ky la lo lt lv mg mk ml mn mr ms my ne nl no
om or pa pl ps pt ro ru sa sd si sk sl so sq sr su sv sw ta te th tl tr ug uk ur uz vi xh yi
zh""".split()


def test_every_embeddable_language_has_a_script():
    missing = [lang for lang in XLMR if lang_script(lang) is None]
    assert missing == []


@pytest.mark.parametrize("lang,script", [("hi", "Deva"), ("ja", "Jpan"), ("ko", "Kore"),
                                         ("zh", "Hans"), ("zh-Hant", "Hant"), ("sr-Latn", "Latn"),
                                         ("ks-Deva", "Deva"), ("eng", "Latn"), ("dv", "Thaa"),
                                         ("am", "Ethi"), ("iu", "Cans")])
def test_lang_script(lang, script):
    assert lang_script(lang) == script


def test_unknown_language_has_no_script():
    assert lang_script("xx") is None and lang_script("zzz") is None and lang_script("") is None


def test_script_share():
    assert script_share("Hello мир", "Cyrl") == pytest.approx(3 / 8)
    assert script_share("नमस्ते", "Deva") == 1.0          # vowel signs count as Devanagari
    assert script_share("日本語のテキスト", "Jpan") == 1.0   # kanji, hiragana, katakana
    assert script_share("한국어 漢字", "Kore") == 1.0
    assert script_share("café e\u0301", "Latn") == 1.0     # combining accents are inherited
    assert script_share("123 !?", "Latn") is None
    assert script_family("Deva") == "indic" and script_family(None) == "unknown"
