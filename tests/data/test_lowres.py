"""The low-resource corpus reader: the pivot from the file name, misnamed files and malformed lines
refused with file (and line), dev slices held out of training in every language, stable when
languages are added, each source of a language in its slice; and the real corpus against its
manifest."""
import json

import pytest

from xlingua.data.benchmarks import BenchmarkFormatError
from xlingua.data.examples import load_examples
from xlingua.data.lowres import (DEV_PAIRS, DEV_SHARE, dev_slice, parse_name, quotas, read_corpus, read_file,
                                 read_lowres)
from xlingua.data.text import InputError
from tests.gz_files import write_gz


def verses(n, lang):
    """n Bible pairs whose English side every Bible language shares."""
    return [f"{lang} verse {i}\tEnglish verse {i}\n" for i in range(n)]


@pytest.fixture
def corpus(tmp_path):
    """ee: 200 Bible verses (en) and 100 news pairs (fr); kab: 150 of the same verses; mni-Latn:
    120 eBible pairs; bm: 100 news pairs (fr)."""
    root = tmp_path / "shared" / "corpora" / "lowres"
    write_gz(root / "bible" / "ee-en.tsv.gz", verses(200, "ee"))
    write_gz(root / "mafand" / "ee-fr.tsv.gz", [f"ee nyati {i}\tPhrase {i}\n" for i in range(100)])
    write_gz(root / "bible" / "kab-en.tsv.gz", verses(150, "kab"))
    write_gz(root / "ebible" / "mni-Latn-en.tsv.gz", [f"mni wahei {i}\tMeitei verse {i}\n" for i in range(120)])
    write_gz(root / "mafand" / "bm-fr.tsv.gz", [f"bm kuma {i}\tNouvelle {i}\n" for i in range(100)])
    return root


def test_pivot_and_language_come_from_the_file_name(corpus):
    assert parse_name("x/mni-Latn-en.tsv.gz") == ("mni-Latn", "en")
    assert parse_name("ee-fr.tsv.gz") == ("ee", "fr")
    pairs = read_file(corpus / "mafand" / "ee-fr.tsv.gz", "mafand")
    assert (pairs[0].lang, pairs[0].text, pairs[0].pivot, pairs[0].pivot_lang) == ("ee", "ee nyati 0", "Phrase 0", "fr")
    langs = read_corpus(corpus)
    assert list(langs) == ["bm", "ee", "kab", "mni-Latn"]
    assert {(p.source, p.pivot_lang) for p in langs["ee"]} == {("bible", "en"), ("mafand", "fr")}
    assert {p.domain for p in langs["ee"]} == {"bible", "non-bible"}
    assert {p.pivot_lang for p in langs["mni-Latn"]} == {"en"}


def test_both_sides_are_read_composed(corpus):
    # Kabyle "Ibṛahim" with r + combining dot below, French "élu" with e + combining acute
    path = corpus / "bible" / "kab-fr.tsv.gz"
    write_gz(path, ["Ibr\u0323ahim\te\u0301lu\n", "Ibṛahim\télu\n"])
    first, second = read_file(path, "bible")
    assert first.text == second.text == "Ibṛahim" and len(first.text) == 7
    assert first.pivot == second.pivot == "élu" and len(first.pivot) == 3


@pytest.mark.parametrize("name", ["ee_en.tsv.gz", "ee-de.tsv.gz", "eng.tsv.gz", "ee-en.tsv", "EE-en.tsv.gz",
                                  "mni-latn-en.tsv.gz", "ee-en-fr.tsv.gz"])
def test_a_misnamed_file_is_refused_naming_it(corpus, name):
    bad = corpus / "bible" / name
    write_gz(bad, verses(3, "ee"))
    with pytest.raises(InputError, match=rf"^{bad}: file name is not <code>-<pivot>.tsv.gz") as e:
        read_lowres(root=corpus)
    assert "\n" not in str(e.value)


@pytest.mark.parametrize("line", ["no tab here", "a\tb\tc", "\tpivot only", "text only\t", "   \tx"])
def test_a_bad_line_is_refused_naming_file_and_line(corpus, line):
    path = corpus / "mafand" / "ee-fr.tsv.gz"
    write_gz(path, ["bon\tbien\n", line + "\n"])
    with pytest.raises(BenchmarkFormatError, match=rf"^{path}:2: expected `non_pivot<TAB>pivot`, got ") as e:
        read_lowres(split="dev", root=corpus)
    assert "\n" not in str(e.value)


def test_an_unknown_source_folder_or_language_is_refused(corpus):
    with pytest.raises(ValueError, match="no low-resource corpus file for language"):
        read_lowres(["xx"], root=corpus)
    with pytest.raises(ValueError, match="unknown low-resource source"):
        read_lowres(sources=["wiki"], root=corpus)
    write_gz(corpus / "wiki" / "ee-en.tsv.gz", verses(3, "ee"))
    with pytest.raises(ValueError, match=r"unknown source folder\(s\) \['wiki'\]"):
        read_lowres(root=corpus)


def test_dev_slice_sizes_and_sources():
    # the rule: min(500, a tenth); each source in proportion, at least one pair
    assert quotas({"bible": 7904, "mafand": 3262}, 500) == {"bible": 354, "mafand": 146}
    assert quotas({"mafand": 5473, "salt": 498}, 500) == {"mafand": 458, "salt": 42}
    assert quotas({"a": 1000, "b": 1}, 10) == {"a": 9, "b": 1}
    assert (DEV_PAIRS, DEV_SHARE) == (500, 10)


def test_dev_slice_never_in_training(corpus):
    dev, train = read_lowres(split="dev", root=corpus), read_lowres(root=corpus)
    sizes = {lang: sum(p.lang == lang for p in dev) for lang in ("ee", "kab", "mni-Latn", "bm")}
    assert sizes == {"ee": 30, "kab": 15, "mni-Latn": 12, "bm": 10}  # a tenth of 300, 150, 120, 100
    # ee has Bible and news: both in its slice, 2:1 as its pairs
    assert {s: sum(p.lang == "ee" and p.source == s for p in dev) for s in ("bible", "mafand")} == {"bible": 20,
                                                                                                "mafand": 10}
    assert not set(dev) & set(train)
    # no pivot sentence of any slice trains in any language: kab shares ee's English verses
    held = {(p.pivot_lang, p.pivot) for p in dev}
    assert not held & {(p.pivot_lang, p.pivot) for p in train}
    kab_lost = 150 - sum(p.lang == "kab" for p in train)
    assert 15 <= kab_lost <= 15 + 20  # its own slice and the verses only ee holds
    # the verses come in one order for every language: of the verses both have, the two slices nest
    ee_verses = {p.pivot for p in dev if p.lang == "ee" and p.source == "bible" and int(p.pivot.split()[-1]) < 150}
    kab_verses = {p.pivot for p in dev if p.lang == "kab"}
    assert ee_verses <= kab_verses or kab_verses <= ee_verses
    # everything else trains
    assert train == [p for ps in read_corpus(corpus).values() for p in ps if (p.pivot_lang, p.pivot) not in held]
    assert {p.source for p in read_lowres(sources=["bible"], root=corpus)} == {"bible"}


def test_dev_slices_are_stable_when_languages_are_added(corpus):
    before = read_lowres(split="dev", root=corpus)
    alone = read_lowres(["ee"], split="dev", root=corpus)
    write_gz(corpus / "bible" / "wo-en.tsv.gz", verses(180, "wo"))
    write_gz(corpus / "mafand" / "wo-fr.tsv.gz", [f"wo xibaar {i}\tPhrase {i}\n" for i in range(50)])
    write_gz(corpus / "globalvoices" / "ay-en.tsv.gz", [f"ay {i}\tNews {i}\n" for i in range(400)])
    after = read_lowres(split="dev", root=corpus)
    assert [p for p in after if p.lang not in ("wo", "ay")] == before
    assert read_lowres(["ee"], split="dev", root=corpus) == alone
    assert dev_slice(read_corpus(corpus)["ee"]) == alone


def test_training_spec_reads_the_train_split(corpus, monkeypatch):
    monkeypatch.setenv("XLINGUA_SHARED", str(corpus.parent.parent))
    examples = load_examples({"type": "lowres", "langs": ["ee", "bm"], "limit": 50})
    assert {e[2] for e in examples} == {"ee", "bm"} and len(examples) == 100
    assert ("ee nyati 1", "Phrase 1", "ee") in examples or ("ee verse 0", "English verse 0", "ee") in examples
    dev = {(p.text, p.pivot) for p in read_lowres(split="dev", root=corpus)}
    everything = load_examples({"type": "lowres"})
    assert len(everything) == len(read_lowres(root=corpus)) and not dev & {e[:2] for e in everything}
    with pytest.raises(ValueError, match=r"data type 'lowres': unknown key\(s\) \['pair_files'\]"):
        load_examples({"type": "lowres", "pair_files": {}})


@pytest.mark.shared
def test_real_corpus_matches_its_manifest(lowres_corpus):
    root = lowres_corpus
    manifest = json.loads((root / "manifest.json").read_text(encoding="utf-8"))
    corpus = read_corpus(root)
    assert sorted(corpus) == sorted(manifest["targets"]) and len(corpus) == 17
    counts = {}
    for pairs in corpus.values():
        for p in pairs:
            key = f"{p.source}/{p.lang}-{p.pivot_lang}.tsv.gz"
            counts[key] = counts.get(key, 0) + 1
    assert counts == {f: v["pairs"] for f, v in manifest["files"].items()}
    assert sum(counts.values()) == manifest["total_pairs"] == 126297
    pivots = {lang: sorted({p.pivot_lang for p in ps}) for lang, ps in corpus.items()}
    assert {l for l, p in pivots.items() if p == ["fr"]} == {"bm", "fon", "mos"}
    assert pivots["ee"] == pivots["wo"] == ["en", "fr"]
    assert all(p == ["en"] for l, p in pivots.items() if l not in ("bm", "fon", "mos", "ee", "wo"))
    dev, train = read_lowres(split="dev", root=root), read_lowres(root=root)
    sizes = {lang: sum(p.lang == lang for p in dev) for lang in corpus}
    assert sizes == {lang: min(DEV_PAIRS, len(ps) // DEV_SHARE) for lang, ps in corpus.items()}
    assert {p.domain for p in dev if p.lang in ("ee", "wo")} == {"bible", "non-bible"}
    assert {p.source for p in dev if p.lang == "lg"} == {"mafand", "salt"}
    assert not {(p.pivot_lang, p.pivot) for p in dev} & {(p.pivot_lang, p.pivot) for p in train}


def test_training_spec_keeps_the_pivot_of_the_file_and_takes_strip_harakat(corpus, monkeypatch):
    from xlingua.data.arabic import strip_harakat

    monkeypatch.setenv("XLINGUA_SHARED", str(corpus.parent.parent))
    bm = load_examples({"type": "lowres", "langs": ["bm"]})
    assert bm and all(e[1].startswith("Nouvelle ") for e in bm)  # bm-fr.tsv.gz: the French side
    write_gz(corpus / "bible" / "ku-Arab-en.tsv.gz", [f"كِتَابٌ {i}\tbook {i}\n" for i in range(30)])
    plain = load_examples({"type": "lowres", "langs": ["ku-Arab"]})
    doubled = load_examples({"type": "lowres", "langs": ["ku-Arab"], "strip_harakat": True, "limit": 5})
    assert len(plain) == 27  # a tenth held out
    assert doubled == [e for p in plain[:5] for e in (p, (strip_harakat(p[0]), *p[1:]))]
