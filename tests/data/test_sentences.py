"""Sentence splitting: one paragraph per script family, with its known sentences; training's
ordered text is split by the same rules."""
from __future__ import annotations

import pytest

from xlingua.data.examples import read_ordered_text
from xlingua.data.sentences import split_sentences

PARAGRAPHS = {
    "en": ["Dr. Smith went to Washington on Jan. 5th.", 'He said "it was fine."', "Then he left!"],
    "de": ["Am Montag war Feiertag.", "Die Geschäfte z. B. in Berlin blieben zu."],
    "ru": ["Москва — столица России.", "Её население превышает 12 млн человек."],
    "ar": ["ذهب الولد إلى المدرسة.", "هل عاد إلى البيت؟"],
    "hi": ["भारत एक विशाल देश है।", "यहाँ कई भाषाएँ बोली जाती हैं।"],
    "am": ["ኢትዮጵያ በአፍሪካ ቀንድ ትገኛለች።", "ዋና ከተማዋ አዲስ አበባ ናት።"],
    "my": ["မြန်မာနိုင်ငံသည် အာရှတွင် ရှိသည်။", "ရန်ကုန်သည် မြို့ကြီး ဖြစ်သည်။"],
    "km": ["ភ្នំពេញជារាជធានីនៃកម្ពុជា។", "ទន្លេមេគង្គហូរកាត់ប្រទេសនេះ។"],
    "hy": ["Երևանը Հայաստանի մայրաքաղաքն է:", "Այն շատ հին քաղաք է:"],
    "el": ["Η Αθήνα είναι η πρωτεύουσα.", "Έχει πολλά μνημεία."],
}


@pytest.mark.parametrize("lang", sorted(PARAGRAPHS))
def test_paragraph_per_script_family(lang):
    sentences = PARAGRAPHS[lang]
    assert split_sentences(" ".join(sentences), lang) == sentences


def test_cjk_without_spaces_keeps_closing_quote():
    assert split_sentences("今天天气很好。他说：“我们走吧。”然后走了！", "zh") == [
        "今天天气很好。", "他说：“我们走吧。”", "然后走了！"]
    assert split_sentences("東京は日本の首都です。人口は多いです。", "ja") == [
        "東京は日本の首都です。", "人口は多いです。"]


def test_armenian_colon_only_for_armenian():
    assert split_sentences("Note: this is one sentence.", "en") == ["Note: this is one sentence."]


def test_line_breaks_end_sentences_and_whitespace_collapses():
    assert split_sentences("a heading\n\n  First   one. Second one.\r\nlast", "en") == [
        "a heading", "First one.", "Second one.", "last"]
    assert split_sentences("", "en") == [] and split_sentences(" \n\t", "en") == []


def test_no_character_lost_or_added():
    text = "Ünïcödé — quotes «like this». And 12.5 % of 3.000 € (approx.)? Yes! 終わり。"
    out = split_sentences(text, "fr")
    assert "".join(out).replace(" ", "") == text.replace(" ", "")


def test_ordered_text_pairs_are_split_sentences_of_a_paragraph(tmp_path):
    text = tmp_path / "t.txt"
    text.write_text("One. Two? Three!\n\nFour. Five.\n\nDr. Smith came home\nat 5 p.m. today. He slept.\n")
    assert read_ordered_text([text]) == [("One.", "Two?"), ("Two?", "Three!"), ("Four.", "Five."),
                                         ("Dr. Smith came home at 5 p.m. today.", "He slept.")]
