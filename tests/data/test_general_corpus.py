"""The general-corpus reader: dev slices (NTREX's, NLLB-Seed's, a user's own file's) held out of
training by English sentence in every language, malformed lines named."""
import gzip

import pytest

from xlingua.data.benchmarks import BenchmarkFormatError
from xlingua.data.general import (DEV_SENTENCES, SEED_DEV_SENTENCES, dev_english, read_general, read_own_pairs,
                                  seed_dev_english)
from xlingua.data.text import InputError
from tests.gz_files import write_gz


@pytest.fixture
def corpus(tmp_path):
    english = [f"English sentence number {i}." for i in range(300)]
    write_gz(tmp_path / "ntrex" / "de-en.tsv.gz", [f"Deutscher Satz {i}.\t{e}\n" for i, e in enumerate(english)])
    write_gz(tmp_path / "ntrex" / "fr-en.tsv.gz", [f"Phrase {i}.\t{e}\n" for i, e in enumerate(english)])
    # another source reusing some of the same English sentences
    write_gz(tmp_path / "nllb-seed" / "fr-en.tsv.gz", [f"Autre {i}.\t{english[i]}\n" for i in range(0, 300, 3)])
    return tmp_path


def test_dev_english_never_in_train(corpus):
    train = read_general(root=corpus)
    dev = read_general(split="dev", root=corpus)
    dev_en = {p.english for p in dev}
    assert len(dev_en) == DEV_SENTENCES
    assert {p.lang for p in dev} == {"de", "fr"}          # dev languages present in the toy
    assert not dev_en & {p.english for p in train}
    # everything not held out is in train: 300 de + 300 fr + 100 nllb pairs minus held-out ones
    held_nllb = sum(1 for i in range(0, 300, 3) if f"English sentence number {i}." in dev_en)
    assert len(train) == 2 * (300 - DEV_SENTENCES) + 100 - held_nllb
    assert {p.source for p in train} == {"ntrex", "nllb-seed"}


def test_language_and_source_selection_and_errors(corpus):
    assert {p.lang for p in read_general(["fr"], root=corpus)} == {"fr"}
    assert {p.source for p in read_general(sources=["nllb-seed"], root=corpus)} == {"nllb-seed"}
    with pytest.raises(ValueError, match="no general-corpus file for language"):
        read_general(["xx"], root=corpus)
    with pytest.raises(ValueError, match="unknown general-corpus source"):
        read_general(sources=["wiki"], root=corpus)


def test_malformed_line_names_file_and_line(corpus):
    path = corpus / "nllb-seed" / "fr-en.tsv.gz"
    write_gz(path, ["bon\tgood\n", "only one column\n"])
    with pytest.raises(BenchmarkFormatError, match=r"fr-en.tsv.gz:2: expected `non_english<TAB>english`"):
        read_general(root=corpus)
    with gzip.open(path, "wb") as f:
        f.write(b"bon\tgood\n\xff\xfe\tbad\n")
    with pytest.raises(InputError, match=r"fr-en.tsv.gz:2: invalid UTF-8 at byte 0 of the line$"):
        read_general(root=corpus)


@pytest.mark.shared
def test_real_corpus_dev_slice(shared):
    dev = read_general(["de", "sw"], split="dev")
    assert len(dev) == 2 * DEV_SENTENCES
    train_de = read_general(["de"], sources=["ntrex"])
    assert not {p.english for p in dev} & {p.english for p in train_de}


@pytest.fixture
def seed_corpus(corpus):
    """The toy corpus plus NLLB-Seed's reference file (bho) and a second NLLB-Seed language over
    the same 800 English sentences, one of them shared with NTREX."""
    english = [f"Seed sentence {i}." for i in range(799)] + ["English sentence number 7."]
    write_gz(corpus / "nllb-seed" / "bho-en.tsv.gz", [f"Bho {i}.\t{e}\n" for i, e in enumerate(english)])
    # dz lacks a few sentences (as real files do, after filtering) and repeats one translation
    write_gz(corpus / "nllb-seed" / "dz-en.tsv.gz",
             [f"Dz {i}.\t{e}\n" for i, e in enumerate(english) if i % 97] + [f"Dz again.\t{english[1]}\n"])
    return corpus


def test_seed_dev_slice_is_held_out_of_every_language(seed_corpus):
    held = seed_dev_english(seed_corpus)
    assert len(held) == SEED_DEV_SENTENCES
    dev = read_general(["dz", "bho", "de"], split="dev", root=seed_corpus)
    by_lang = {lang: [p for p in dev if p.lang == lang] for lang in ("dz", "bho", "de")}
    assert {p.source for p in by_lang["dz"]} == {"nllb-seed"} and {p.source for p in by_lang["de"]} == {"ntrex"}
    assert len(by_lang["bho"]) == SEED_DEV_SENTENCES and len(by_lang["de"]) == DEV_SENTENCES
    assert {p.english for p in by_lang["dz"]} <= held and len({p.english for p in by_lang["dz"]}) == len(by_lang["dz"])
    train = read_general(root=seed_corpus)  # every language and source, the other NLLB-Seed file included
    assert not {p.english for p in train} & (held | {p.english for p in dev})
    assert {p.lang for p in train} == {"de", "fr", "bho", "dz"}
    assert dev_english(seed_corpus) == held | {p.english for p in by_lang["de"]}


def test_dev_split_of_any_corpus_language_and_errors(seed_corpus):
    write_gz(seed_corpus / "ntrex" / "bo-en.tsv.gz", [f"Bo {i}.\tEnglish sentence number {i}.\n" for i in range(300)])
    bo = read_general(["bo"], split="dev", root=seed_corpus)  # not one of DEV_LANGS
    assert len(bo) == DEV_SENTENCES and {p.source for p in bo} == {"ntrex"}
    assert {p.lang for p in read_general(split="dev", root=seed_corpus)} == {"de"}  # DEV_LANGS present
    with pytest.raises(ValueError, match=r"no general-corpus dev slice for \['xx'\]"):
        read_general(["xx"], split="dev", root=seed_corpus)


def test_own_pair_file_holds_out_its_slice_everywhere(seed_corpus, tmp_path):
    own = tmp_path / "xx.tsv"
    # 100 pairs: 60 new English sentences, 40 the corpus's (NTREX and NLLB-Seed, held or not)
    english = [f"Own sentence {i}." for i in range(60)] + [f"English sentence number {i}." for i in range(20)] \
        + [f"Seed sentence {i}." for i in range(20)]
    own.write_text("".join(f"Xx {i}.\t{e}\n" for i, e in enumerate(english)), encoding="utf-8")
    dev = read_own_pairs(own, "xx", "dev", root=seed_corpus)
    train = read_own_pairs(own, "xx", "train", root=seed_corpus)
    assert len(dev) == 20 and {p.lang for p in dev} == {"xx"}  # a fifth of the file's English sentences
    assert not {p.english for p in dev} & {p.english for p in train}
    assert not {p.english for p in train} & dev_english(seed_corpus)  # the corpus's held sentences too
    assert len(dev) + len(train) + len(dev_english(seed_corpus) & set(english) - {p.english for p in dev}) == 100
    general = read_general(root=seed_corpus, pair_files={"xx": own})
    assert not {p.english for p in general} & {p.english for p in dev}
    assert read_own_pairs(own, "xx", "dev", root=seed_corpus) == dev  # seeded: the same slice every time


def test_own_pair_file_bad_line_names_file_and_line(tmp_path):
    own = tmp_path / "xx.tsv"
    own.write_text("a\tb\nno tab here\n", encoding="utf-8")
    with pytest.raises(BenchmarkFormatError, match=r"xx.tsv:2: expected `non_english<TAB>english`"):
        read_own_pairs(own, "xx", "dev")


@pytest.mark.shared
def test_real_seed_dev_slice_never_in_training(shared):
    groups = ["dz", "bo", "taq-Tfng", "zgh", "ace-Arab", "bjn-Arab", "knc-Arab"]
    dev = read_general(groups, split="dev")
    counts = {lang: sum(p.lang == lang for p in dev) for lang in groups}
    assert counts["bo"] == DEV_SENTENCES  # Tibetan has NTREX only
    assert all(SEED_DEV_SENTENCES - 5 <= counts[l] <= SEED_DEV_SENTENCES for l in groups if l != "bo")
    held = {p.english for p in dev}
    assert len(seed_dev_english()) == SEED_DEV_SENTENCES
    train = read_general(sources=["nllb-seed"]) + read_general(["dz", "bo"], sources=["ntrex"])
    assert len({p.lang for p in train}) == 41  # 39 NLLB-Seed files and NTREX's dz and bo
    assert not held & {p.english for p in train}
