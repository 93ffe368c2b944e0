"""The general-corpus reader: dev slice held out by English sentence, malformed lines named."""
import gzip

import pytest

from xlingua.data.benchmarks import BenchmarkFormatError
from xlingua.data.general import DEV_SENTENCES, read_general
from xlingua.data.text import InputError


def write(path, lines):
    path.parent.mkdir(parents=True, exist_ok=True)
    with gzip.open(path, "wt", encoding="utf-8") as f:
        f.writelines(lines)


@pytest.fixture
def corpus(tmp_path):
    english = [f"English sentence number {i}." for i in range(300)]
    write(tmp_path / "ntrex" / "de-en.tsv.gz", [f"Deutscher Satz {i}.\t{e}\n" for i, e in enumerate(english)])
    write(tmp_path / "ntrex" / "fr-en.tsv.gz", [f"Phrase {i}.\t{e}\n" for i, e in enumerate(english)])
    # another source reusing some of the same English sentences
    write(tmp_path / "nllb-seed" / "fr-en.tsv.gz", [f"Autre {i}.\t{english[i]}\n" for i in range(0, 300, 3)])
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
    write(path, ["bon\tgood\n", "only one column\n"])
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
