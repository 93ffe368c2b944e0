"""Short spans of the general corpus's training sentences: words where the language spaces its
words, characters where it does not, never a held-out dev sentence, the same spans for the same seed."""
import unicodedata

import numpy as np
import pytest

from xlingua.data.examples import load_examples
from xlingua.data.fragments import general_fragments, span
from xlingua.data.general import read_general
from tests.gz_files import write_gz


def test_span_of_words_is_a_contiguous_run_within_the_bounds():
    text = "one two three four five six seven eight nine ten eleven twelve"
    rng = np.random.default_rng(0)
    for _ in range(200):
        s = span(text, rng, (3, 5))
        assert 3 <= len(s.split()) <= 5
        assert f" {s} " in f" {text} "


def test_span_of_unspaced_text_counts_characters():
    text = "我们明天早上八点在火车站见面然后一起去博物馆参观新的展览"
    rng = np.random.default_rng(1)
    for _ in range(100):
        s = span(text, rng, (2, 4), spaced=False)
        assert 4 <= len(s) <= 8 and s in text


def test_a_character_span_keeps_combining_marks_with_their_letter():
    text = "เขาไปโรงเรียนทุกวันเพื่อเรียนหนังสือกับเพื่อนๆที่น่ารัก"  # Thai: vowels and tones are marks
    rng = np.random.default_rng(2)
    for _ in range(200):
        s = span(text, rng, (2, 3), spaced=False)
        assert s in text and not unicodedata.category(s[0]).startswith("M")
        end = text.index(s) + len(s)
        assert end == len(text) or not unicodedata.category(text[end]).startswith("M")


def test_short_text_is_kept_whole_and_separators_trimmed():
    rng = np.random.default_rng(0)
    assert span("  Good morning.  ", rng, (3, 10)) == "Good morning."
    # a one-word span of "a, b" is "a" or "b": the comma after "a" is trimmed
    assert span("a, b", np.random.default_rng(0), (1, 1)) in ("a", "b")
    with pytest.raises(ValueError, match="min <= max"):
        span("x y z", rng, (4, 2))


def english_sentence(i: int) -> str:  # every word names its sentence
    return " ".join(f"e{i}w{j}" for j in range(8))


@pytest.fixture
def corpus(tmp_path):
    english = [english_sentence(i) for i in range(300)]
    write_gz(tmp_path / "ntrex" / "de-en.tsv.gz",
             [" ".join(f"d{i}w{j}" for j in range(8)) + f"\t{e}\n" for i, e in enumerate(english)])
    write_gz(tmp_path / "ntrex" / "zh-en.tsv.gz", [f"这是小语料库中的 第{i}个中文句子\t{e}\n" for i, e in enumerate(english)])
    return tmp_path


def test_fragments_per_language_from_train_sentences_only(corpus):
    out = general_fragments(limit=40, words=(3, 4), root=corpus)
    by_lang = {}
    for a, b, lang in out:
        assert a == b
        by_lang.setdefault(lang, []).append(a)
    assert sorted(by_lang) == ["de", "en", "zh"] and all(len(v) <= 40 for v in by_lang.values())
    assert len(by_lang["en"]) == 40  # English counted once, not once per language
    train = read_general(root=corpus)
    trained = {p.english.split()[0].split("w")[0] for p in train}
    assert len(trained) < 300  # the toy has a dev slice
    for s in by_lang["en"]:  # a span comes from a sentence that trains
        assert {w.split("w")[0] for w in s.split()} <= trained
    # Chinese is cut in characters because of its language, though these lines carry a space
    # (6 to 8 characters, one fewer where the space at an edge is trimmed)
    assert all(5 <= len(s) <= 8 for s in by_lang["zh"])


def test_fragments_data_spec_is_seeded(corpus, monkeypatch):
    spec = {"type": "fragments", "langs": ["de"], "words": [3, 3], "limit": 10}
    from xlingua.data import general

    monkeypatch.setattr(general, "general_root", lambda root=None: corpus)
    one, again, other = load_examples(spec, seed=0), load_examples(spec, seed=0), load_examples(spec, seed=1)
    assert one == again and one != other
    assert {lang for *_, lang in one} == {"de", "en"} and all(len(a.split()) == 3 for a, _, _ in one)
    zh = load_examples({**spec, "langs": ["zh"]}, seed=0)
    both = load_examples({**spec, "langs": ["de", "zh"]}, seed=0)
    assert [e for e in both if e[2] == "zh"] == [e for e in zh if e[2] == "zh"]  # de does not move zh's spans
    with pytest.raises(ValueError, match="unknown key"):
        load_examples({"type": "fragments", "size": 3})
