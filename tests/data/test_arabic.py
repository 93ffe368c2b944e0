"""Harakat stripping: text without the marks comes back unchanged, a vocalised text loses exactly
its marks, and the training option adds a stripped copy of Arabic-script pairs only."""
import unicodedata

import pytest

from xlingua.data.arabic import strip_harakat, with_stripped_copies
from xlingua.data.examples import load_examples

PLAIN = ["كتاب جميل", "أإآؤئ ٱلله", "یہ ایک کتاب ہے۔", "ٲ ٳ ۆ ڤ ۀ", "plain Latin, 123", "", "۝١ ۞ ۩ ۥ ۦ"]


@pytest.mark.parametrize("text", PLAIN)
def test_text_without_harakat_is_unchanged(text):
    assert strip_harakat(text) == text


def test_a_vocalised_text_loses_exactly_its_marks():
    # the basmala: kasra, sukun, shadda, superscript alef, fatha; alef wasla (a letter) stays
    assert strip_harakat("بِسْمِ ٱللَّهِ ٱلرَّحْمَٰنِ ٱلرَّحِيمِ") == "بسم ٱلله ٱلرحمن ٱلرحيم"
    # tanwin, tatweel, a Quranic pause mark (small high three dots), Jawi's curly fatha
    assert strip_harakat("كِتَابٌ كـــبير ۛ فِيهِ") == "كتاب كبير  فيه"
    assert strip_harakat("ب\u08e4ا") == "با"
    # Kanuri Ajami: inverted damma and small high yeh are vowel signs
    assert strip_harakat("ك\u0657ر\u06e7") == "كر"


def test_hamza_and_maddah_marks_stay():
    # with a letter they spell another consonant: alef + hamza above is a decomposed أ
    for text in ["ا\u0654", "ا\u0655", "ا\u0653", "ر\u065f"]:
        assert strip_harakat(text) == text


def test_every_removed_character_is_a_combining_mark_or_tatweel():
    removed = [c for c in map(chr, range(0x0600, 0x0900)) if strip_harakat(c) == ""]
    assert {unicodedata.category(c) for c in removed if c != "\u0640"} == {"Mn"}
    assert "\u0640" in removed and len(removed) == 8 + 9 + 1 + 7 + 6 + 2 + 4 + 8 + 24 + 29 + 1


def test_copies_only_for_arabic_script_pairs_that_change():
    examples = [("كِتَابٌ", "a book", "ar"), ("كتاب", "a book", "ar"), ("Buch", "book", "de"),
                ("كِتَابٌ", "a book", "de"), ("بُك", "book", "xx"), ("بك", "book", "knc-Arab")]
    assert with_stripped_copies(examples) == [
        ("كِتَابٌ", "a book", "ar"), ("كتاب", "a book", "ar"),  # the copy, after its original
        ("كتاب", "a book", "ar"), ("Buch", "book", "de"),
        ("كِتَابٌ", "a book", "de"),  # German is not written in Arabic script
        ("بُك", "book", "xx"), ("بك", "book", "xx"),  # unknown code: the text's letters decide
        ("بك", "book", "knc-Arab")]
    with pytest.raises(ValueError, match="strip_harakat needs pairs tagged with their language"):
        with_stripped_copies([("كِتَابٌ", "a book")])


def test_training_option_on_a_data_spec(tmp_path, monkeypatch):
    monkeypatch.setenv("XLINGUA_SHARED", str(tmp_path / "shared"))  # no general corpus to hold out
    path = tmp_path / "ar.tsv"
    path.write_text("".join(f"كِتَابٌ {i}\tbook {i}\n" for i in range(10)) + "كتاب\tbook\n", encoding="utf-8")
    plain = load_examples({"type": "own_pairs", "path": str(path), "lang": "ar"})
    doubled = load_examples({"type": "own_pairs", "path": str(path), "lang": "ar", "strip_harakat": True})
    assert len(doubled) == 2 * len(plain) - sum(strip_harakat(e[0]) == e[0] for e in plain)
    assert [e for e in doubled if e in plain] == plain
    assert {e for e in doubled if e not in plain} == {(strip_harakat(e[0]), e[1], "ar") for e in plain} - set(plain)
    with pytest.raises(ValueError, match="strip_harakat needs pairs tagged"):
        load_examples({"type": "tsv", "path": str(path), "strip_harakat": True})
