"""Script of a language (CLDR through langcodes), share of a text in it, a text's main script,
and the check that a corpus is in its language's script."""
from __future__ import annotations

import pytest

from xlingua.data.scripts import check_script, lang_script, main_script, script_family, script_share

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


def test_main_script():
    assert main_script("Hello мир") == ("Latin", 5 / 8)
    assert main_script("委员会将于下周发布") == ("Han", 1.0)
    assert main_script("नमस्ते") == ("Devanagari", 1.0)  # vowel signs count, as in script_share
    assert main_script("123 !?") is None


ENGLISH = ["The committee will publish its report.", "See you next week."]


def test_check_script_names_the_expected_script():
    with pytest.raises(ValueError, match=r"en\.txt: only 0% of the letters are in the cjk script expected "
                                         r"for language 'zh'"):
        check_script(ENGLISH, "zh", "en.txt")
    with pytest.raises(ValueError, match=r"only 0% .* in the cyrillic/latin script"):
        check_script(["Γειά σου κόσμε"], "sr", "el.txt")
    with pytest.raises(ValueError, match=r"in the Hebr script"):  # a script of no family goes by its code
        check_script(ENGLISH, "he", "en.txt")
    with pytest.raises(ValueError, match=r"only 20% of the letters are in the latin script"):
        check_script(ENGLISH + ["Привет"] * 31, "en", "en.txt")      # 46 of 232: under a fifth


def test_check_script_passes():
    check_script(ENGLISH, "en", "en.txt")
    check_script(["Zdravo svete", "Здраво свете"], "sr", "sr.txt")   # Serbian in either script
    check_script(["委員会は来週発表する"], "ja", "ja.txt")            # kanji and kana
    check_script(ENGLISH + ["Привет"] * 30, "en", "en.txt")          # 46 of 226 letters: over a fifth
    check_script(["123", "!?"], "zh", "digits.txt")                   # no letters: nothing to judge
    check_script(ENGLISH, "yo", "en.txt")                             # not a checked language


def test_any_char_of_finds_any_character_of_the_scripts_digits_included():
    from xlingua.data.scripts import any_char_of

    arabic = any_char_of({"Arabic"})
    assert arabic.search("page ٣")  # an Arabic-Indic digit alone counts
    assert arabic.search("كتاب")
    assert not arabic.search("book 3, ⵣ")
    both = any_char_of(["Tifinagh", "Tibetan"])
    assert both.search("ⵣ") and both.search("ཀ") and not both.search("كتاب")


def test_languages_written_without_spaces_between_words():
    from xlingua.data.scripts import writes_spaces

    assert not writes_spaces("th") and not writes_spaces("zh-Hant") and not writes_spaces("ja")
    assert writes_spaces("de") and writes_spaces("ko") and writes_spaces("am")
    assert writes_spaces("dik")  # a language CLDR does not know: spaced, as the filters read it
